#pragma once
// Flume's config filters: values taken from outside the file when it is loaded, so that secrets
// need not be written in it.
//
//   a1.configfilters = f1 f2
//   a1.configfilters.f1.type = env                 # the process environment
//   a1.configfilters.f2.type = external            # a command's first line of output
//   a1.configfilters.f2.command = /usr/bin/secret-tool lookup kafka   (the key is its last argument)
//   a1.configfilters.f2.timeout = 10s              # Sluice's: a command that hangs fails the load
//   a1.sinks.k1.kafka.producer.sasl.password = ${f2['kafka_password']}
//
// ${f1['KEY']}, ${f1["KEY"]} and ${f1[KEY]} (KEY of letters, digits, '-' and '_') are replaced
// in every value of that agent; a filter's own settings are not. Where Flume leaves a reference
// it cannot resolve as it is, written (an unset variable, a command that failed), Sluice refuses
// the file naming the line and the reason: a password "${f2['x']}" would only fail later and
// less clearly. The filters' keys are removed from the configuration once applied.

#include "agent/api/config_tree.h"

namespace sluice::config {

// Applies every agent's filters to its values. Throws ConfigError naming the file and line.
void apply_config_filters(FlatConfig& flat);

}  // namespace sluice::config
