#pragma once
// The metrics the agent writes for every channel and sink, from the counters all of them
// keep (ChannelCounters, SinkCounters). A component's own families are declared in its probe.
// Names: sluice_<area>_<noun>_<unit>[_total], base units, bounded labels.

namespace sluice::metric_names {

inline constexpr const char* kChannelEvents = "sluice_channel_events";
inline constexpr const char* kChannelBytes = "sluice_channel_bytes";
inline constexpr const char* kChannelCapacity = "sluice_channel_capacity_events";
inline constexpr const char* kChannelPut = "sluice_channel_events_put_total";
inline constexpr const char* kChannelTaken = "sluice_channel_events_taken_total";
inline constexpr const char* kChannelCommitted = "sluice_channel_events_committed_total";
inline constexpr const char* kChannelRolledBack = "sluice_channel_events_rolled_back_total";
inline constexpr const char* kChannelPutBlocked = "sluice_channel_put_blocked_seconds_total";

inline constexpr const char* kSinkEventsTaken = "sluice_sink_events_taken_total";
inline constexpr const char* kSinkEventsSent = "sluice_sink_events_sent_total";
inline constexpr const char* kSinkEventsDiscarded = "sluice_sink_events_discarded_total";
inline constexpr const char* kSinkEventsRolledBack = "sluice_sink_events_rolled_back_total";
inline constexpr const char* kSinkLostAfterHandover = "sluice_sink_events_lost_total";
inline constexpr const char* kSinkPossiblyDuplicated = "sluice_sink_events_possibly_duplicated_total";
inline constexpr const char* kSinkBatchSeconds = "sluice_sink_batch_seconds";
inline constexpr const char* kPipelineLatency = "sluice_pipeline_latency_seconds";
inline constexpr const char* kPipelineChannelWait = "sluice_pipeline_channel_wait_seconds";
inline constexpr const char* kPipelineDelivery = "sluice_pipeline_delivery_seconds";

}  // namespace sluice::metric_names
