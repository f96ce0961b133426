#pragma once
// Every metric the agent exports, in one place: sluice_<area>_<noun>_<unit>[_total], base
// units, bounded labels (component name, port, a reason from a fixed set).

namespace sluice::metric_names {

inline constexpr const char* kSourceEventsReceived = "sluice_source_events_received_total";
inline constexpr const char* kSourceBytesReceived = "sluice_source_bytes_received_total";
inline constexpr const char* kSourceConnections = "sluice_source_connections";
inline constexpr const char* kSourceConnectionsAccepted = "sluice_source_connections_accepted_total";
inline constexpr const char* kSourceConnectionsRefused = "sluice_source_connections_refused_total";
inline constexpr const char* kSourceFramesInvalid = "sluice_source_frames_invalid_total";
inline constexpr const char* kSourceFramesTruncated = "sluice_source_frames_truncated_total";
inline constexpr const char* kSourceFramesCut = "sluice_source_frames_cut_total";
inline constexpr const char* kSourceBlankLines = "sluice_source_blank_lines_total";
inline constexpr const char* kSourceFramesOctetCounted = "sluice_source_frames_octet_counted_total";
inline constexpr const char* kSourceEventsInvalidUtf8 = "sluice_source_events_invalid_utf8_total";
inline constexpr const char* kSourceConnectionsIdleClosed = "sluice_source_connections_idle_closed_total";
inline constexpr const char* kSourceAcceptErrors = "sluice_source_accept_errors_total";
inline constexpr const char* kSourceReadErrors = "sluice_source_read_errors_total";
inline constexpr const char* kSourceDroppedAtShutdown = "sluice_source_events_dropped_at_shutdown_total";
inline constexpr const char* kSourceUnreadAtShutdown = "sluice_source_bytes_unread_at_shutdown_total";

inline constexpr const char* kChannelEvents = "sluice_channel_events";
inline constexpr const char* kChannelBytes = "sluice_channel_bytes";
inline constexpr const char* kChannelCapacity = "sluice_channel_capacity_events";
inline constexpr const char* kChannelPut = "sluice_channel_events_put_total";
inline constexpr const char* kChannelTaken = "sluice_channel_events_taken_total";
inline constexpr const char* kChannelCommitted = "sluice_channel_events_committed_total";
inline constexpr const char* kChannelRolledBack = "sluice_channel_events_rolled_back_total";
inline constexpr const char* kChannelPutBlocked = "sluice_channel_put_blocked_seconds_total";
inline constexpr const char* kChannelDiskEvents = "sluice_channel_disk_events";
inline constexpr const char* kChannelDiskBytes = "sluice_channel_disk_bytes";
inline constexpr const char* kChannelSpilled = "sluice_channel_events_spilled_total";
inline constexpr const char* kChannelRecovered = "sluice_channel_events_recovered_total";
inline constexpr const char* kChannelCorruptTails = "sluice_channel_corrupt_tails_total";
inline constexpr const char* kChannelUnreadable = "sluice_channel_events_unreadable_total";
inline constexpr const char* kChannelDiskWriteErrors = "sluice_channel_disk_write_errors_total";

inline constexpr const char* kSinkEventsTaken = "sluice_sink_events_taken_total";
inline constexpr const char* kSinkEventsSent = "sluice_sink_events_sent_total";
inline constexpr const char* kSinkDeliveryErrors = "sluice_sink_delivery_errors_total";
inline constexpr const char* kSinkEventsDiscarded = "sluice_sink_events_discarded_total";
inline constexpr const char* kSinkEventsRolledBack = "sluice_sink_events_rolled_back_total";
inline constexpr const char* kSinkLostAfterHandover = "sluice_sink_events_lost_total";
inline constexpr const char* kSinkPossiblyDuplicated = "sluice_sink_events_possibly_duplicated_total";
inline constexpr const char* kSinkProducerRestarts = "sluice_sink_producer_restarts_total";
inline constexpr const char* kSinkBatchSeconds = "sluice_sink_batch_seconds";
inline constexpr const char* kSinkKafkaQueue = "sluice_sink_kafka_queue_messages";
inline constexpr const char* kKafkaBrokerUp = "sluice_kafka_broker_up";
inline constexpr const char* kKafkaBrokerRttAvg = "sluice_kafka_broker_rtt_avg_seconds";
inline constexpr const char* kKafkaBrokerRttP99 = "sluice_kafka_broker_rtt_p99_seconds";
inline constexpr const char* kKafkaClientErrors = "sluice_kafka_client_errors_total";

}  // namespace sluice::metric_names
