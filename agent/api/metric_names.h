#pragma once
// Every metric family the agent exports, one row each (its name, who exports it, its type and
// its help): the probes write them, `sluice top` and the Grafana dashboard read them, `sluice
// --print-metric-names` lists them for scripts, and a test checks that a running agent exports
// exactly the families this table promises for the components it runs (tests/conf/dashboard_test.cc).
// Names: sluice_<area>_<noun>_<unit>[_total], base units, bounded labels.

#include <array>
#include <string_view>

namespace sluice::metric_names {

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
  avro_sink,
  sink_group
};

enum class Type { counter, gauge, histogram };

struct Family {
  const char* constant;  // "kConfigReloadsTotal": how scripts name it (sluice --print-metric-names)
  const char* name;
  Exporter exporter;
  Type type;
  const char* help;
  // Where a name is wanted (a scrape's reader, a label table).
  constexpr operator const char*() const { return name; }
};

// The table: row(constant, name, exporter, type, help), laid out for reading rather than by
// clang-format.
// clang-format off
#define SLUICE_METRIC_FAMILIES(row) \
  /* The agent itself. */ \
  row(kConfigReloadsTotal, "sluice_config_reloads_total", agent, counter, \
      "Configuration reloads (SIGHUP, systemctl reload, --watch-config), by result: applied, unchanged, refused " \
      "(did not validate: nothing changed), failed (applied in part, see the log).") \
  row(kConfigLastReloadSuccessful, "sluice_config_last_reload_successful", agent, gauge, \
      "1 if the last reload was applied (or found nothing to change).") \
  row(kConfigLastReloadSuccessTimestampSeconds, "sluice_config_last_reload_success_timestamp_seconds", agent, gauge, \
      "When the running configuration was last applied (start or reload), in seconds since the epoch.") \
  row(kAgentMemoryBoundBytes, "sluice_agent_memory_bound_bytes", agent, gauge, \
      "The most memory the running configuration can hold (sluice --check prints its terms).") \
  row(kProcessResidentMemoryBytes, "process_resident_memory_bytes", agent, gauge, \
      "Resident memory of the agent's process.") \
  /* Every syslog source (TCP, TLS, RELP, UDP), per port where labelled so. */ \
  row(kSourceEventsReceivedTotal, "sluice_source_events_received_total", syslog_source, counter, \
      "Events read from senders.") \
  row(kSourceBytesReceivedTotal, "sluice_source_bytes_received_total", syslog_source, counter, \
      "Bytes read from senders.") \
  row(kSourceFramesInvalidTotal, "sluice_source_frames_invalid_total", syslog_source, counter, \
      "Frames without a valid PRI (kept, status Invalid).") \
  row(kSourceFramesTruncatedTotal, "sluice_source_frames_truncated_total", syslog_source, counter, \
      "Frames longer than eventSize (cut, status Incomplete).") \
  row(kSourceEventsInvalidUtf8Total, "sluice_source_events_invalid_utf8_total", syslog_source, counter, \
      "Events whose invalid UTF-8 was replaced by U+FFFD.") \
  row(kSourceBlankLinesTotal, "sluice_source_blank_lines_total", syslog_source, counter, "Empty frames skipped.") \
  row(kSourceReadErrorsTotal, "sluice_source_read_errors_total", syslog_source, counter, \
      "Read errors: stream connections a read error ended, UDP reads (recvmmsg) that failed.") \
  row(kSourceEventsDroppedAtShutdownTotal, "sluice_source_events_dropped_at_shutdown_total", syslog_source, counter, \
      "Events read but not put into a channel by the shutdown deadline.") \
  row(kSourceEventsFilteredTotal, "sluice_source_events_filtered_total", syslog_source, counter, \
      "Events the source's interceptors filtered out (regex_filter): read, counted, not put.") \
  row(kSourceOptionalCopiesDroppedTotal, "sluice_source_optional_copies_dropped_total", syslog_source, counter, \
      "Copies of events an optional channel of the source's selector had no room for: dropped from that channel " \
      "only.") \
  row(kSourceEventsUnroutedTotal, "sluice_source_events_unrouted_total", syslog_source, counter, \
      "Events the source's selector sent to no channel (a multiplexing header value without a mapping, and no " \
      "selector.default): read, counted, not put.") \
  /* The stream sources (TCP, TLS, RELP). */ \
  row(kSourceFramesCutTotal, "sluice_source_frames_cut_total", stream_source, counter, \
      "Partial frames the agent cut by closing the connection (shutdown, idleTimeout): kept, status Incomplete.") \
  row(kSourceFramesOctetCountedTotal, "sluice_source_frames_octet_counted_total", stream_source, counter, \
      "Frames that came RFC 6587 octet-counted.") \
  row(kSourceConnections, "sluice_source_connections", stream_source, gauge, "Open connections.") \
  row(kSourceConnectionsAcceptedTotal, "sluice_source_connections_accepted_total", stream_source, counter, \
      "Connections accepted.") \
  row(kSourceConnectionsRefusedTotal, "sluice_source_connections_refused_total", stream_source, counter, \
      "Connections closed at once, by reason.") \
  row(kSourceConnectionsIdleClosedTotal, "sluice_source_connections_idle_closed_total", stream_source, counter, \
      "Connections closed by idleTimeout.") \
  row(kSourceConnectionsAgedTotal, "sluice_source_connections_aged_total", stream_source, counter, \
      "Connections asked to reconnect by maxConnectionAge (our FIN; RELP: serverclose once answered).") \
  row(kSourceClientsHeld, "sluice_source_clients_held", syslog_source, gauge, \
      "Client addresses over maxEventsPerSecondPerClient or maxBytesPerSecondPerClient now (TCP: not read; UDP: " \
      "dropped).") \
  row(kSourceClientHoldsTotal, "sluice_source_client_holds_total", stream_source, counter, \
      "Times a connection's reading waited for its client's budget (maxEventsPerSecondPerClient).") \
  row(kSourceEventsOverClientRateTotal, "sluice_source_events_over_client_rate_total", udp_source, counter, \
      "UDP datagrams dropped because their client was over maxEventsPerSecondPerClient (or bytes).") \
  row(kSourceConnectionsAgedLingering, "sluice_source_connections_aged_lingering", stream_source, gauge, \
      "Connections asked to reconnect by maxConnectionAge whose senders have not closed for 10 s or more.") \
  row(kSourceAcceptErrorsTotal, "sluice_source_accept_errors_total", stream_source, counter, \
      "accept() failures (e.g. out of file descriptors).") \
  row(kSourceBytesUnreadAtShutdownTotal, "sluice_source_bytes_unread_at_shutdown_total", stream_source, counter, \
      "Bytes senders had delivered, left unread when the shutdown grace ended.") \
  row(kSourceConnectionsCutAtShutdownTotal, "sluice_source_connections_cut_at_shutdown_total", stream_source, counter, \
      "Connections closed when the shutdown grace ended, before their sender closed its side.") \
  /* A stream source with clientHostnameHeader. */ \
  row(kSourceHostnameLookupsGivenUpTotal, "sluice_source_hostname_lookups_given_up_total", hostname_lookups, counter, \
      "Connections read with their address as host name (clientHostnameHeader): the reverse lookup timed out, was " \
      "skipped with too many waiting, or was still waiting when the source stopped.") \
  /* A source with ssl = true. */ \
  row(kSourceTlsHandshakesTotal, "sluice_source_tls_handshakes_total", tls_source, counter, \
      "TLS handshakes completed and admitted.") \
  row(kSourceTlsHandshakeFailuresTotal, "sluice_source_tls_handshake_failures_total", tls_source, counter, \
      "TLS connections refused or broken, by reason (timeout, no_certificate, expired, untrusted, revoked, " \
      "not_allowed, protocol).") \
  row(kSourceTlsReloadsTotal, "sluice_source_tls_reloads_total", tls_source, counter, \
      "Reloads of the TLS files (changed on disk, or SIGHUP), by result: applied, refused (the running ones stay).") \
  row(kSourceTlsCertificateExpiryTimestampSeconds, "sluice_source_tls_certificate_expiry_timestamp_seconds", \
      tls_source, gauge, "When the certificate the source serves expires (its notAfter), in seconds since the epoch.") \
  row(kSourceTlsHandshakesInProgress, "sluice_source_tls_handshakes_in_progress", tls_source, gauge, \
      "TLS handshakes in progress (at most each io thread's share of ssl.maxHandshakes, rounded up).") \
  row(kSourceTlsConnectionsAwaitingHandshake, "sluice_source_tls_connections_awaiting_handshake", tls_source, gauge, \
      "TLS connections waiting, unread, for a handshake slot (ssl.maxHandshakes).") \
  /* A RELP source. */ \
  row(kSourceEventsAcknowledgedTotal, "sluice_source_events_acknowledged_total", relp_source, counter, \
      "Events whose acknowledgement (RELP rsp 200) was sent: done downstream as ackAfter says.") \
  row(kSourceReadsPausedTotal, "sluice_source_reads_paused_total", relp_source, counter, \
      "Times a connection's reading paused because over 256 KiB of its replies were unsent (a client that does not " \
      "read them).") \
  row(kSourceEventsRefusedFullTotal, "sluice_source_events_refused_full_total", relp_source, counter, \
      "Events of calls answered FAILED because a required channel stayed full for channelFullTimeout (Avro): " \
      "their senders keep them and send them again (or fail over). 0 for RELP, which holds its senders instead.") \
  row(kSourceEventsRefusedHeldTotal, "sluice_source_events_refused_held_total", relp_source, counter, \
      "Of sluice_source_events_refused_full_total, events another required channel had already taken (a batch " \
      "over several channels or routes, or a call larger than batchSize put in parts): sent again by their " \
      "senders, they may be stored twice.") \
  row(kSourceProtocolErrorsTotal, "sluice_source_protocol_errors_total", relp_source, counter, \
      "Sessions ended because their stream broke the protocol (RELP, Avro), and calls refused with an answer (Avro: " \
      "past maxBatchEvents, a header too long): the sender sends them again.") \
  /* A UDP source. */ \
  row(kSourceDatagramsDeniedTotal, "sluice_source_datagrams_denied_total", udp_source, counter, \
      "Datagrams from clients not allowed (allow/deny): dropped.") \
  row(kSourceUdpKernelDropsTotal, "sluice_source_udp_kernel_drops_total", udp_source, counter, \
      "Datagrams the kernel dropped for want of socket buffer room (SO_MEMINFO): UDP has no backpressure.") \
  row(kSourceDatagramsUnreadAtShutdownTotal, "sluice_source_datagrams_unread_at_shutdown_total", udp_source, counter, \
      "Datagrams still queued on the sockets when they closed at shutdown: lost.") \
  /* Every channel. */ \
  row(kChannelEvents, "sluice_channel_events", channel, gauge, "Events held: queued plus taken but not committed.") \
  row(kChannelBytes, "sluice_channel_bytes", channel, gauge, \
      "Bytes of the events held: their frames and what parsing added (client names, a composed body).") \
  row(kChannelCapacityEvents, "sluice_channel_capacity_events", channel, gauge, "Events the channel holds at most.") \
  row(kChannelEventsPutTotal, "sluice_channel_events_put_total", channel, counter, "Events put by sources.") \
  row(kChannelEventsTakenTotal, "sluice_channel_events_taken_total", channel, counter, \
      "Events taken by sinks (retries included).") \
  row(kChannelEventsCommittedTotal, "sluice_channel_events_committed_total", channel, counter, \
      "Events committed by sinks.") \
  row(kChannelEventsRolledBackTotal, "sluice_channel_events_rolled_back_total", channel, counter, \
      "Events a sink put back for another attempt.") \
  row(kChannelPutBlockedSecondsTotal, "sluice_channel_put_blocked_seconds_total", channel, counter, \
      "Time sources waited for room: backpressure.") \
  /* A spillablememory or file channel. */ \
  row(kChannelDiskEvents, "sluice_channel_disk_events", disk_channel, gauge, \
      "Events held in records on disk (kept across restarts).") \
  row(kChannelDiskBytes, "sluice_channel_disk_bytes", disk_channel, gauge, "Bytes of segment files and commit log.") \
  row(kChannelEventsSpilledTotal, "sluice_channel_events_spilled_total", disk_channel, counter, \
      "Events put to disk because memory was full.") \
  row(kChannelEventsRecoveredTotal, "sluice_channel_events_recovered_total", disk_channel, counter, \
      "Events found on disk at start and replayed.") \
  row(kChannelCorruptTailsTotal, "sluice_channel_corrupt_tails_total", disk_channel, counter, \
      "Segments cut at a torn or corrupt record at start.") \
  row(kChannelEventsUnreadableTotal, "sluice_channel_events_unreadable_total", disk_channel, counter, \
      "Events of records whose CRC failed when read back: lost.") \
  row(kChannelDiskWriteErrorsTotal, "sluice_channel_disk_write_errors_total", disk_channel, counter, \
      "Commit log writes and fsyncs that failed (disk full, I/O error): the records concerned may be delivered " \
      "again after a restart.") \
  /* Every sink. */ \
  row(kSinkEventsTakenTotal, "sluice_sink_events_taken_total", sink, counter, "Events taken from the channel.") \
  row(kSinkEventsSentTotal, "sluice_sink_events_sent_total", sink, counter, \
      "Events handed to Kafka (acks=0) or acknowledged (acks>=1).") \
  row(kSinkTlsReloadsTotal, "sluice_sink_tls_reloads_total", kafka_sink, counter, \
      "New producers made because the producer's TLS files changed (sslReloadInterval), by result: applied, " \
      "refused (the files did not load: the running producer goes on).") \
  row(kSinkEventsDeadLetteredTotal, "sluice_sink_events_dead_lettered_total", kafka_sink, counter, \
      "Events Kafka refused for good that the dead-letter topic (deadLetterTopic) took instead, by the reason.") \
  row(kSinkDeadLettersWaiting, "sluice_sink_dead_letters_waiting", kafka_sink, gauge, \
      "Events handed to the dead-letter topic whose answer has not come yet (a round that waits 10 s is given " \
      "back to the channel).") \
  row(kSinkEventsDiscardedTotal, "sluice_sink_events_discarded_total", sink, counter, \
      "Events failed for good (too large, invalid, a partition or topic from the event that does not exist): not " \
      "retried.") \
  row(kSinkEventsRolledBackTotal, "sluice_sink_events_rolled_back_total", sink, counter, \
      "Events put back into the channel to be retried.") \
  row(kSinkEventsLostTotal, "sluice_sink_events_lost_total", sink, counter, \
      "acks=0: events handed over to librdkafka (counted as sent) whose delivery then failed: lost.") \
  row(kSinkEventsPossiblyLostTotal, "sluice_sink_events_possibly_lost_total", sink, counter, \
      "acks=0: events written to a broker connection in the second before it went down (a restart, a refused " \
      "produce): the broker may not have read them; an upper estimate, acks=0 asks for no answer.") \
  row(kSinkEventsPossiblyDuplicatedTotal, "sluice_sink_events_possibly_duplicated_total", sink, counter, \
      "Of the events rolled back, those the broker may have stored already (sent, then the answer was lost or " \
      "purged): sending them again may duplicate them.") \
  row(kSinkBatchSeconds, "sluice_sink_batch_seconds", sink, histogram, "Time from take to commit, per batch.") \
  row(kPipelineLatencySeconds, "sluice_pipeline_latency_seconds", sink, histogram, \
      "Time from arrival (of its batch's first event) to commit: Kafka's acknowledgement with acks >= 1, " \
      "librdkafka taking it with acks = 0 (or the sink discarding it). Per event.") \
  row(kPipelineChannelWaitSeconds, "sluice_pipeline_channel_wait_seconds", sink, histogram, \
      "Of the pipeline latency: from arrival until the sink took it. Per event.") \
  row(kPipelineDeliverySeconds, "sluice_pipeline_delivery_seconds", sink, histogram, \
      "Of the pipeline latency: from take to commit. Per event.") \
  /* An Avro sink. */ \
  row(kSinkAvroCallsTotal, "sluice_sink_avro_calls_total", avro_sink, counter, \
      "appendBatch calls to the collector, by outcome: ok (committed), refused (answered FAILED or an error), " \
      "unreachable (no connection: nothing sent), no_answer (sent, no answer in request-timeout or the connection " \
      "broke: its events possibly duplicated). All but ok roll the take back.") \
  row(kSinkAvroConnectionsTotal, "sluice_sink_avro_connections_total", avro_sink, counter, \
      "Connections made to the collector (one is kept; a failed call or reset-connection-interval makes another).") \
  row(kSinkAvroConnected, "sluice_sink_avro_connected", avro_sink, gauge, \
      "1 while the sink holds a connection to its collector.") \
  /* A Kafka sink. */ \
  row(kSinkDeliveryErrorsTotal, "sluice_sink_delivery_errors_total", kafka_sink, counter, \
      "Events whose delivery failed, by reason (each attempt counts).") \
  row(kSinkProducerRestartsTotal, "sluice_sink_producer_restarts_total", kafka_sink, counter, \
      "New Kafka producers made after fatal errors or a stalled partition.") \
  row(kSinkTopicHeaderMissingTotal, "sluice_sink_topic_header_missing_total", kafka_sink, counter, \
      "kafka.topic %{header}s an event lacked (an empty string in its place, as Flume).") \
  row(kSinkPartitionHeaderUnusableTotal, "sluice_sink_partition_header_unusable_total", kafka_sink, counter, \
      "Events whose partitionIdHeader was absent or not a partition number (sent as if unset).") \
  row(kSinkKafkaQueueMessages, "sluice_sink_kafka_queue_messages", kafka_sink, gauge, \
      "Messages waiting in the sink's Kafka producer.") \
  row(kSinkDestinationServed, "sluice_sink_destination_served", kafka_sink, gauge, \
      "1 once the sink's own topic and partition are served (its leader answers for it), 0 while they are not (not " \
      "created yet, no leader, the cluster not answered yet): nothing is taken meanwhile.") \
  row(kSinkEventsAside, "sluice_sink_events_aside", kafka_sink, gauge, \
      "Events taken and waiting aside for their partition to be served (still the channel's).") \
  row(kSinkEventsSetAsideTotal, "sluice_sink_events_set_aside_total", kafka_sink, counter, \
      "Events set aside because their partition was not served.") \
  row(kSinkWindowUnblockedTotal, "sluice_sink_window_unblocked_total", kafka_sink, counter, \
      "Times the oldest take waited only for partitions without a leader and the producer gave back what it had " \
      "not sent.") \
  row(kSinkEventTopics, "sluice_sink_event_topics", kafka_sink, gauge, \
      "Topics named by events that the sink keeps (maxTopics bounds them).") \
  row(kSinkKafkaTopicHandles, "sluice_sink_kafka_topic_handles", kafka_sink, gauge, \
      "Topic handles the sink's producer holds (its own topic, those events named; shared producers: all of their " \
      "sinks').") \
  row(kSinkEventTopicsRefusedTotal, "sluice_sink_event_topics_refused_total", kafka_sink, counter, \
      "Events whose topic the sink did not use (allowedTopics, maxTopics): sent to its own topic instead (with a " \
      "%{header} topic: discarded).") \
  row(kKafkaBrokerUp, "sluice_kafka_broker_up", kafka_sink, gauge, \
      "1 if the sink's producer is connected to the broker (librdkafka state UP).") \
  row(kKafkaBrokerRttAvgSeconds, "sluice_kafka_broker_rtt_avg_seconds", kafka_sink, gauge, \
      "Average request round-trip time to the broker (librdkafka statistics).") \
  row(kKafkaBrokerRttP99Seconds, "sluice_kafka_broker_rtt_p99_seconds", kafka_sink, gauge, \
      "99th percentile request round-trip time to the broker.") \
  row(kKafkaClientErrorsTotal, "sluice_kafka_client_errors_total", kafka_sink, counter, \
      "Errors librdkafka reported about the cluster (unreachable, auth, ...).") \
  /* Sink groups (Flume's sink processors). */ \
  row(kSinkGroupSinkActive, "sluice_sinkgroup_sink_active", sink_group, gauge, \
      "1 while the sink takes from its channel for its group (failover: the active sink; load_balance: not set " \
      "aside), else 0.") \
  row(kSinkGroupFailoversTotal, "sluice_sinkgroup_failovers_total", sink_group, counter, \
      "Times the group's active sink was set aside and the next one took over (failover groups).") \
  row(kSinkGroupSinkSetAsideTotal, "sluice_sinkgroup_sink_set_aside_total", sink_group, counter, \
      "Takes of the sink that failed and set it aside for its penalty (its events rolled back for the group's " \
      "other sinks).") \
  /* (end of the table) */
// clang-format on

#define SLUICE_METRIC_CONSTANT(constant, name, exporter, type, help) \
  inline constexpr Family constant{#constant, name, Exporter::exporter, Type::type, help};
SLUICE_METRIC_FAMILIES(SLUICE_METRIC_CONSTANT)
#undef SLUICE_METRIC_CONSTANT

#define SLUICE_METRIC_ROW(constant, name, exporter, type, help) constant,
inline constexpr std::array kFamilies = {SLUICE_METRIC_FAMILIES(SLUICE_METRIC_ROW)};
#undef SLUICE_METRIC_ROW
#undef SLUICE_METRIC_FAMILIES

}  // namespace sluice::metric_names
