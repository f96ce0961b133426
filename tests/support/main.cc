#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <signal.h>

// A write to a connection the other side reset (OpenSSL's socket writes have no MSG_NOSIGNAL)
// must fail the test that made it, not kill the whole run.
[[maybe_unused]] static const bool kSigpipeIgnored = [] { return ::signal(SIGPIPE, SIG_IGN) != SIG_ERR; }();
