#pragma once
// systemd's notification protocol (sd_notify) without libsystemd: a datagram to
// $NOTIFY_SOCKET. Outside systemd (no NOTIFY_SOCKET) every call does nothing.

#include <chrono>
#include <string>

namespace sluice {

// "READY=1", "STOPPING=1", "WATCHDOG=1", "STATUS=..."; false if it could not be sent.
bool notify_systemd(const std::string& message);

// WatchdogSec= of the unit (from $WATCHDOG_USEC), or zero when there is no watchdog.
std::chrono::milliseconds systemd_watchdog_interval();

}  // namespace sluice
