// Flume's three channel selectors: replicating, multiplexing and load_balancing.

#include "selectors/channel_selectors.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <random>

#include "agent/api/channel_selector.h"
#include "agent/api/property_table.h"

namespace sluice::selectors {
namespace {

// The source's channels named in `property`'s list, as indices into its channels (each once).
std::vector<size_t> channel_indices(const config::ComponentConfig& c, std::string_view property,
                                    const std::vector<std::string>& names) {
  std::vector<size_t> indices;
  for (const std::string& name : names) {
    const auto it = std::find(c.channels.begin(), c.channels.end(), name);
    if (it == c.channels.end()) {
      std::string listed;
      for (const std::string& channel : c.channels) listed += " " + channel;
      c.fail(property, "channel '" + name + "' is not one of the source's channels (" + listed.substr(1) + ")");
    }
    const auto index = static_cast<size_t>(it - c.channels.begin());
    if (std::find(indices.begin(), indices.end(), index) == indices.end()) indices.push_back(index);
  }
  return indices;
}

std::vector<size_t> without(std::vector<size_t> channels, const std::vector<size_t>& removed) {
  std::erase_if(channels, [&](size_t c) { return std::find(removed.begin(), removed.end(), c) != removed.end(); });
  return channels;
}

// replicating ------------------------------------------------------------------------------

struct ReplicatingConfig {
  std::vector<std::string> optional;
};

const config::PropertyTable<ReplicatingConfig> kReplicatingProperties{
    {"optional", &ReplicatingConfig::optional, "",
     "The source's channels that are optional: each takes its copy only if it has room at that moment (a copy it "
     "cannot take is dropped and counted); nothing waits for them. Every other channel is required."},
};

std::unique_ptr<ChannelSelector> make_replicating(const config::ComponentConfig& c) {
  const ReplicatingConfig config = config::bind(kReplicatingProperties, c);
  ChannelRoute route;
  route.optional = channel_indices(c, "optional", config.optional);
  for (size_t i = 0; i < c.channels.size(); ++i)
    if (std::find(route.optional.begin(), route.optional.end(), i) == route.optional.end()) route.required.push_back(i);
  return std::make_unique<SingleRouteSelector>(std::move(route));
}

// multiplexing -----------------------------------------------------------------------------

struct MultiplexingConfig {
  std::string header;
  std::vector<std::string> default_channels;
};

const config::PropertyTable<MultiplexingConfig> kMultiplexingProperties{
    {"header", &MultiplexingConfig::header, "flume.selector.header",
     "The header whose value chooses the channels: one an interceptor set, or a parsed field's (Severity, "
     "Facility, host, ...)."},
    {"default", &MultiplexingConfig::default_channels, "",
     "Required channels of an event whose header is missing, blank, or a value no mapping names. Without it such "
     "an event goes nowhere: counted (sluice_source_events_unrouted_total), as Flume drops it."},
};
// Beside the table (read by make_multiplexing): mapping.<value> = required channels of that value
// (at least one), optional.<value> = its optional channels (less its required ones).

class MultiplexingSelector final : public ChannelSelector {
 public:
  MultiplexingSelector(std::vector<ChannelRoute> routes, std::string header,
                       std::vector<std::pair<std::string, uint8_t>> values)
      : ChannelSelector(std::move(routes)),
        header_(std::move(header)),
        ref_(header_),
        values_(std::move(values)),
        numeric_(event_field_from_name(header_) == EventField::severity   ? Numeric::severity
                 : event_field_from_name(header_) == EventField::facility ? Numeric::facility
                                                                          : Numeric::none) {
    // Severity and Facility as the syslog source sets them: each number's route, once.
    for (int n = 0; n < 256; ++n) by_number_[static_cast<size_t>(n)] = route_of(std::to_string(n));
  }

  uint8_t route(const EventBatchBuilder& builder) const override {
    if (numeric_ != Numeric::none && builder.last_header_is_parsed(header_)) {
      const EventRecord& e = builder.last();
      return by_number_[numeric_ == Numeric::severity ? e.severity : e.facility];
    }
    char scratch[24];
    const std::optional<std::string_view> value = builder.last_headers().get(ref_, scratch);
    return value ? route_of(*value) : 0;
  }

 private:
  enum class Numeric { none, severity, facility };

  // Values match exactly; a blank one matches none (none may be blank): the default, as in Flume.
  uint8_t route_of(std::string_view value) const {
    const auto it = std::lower_bound(values_.begin(), values_.end(), value,
                                     [](const auto& entry, std::string_view v) { return entry.first < v; });
    return it != values_.end() && it->first == value ? it->second : 0;
  }

  const std::string header_;
  const HeaderRef ref_;                                        // a parsed field by a sink's names too
  const std::vector<std::pair<std::string, uint8_t>> values_;  // sorted by value; route 0 is the default
  const Numeric numeric_;                                      // the header is a numeric parsed field
  std::array<uint8_t, 256> by_number_{};
};

bool blank(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](unsigned char ch) { return ch <= ' '; });
}

std::unique_ptr<ChannelSelector> make_multiplexing(const config::ComponentConfig& c) {
  constexpr std::string_view kMapping = "mapping.", kOptional = "optional.";
  config::ComponentConfig own = c;  // mapping.* and optional.* are read here, the rest by the table
  std::erase_if(own.properties, [&](const auto& entry) {
    return entry.first.starts_with(kMapping) || entry.first.starts_with(kOptional);
  });
  const MultiplexingConfig config = config::bind(kMultiplexingProperties, own);
  const std::vector<size_t> default_channels = channel_indices(c, "default", config.default_channels);

  std::map<std::string, ChannelRoute> by_value;  // sorted, as the lookup needs
  for (const auto& [key, value] : c.properties) {
    const bool mapping = key.starts_with(kMapping);
    if (!mapping && !key.starts_with(kOptional)) continue;
    const std::string header_value = key.substr(mapping ? kMapping.size() : kOptional.size());
    if (blank(header_value)) c.fail(key, "names no header value (a blank value takes selector.default)");
    const std::vector<size_t> channels = channel_indices(c, key, config::parse_word_list(value.value));
    if (mapping && channels.empty()) c.fail(key, "lists no channel: every mapped value needs at least one");
    (mapping ? by_value[header_value].required : by_value[header_value].optional) = channels;
  }
  if (by_value.size() + 1 > ChannelSelector::kMaxRoutes)
    c.fail("mapping", "maps " + std::to_string(by_value.size()) + " header values: at most " +
                          std::to_string(ChannelSelector::kMaxRoutes - 1) + " are supported");
  std::vector<ChannelRoute> routes{{default_channels, {}}};
  std::vector<std::pair<std::string, uint8_t>> values;
  for (auto& [header_value, route] : by_value) {
    // A value with only optional channels is required where the default is (Flume's meaning);
    // a channel both required and optional is required.
    if (route.required.empty()) route.required = default_channels;
    route.optional = without(std::move(route.optional), route.required);
    values.emplace_back(header_value, static_cast<uint8_t>(routes.size()));
    routes.push_back(std::move(route));
  }
  return std::make_unique<MultiplexingSelector>(std::move(routes), config.header, std::move(values));
}

// load_balancing ---------------------------------------------------------------------------

enum class Policy { round_robin, random };

struct LoadBalancingConfig {
  std::string policy;
};

const config::PropertyTable<LoadBalancingConfig> kLoadBalancingProperties{
    {"policy", &LoadBalancingConfig::policy, "round_robin",
     "round_robin or random (any case): how each event's one channel is chosen, in turn (each io thread keeps its "
     "own turn) or at random. Every channel is required."},
};

class LoadBalancingSelector final : public ChannelSelector {
 public:
  LoadBalancingSelector(std::vector<ChannelRoute> routes, Policy policy)
      : ChannelSelector(std::move(routes)), policy_(policy) {}

  uint8_t route(const EventBatchBuilder&) const override {
    const size_t routes = this->routes().size();
    if (policy_ == Policy::random) {
      thread_local std::minstd_rand random{std::random_device{}()};
      return static_cast<uint8_t>(random() % routes);
    }
    thread_local uint64_t turn = 0;  // per io thread: no shared counter on the hot path
    return static_cast<uint8_t>(turn++ % routes);
  }

 private:
  const Policy policy_;
};

std::unique_ptr<ChannelSelector> make_load_balancing(const config::ComponentConfig& c) {
  const LoadBalancingConfig config = config::bind(kLoadBalancingProperties, c);
  std::string policy = config.policy;
  std::transform(policy.begin(), policy.end(), policy.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  if (policy != "round_robin" && policy != "random")
    c.fail("policy", "\"" + config.policy + "\": expected round_robin or random (any case)");
  if (c.channels.size() > ChannelSelector::kMaxRoutes)
    c.fail("type", "balances over " + std::to_string(c.channels.size()) + " channels: at most " +
                       std::to_string(ChannelSelector::kMaxRoutes) + " are supported");
  std::vector<ChannelRoute> routes;
  for (size_t i = 0; i < c.channels.size(); ++i) routes.push_back({{i}, {}});
  return std::make_unique<LoadBalancingSelector>(std::move(routes),
                                                 policy == "random" ? Policy::random : Policy::round_robin);
}

}  // namespace

const ComponentSpec kReplicatingSelectorSpec{
    .kind = config::Kind::selector,
    .type = "replicating",
    .aliases = {"org.apache.flume.channel.ReplicatingChannelSelector"},
    .doc = "Every event into every channel of the source (the default selector).",
    .describe = [] { return config::describe(kReplicatingProperties); },
    .make_selector = &make_replicating,
};

const ComponentSpec kMultiplexingSelectorSpec{
    .kind = config::Kind::selector,
    .type = "multiplexing",
    .aliases = {"org.apache.flume.channel.MultiplexingChannelSelector"},
    .doc =
        "Each event into the channels its header's value maps to: `selector.mapping.<value>` (required channels) and "
        "`selector.optional.<value>` (optional ones), beside the rows below.",
    .describe = [] { return config::describe(kMultiplexingProperties); },
    .make_selector = &make_multiplexing,
};

const ComponentSpec kLoadBalancingSelectorSpec{
    .kind = config::Kind::selector,
    .type = "load_balancing",
    .aliases = {"org.apache.flume.channel.LoadBalancingChannelSelector"},
    .doc = "Each event into one of the source's channels, in turn or at random (Flume 1.10 and later).",
    .describe = [] { return config::describe(kLoadBalancingProperties); },
    .make_selector = &make_load_balancing,
};

}  // namespace sluice::selectors
