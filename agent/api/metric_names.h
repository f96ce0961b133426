#pragma once
// Every metric family the agent exports, named once: the probes write them, `sluice top` and
// the Grafana dashboard read them, and a test checks that a running agent exports exactly the
// families this list promises for the components it runs (tests/conf/dashboard_test.cc).
// Names: sluice_<area>_<noun>_<unit>[_total], base units, bounded labels.

#include <array>
#include <string_view>

namespace sluice::metric_names {

// The agent itself.
inline constexpr const char* kConfigReloadsTotal = "sluice_config_reloads_total";
inline constexpr const char* kConfigLastReloadSuccessful = "sluice_config_last_reload_successful";
inline constexpr const char* kConfigLastReloadSuccessTimestampSeconds =
    "sluice_config_last_reload_success_timestamp_seconds";
inline constexpr const char* kAgentMemoryBoundBytes = "sluice_agent_memory_bound_bytes";
inline constexpr const char* kProcessResidentMemoryBytes = "process_resident_memory_bytes";

// Every syslog source (TCP, TLS, RELP, UDP), per port where labelled so.
inline constexpr const char* kSourceEventsReceivedTotal = "sluice_source_events_received_total";
inline constexpr const char* kSourceBytesReceivedTotal = "sluice_source_bytes_received_total";
inline constexpr const char* kSourceFramesInvalidTotal = "sluice_source_frames_invalid_total";
inline constexpr const char* kSourceFramesTruncatedTotal = "sluice_source_frames_truncated_total";
inline constexpr const char* kSourceEventsInvalidUtf8Total = "sluice_source_events_invalid_utf8_total";
inline constexpr const char* kSourceBlankLinesTotal = "sluice_source_blank_lines_total";
inline constexpr const char* kSourceReadErrorsTotal = "sluice_source_read_errors_total";
inline constexpr const char* kSourceEventsDroppedAtShutdownTotal = "sluice_source_events_dropped_at_shutdown_total";
inline constexpr const char* kSourceEventsFilteredTotal = "sluice_source_events_filtered_total";
inline constexpr const char* kSourceOptionalCopiesDroppedTotal = "sluice_source_optional_copies_dropped_total";
inline constexpr const char* kSourceEventsUnroutedTotal = "sluice_source_events_unrouted_total";

// The stream sources (TCP, TLS, RELP).
inline constexpr const char* kSourceFramesCutTotal = "sluice_source_frames_cut_total";
inline constexpr const char* kSourceFramesOctetCountedTotal = "sluice_source_frames_octet_counted_total";
inline constexpr const char* kSourceConnections = "sluice_source_connections";
inline constexpr const char* kSourceConnectionsAcceptedTotal = "sluice_source_connections_accepted_total";
inline constexpr const char* kSourceConnectionsRefusedTotal = "sluice_source_connections_refused_total";
inline constexpr const char* kSourceConnectionsIdleClosedTotal = "sluice_source_connections_idle_closed_total";
inline constexpr const char* kSourceAcceptErrorsTotal = "sluice_source_accept_errors_total";
inline constexpr const char* kSourceBytesUnreadAtShutdownTotal = "sluice_source_bytes_unread_at_shutdown_total";
inline constexpr const char* kSourceConnectionsCutAtShutdownTotal = "sluice_source_connections_cut_at_shutdown_total";

// A stream source with clientHostnameHeader.
inline constexpr const char* kSourceHostnameLookupsGivenUpTotal = "sluice_source_hostname_lookups_given_up_total";

// A source with ssl = true.
inline constexpr const char* kSourceTlsHandshakesTotal = "sluice_source_tls_handshakes_total";
inline constexpr const char* kSourceTlsHandshakeFailuresTotal = "sluice_source_tls_handshake_failures_total";
inline constexpr const char* kSourceTlsHandshakesInProgress = "sluice_source_tls_handshakes_in_progress";
inline constexpr const char* kSourceTlsConnectionsAwaitingHandshake =
    "sluice_source_tls_connections_awaiting_handshake";

// A RELP source.
inline constexpr const char* kSourceEventsAcknowledgedTotal = "sluice_source_events_acknowledged_total";
inline constexpr const char* kSourceReadsPausedTotal = "sluice_source_reads_paused_total";
inline constexpr const char* kSourceProtocolErrorsTotal = "sluice_source_protocol_errors_total";

// A UDP source.
inline constexpr const char* kSourceDatagramsDeniedTotal = "sluice_source_datagrams_denied_total";
inline constexpr const char* kSourceUdpKernelDropsTotal = "sluice_source_udp_kernel_drops_total";
inline constexpr const char* kSourceDatagramsUnreadAtShutdownTotal = "sluice_source_datagrams_unread_at_shutdown_total";

// Every channel.
inline constexpr const char* kChannelEvents = "sluice_channel_events";
inline constexpr const char* kChannelBytes = "sluice_channel_bytes";
inline constexpr const char* kChannelCapacityEvents = "sluice_channel_capacity_events";
inline constexpr const char* kChannelEventsPutTotal = "sluice_channel_events_put_total";
inline constexpr const char* kChannelEventsTakenTotal = "sluice_channel_events_taken_total";
inline constexpr const char* kChannelEventsCommittedTotal = "sluice_channel_events_committed_total";
inline constexpr const char* kChannelEventsRolledBackTotal = "sluice_channel_events_rolled_back_total";
inline constexpr const char* kChannelPutBlockedSecondsTotal = "sluice_channel_put_blocked_seconds_total";

// A spillablememory or file channel.
inline constexpr const char* kChannelDiskEvents = "sluice_channel_disk_events";
inline constexpr const char* kChannelDiskBytes = "sluice_channel_disk_bytes";
inline constexpr const char* kChannelEventsSpilledTotal = "sluice_channel_events_spilled_total";
inline constexpr const char* kChannelEventsRecoveredTotal = "sluice_channel_events_recovered_total";
inline constexpr const char* kChannelCorruptTailsTotal = "sluice_channel_corrupt_tails_total";
inline constexpr const char* kChannelEventsUnreadableTotal = "sluice_channel_events_unreadable_total";
inline constexpr const char* kChannelDiskWriteErrorsTotal = "sluice_channel_disk_write_errors_total";

// Every sink.
inline constexpr const char* kSinkEventsTakenTotal = "sluice_sink_events_taken_total";
inline constexpr const char* kSinkEventsSentTotal = "sluice_sink_events_sent_total";
inline constexpr const char* kSinkEventsDiscardedTotal = "sluice_sink_events_discarded_total";
inline constexpr const char* kSinkEventsRolledBackTotal = "sluice_sink_events_rolled_back_total";
inline constexpr const char* kSinkEventsLostTotal = "sluice_sink_events_lost_total";
inline constexpr const char* kSinkEventsPossiblyLostTotal = "sluice_sink_events_possibly_lost_total";
inline constexpr const char* kSinkEventsPossiblyDuplicatedTotal = "sluice_sink_events_possibly_duplicated_total";
inline constexpr const char* kSinkBatchSeconds = "sluice_sink_batch_seconds";
inline constexpr const char* kPipelineLatencySeconds = "sluice_pipeline_latency_seconds";
inline constexpr const char* kPipelineChannelWaitSeconds = "sluice_pipeline_channel_wait_seconds";
inline constexpr const char* kPipelineDeliverySeconds = "sluice_pipeline_delivery_seconds";

// A Kafka sink.
inline constexpr const char* kSinkDeliveryErrorsTotal = "sluice_sink_delivery_errors_total";
inline constexpr const char* kSinkProducerRestartsTotal = "sluice_sink_producer_restarts_total";
inline constexpr const char* kSinkTopicHeaderMissingTotal = "sluice_sink_topic_header_missing_total";
inline constexpr const char* kSinkPartitionHeaderUnusableTotal = "sluice_sink_partition_header_unusable_total";
inline constexpr const char* kSinkKafkaQueueMessages = "sluice_sink_kafka_queue_messages";
inline constexpr const char* kSinkDestinationServed = "sluice_sink_destination_served";
inline constexpr const char* kSinkEventsAside = "sluice_sink_events_aside";
inline constexpr const char* kSinkEventsSetAsideTotal = "sluice_sink_events_set_aside_total";
inline constexpr const char* kSinkWindowUnblockedTotal = "sluice_sink_window_unblocked_total";
inline constexpr const char* kSinkEventTopics = "sluice_sink_event_topics";
inline constexpr const char* kSinkKafkaTopicHandles = "sluice_sink_kafka_topic_handles";
inline constexpr const char* kSinkEventTopicsRefusedTotal = "sluice_sink_event_topics_refused_total";
inline constexpr const char* kKafkaBrokerUp = "sluice_kafka_broker_up";
inline constexpr const char* kKafkaBrokerRttAvgSeconds = "sluice_kafka_broker_rtt_avg_seconds";
inline constexpr const char* kKafkaBrokerRttP99Seconds = "sluice_kafka_broker_rtt_p99_seconds";
inline constexpr const char* kKafkaClientErrorsTotal = "sluice_kafka_client_errors_total";

// Sink groups (Flume's sink processors).
inline constexpr const char* kSinkGroupSinkActive = "sluice_sinkgroup_sink_active";
inline constexpr const char* kSinkGroupFailoversTotal = "sluice_sinkgroup_failovers_total";
inline constexpr const char* kSinkGroupSinkSetAsideTotal = "sluice_sinkgroup_sink_set_aside_total";

// Who exports a family.
enum class Exporter {
  agent,
  syslog_source,
  stream_source,
  hostname_lookups,
  tls_source,
  relp_source,
  udp_source,
  channel,
  disk_channel,
  sink,
  kafka_sink,
  sink_group
};

struct Family {
  std::string_view name;
  Exporter exporter;
};

inline constexpr std::array kFamilies = {
    Family{kConfigReloadsTotal, Exporter::agent},
    Family{kConfigLastReloadSuccessful, Exporter::agent},
    Family{kConfigLastReloadSuccessTimestampSeconds, Exporter::agent},
    Family{kAgentMemoryBoundBytes, Exporter::agent},
    Family{kProcessResidentMemoryBytes, Exporter::agent},
    Family{kSourceEventsReceivedTotal, Exporter::syslog_source},
    Family{kSourceBytesReceivedTotal, Exporter::syslog_source},
    Family{kSourceFramesInvalidTotal, Exporter::syslog_source},
    Family{kSourceFramesTruncatedTotal, Exporter::syslog_source},
    Family{kSourceEventsInvalidUtf8Total, Exporter::syslog_source},
    Family{kSourceBlankLinesTotal, Exporter::syslog_source},
    Family{kSourceReadErrorsTotal, Exporter::syslog_source},
    Family{kSourceEventsDroppedAtShutdownTotal, Exporter::syslog_source},
    Family{kSourceEventsFilteredTotal, Exporter::syslog_source},
    Family{kSourceOptionalCopiesDroppedTotal, Exporter::syslog_source},
    Family{kSourceEventsUnroutedTotal, Exporter::syslog_source},
    Family{kSourceFramesCutTotal, Exporter::stream_source},
    Family{kSourceFramesOctetCountedTotal, Exporter::stream_source},
    Family{kSourceConnections, Exporter::stream_source},
    Family{kSourceConnectionsAcceptedTotal, Exporter::stream_source},
    Family{kSourceConnectionsRefusedTotal, Exporter::stream_source},
    Family{kSourceConnectionsIdleClosedTotal, Exporter::stream_source},
    Family{kSourceAcceptErrorsTotal, Exporter::stream_source},
    Family{kSourceBytesUnreadAtShutdownTotal, Exporter::stream_source},
    Family{kSourceConnectionsCutAtShutdownTotal, Exporter::stream_source},
    Family{kSourceHostnameLookupsGivenUpTotal, Exporter::hostname_lookups},
    Family{kSourceTlsHandshakesTotal, Exporter::tls_source},
    Family{kSourceTlsHandshakeFailuresTotal, Exporter::tls_source},
    Family{kSourceTlsHandshakesInProgress, Exporter::tls_source},
    Family{kSourceTlsConnectionsAwaitingHandshake, Exporter::tls_source},
    Family{kSourceEventsAcknowledgedTotal, Exporter::relp_source},
    Family{kSourceReadsPausedTotal, Exporter::relp_source},
    Family{kSourceProtocolErrorsTotal, Exporter::relp_source},
    Family{kSourceDatagramsDeniedTotal, Exporter::udp_source},
    Family{kSourceUdpKernelDropsTotal, Exporter::udp_source},
    Family{kSourceDatagramsUnreadAtShutdownTotal, Exporter::udp_source},
    Family{kChannelEvents, Exporter::channel},
    Family{kChannelBytes, Exporter::channel},
    Family{kChannelCapacityEvents, Exporter::channel},
    Family{kChannelEventsPutTotal, Exporter::channel},
    Family{kChannelEventsTakenTotal, Exporter::channel},
    Family{kChannelEventsCommittedTotal, Exporter::channel},
    Family{kChannelEventsRolledBackTotal, Exporter::channel},
    Family{kChannelPutBlockedSecondsTotal, Exporter::channel},
    Family{kChannelDiskEvents, Exporter::disk_channel},
    Family{kChannelDiskBytes, Exporter::disk_channel},
    Family{kChannelEventsSpilledTotal, Exporter::disk_channel},
    Family{kChannelEventsRecoveredTotal, Exporter::disk_channel},
    Family{kChannelCorruptTailsTotal, Exporter::disk_channel},
    Family{kChannelEventsUnreadableTotal, Exporter::disk_channel},
    Family{kChannelDiskWriteErrorsTotal, Exporter::disk_channel},
    Family{kSinkEventsTakenTotal, Exporter::sink},
    Family{kSinkEventsSentTotal, Exporter::sink},
    Family{kSinkEventsDiscardedTotal, Exporter::sink},
    Family{kSinkEventsRolledBackTotal, Exporter::sink},
    Family{kSinkEventsLostTotal, Exporter::sink},
    Family{kSinkEventsPossiblyLostTotal, Exporter::sink},
    Family{kSinkEventsPossiblyDuplicatedTotal, Exporter::sink},
    Family{kSinkBatchSeconds, Exporter::sink},
    Family{kPipelineLatencySeconds, Exporter::sink},
    Family{kPipelineChannelWaitSeconds, Exporter::sink},
    Family{kPipelineDeliverySeconds, Exporter::sink},
    Family{kSinkDeliveryErrorsTotal, Exporter::kafka_sink},
    Family{kSinkProducerRestartsTotal, Exporter::kafka_sink},
    Family{kSinkTopicHeaderMissingTotal, Exporter::kafka_sink},
    Family{kSinkPartitionHeaderUnusableTotal, Exporter::kafka_sink},
    Family{kSinkKafkaQueueMessages, Exporter::kafka_sink},
    Family{kSinkDestinationServed, Exporter::kafka_sink},
    Family{kSinkEventsAside, Exporter::kafka_sink},
    Family{kSinkEventsSetAsideTotal, Exporter::kafka_sink},
    Family{kSinkWindowUnblockedTotal, Exporter::kafka_sink},
    Family{kSinkEventTopics, Exporter::kafka_sink},
    Family{kSinkKafkaTopicHandles, Exporter::kafka_sink},
    Family{kSinkEventTopicsRefusedTotal, Exporter::kafka_sink},
    Family{kKafkaBrokerUp, Exporter::kafka_sink},
    Family{kKafkaBrokerRttAvgSeconds, Exporter::kafka_sink},
    Family{kKafkaBrokerRttP99Seconds, Exporter::kafka_sink},
    Family{kKafkaClientErrorsTotal, Exporter::kafka_sink},
    Family{kSinkGroupSinkActive, Exporter::sink_group},
    Family{kSinkGroupFailoversTotal, Exporter::sink_group},
    Family{kSinkGroupSinkSetAsideTotal, Exporter::sink_group},
};

}  // namespace sluice::metric_names
