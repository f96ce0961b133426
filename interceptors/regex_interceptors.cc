// The interceptors that read the body with a regular expression (java_regex.h): regex_filter,
// regex_extractor (with its serializers), search_replace; and remove_header, whose `matching`
// is one too.

#include <stdexcept>

#include <spdlog/spdlog.h>

#include "agent/api/interceptor.h"
#include "agent/api/log_limiter.h"
#include "agent/api/property_table.h"
#include "interceptors/interceptor_specs.h"
#include "interceptors/java_regex.h"
#include "interceptors/joda_time.h"

namespace sluice::interceptors {
namespace {

// A regular expression from property `property`, or its error naming the file, line and key.
std::unique_ptr<JavaRegex> compile(const config::ComponentConfig& c, std::string_view property,
                                   const std::string& pattern) {
  try {
    return std::make_unique<JavaRegex>(pattern);
  } catch (const std::invalid_argument& e) {
    c.fail(property, "\"" + pattern + "\" is " + e.what());
  }
}

// A match that could not be decided: logged, rate-limited per io thread; the event stays as it is.
void log_undecided(const std::string& pattern, const MatchFailed& e) {
  thread_local LogLimiter log;
  if (auto note = log.next())
    spdlog::warn("interceptor regex /{}/ could not decide a match ({}): the event is kept unchanged{}", pattern,
                 e.what(), *note);
}

// The charset property Flume's body interceptors have: the body is UTF-8 here.
void check_charset(const config::ComponentConfig& c, const std::string& charset) {
  std::string lower;
  for (char ch : charset) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (lower != "utf-8" && lower != "utf8")
    c.fail("charset", "\"" + charset + "\": only UTF-8 is supported (the source's charset.* converts to it)");
}

// regex_filter -----------------------------------------------------------------------------

struct RegexFilterConfig {
  std::string regex;
  bool exclude_events = false;
};

const config::PropertyTable<RegexFilterConfig> kRegexFilterProperties{
    {"regex", &RegexFilterConfig::regex, ".*", "Searched for in the body (Java's syntax; found anywhere, as find())."},
    {"excludeEvents", &RegexFilterConfig::exclude_events, "false",
     "false: keep only the events it is found in; true: drop those. Dropped events are counted "
     "(sluice_source_events_filtered_total)."},
};

class RegexFilterInterceptor final : public Interceptor {
 public:
  RegexFilterInterceptor(std::unique_ptr<JavaRegex> regex, bool exclude)
      : regex_(std::move(regex)), exclude_(exclude) {}
  bool intercept(InterceptedEvent& event) const override {
    try {
      return regex_->find(event.body()) != exclude_;
    } catch (const MatchFailed& e) {  // undecided: kept, neither filtered nor lost
      log_undecided(regex_->pattern(), e);
      return true;
    }
  }

  std::optional<std::vector<std::string>> headers_touched() const override { return std::vector<std::string>{}; }

 private:
  const std::unique_ptr<JavaRegex> regex_;
  const bool exclude_;
};

// search_replace ---------------------------------------------------------------------------

struct SearchReplaceConfig {
  std::string search_pattern;
  std::string replace_string;
  std::string charset;
};

const config::PropertyTable<SearchReplaceConfig> kSearchReplaceProperties{
    {"searchPattern", &SearchReplaceConfig::search_pattern, "",
     "Required: what to replace in the body, every match (Java's syntax)."},
    {"replaceString", &SearchReplaceConfig::replace_string, "",
     "The replacement: $1 or ${name} for a group, \\$ for a dollar (Java's replaceAll)."},
    {"charset", &SearchReplaceConfig::charset, "UTF-8", "The body's charset: UTF-8 (the only one)."},
};

class SearchReplaceInterceptor final : public Interceptor {
 public:
  SearchReplaceInterceptor(std::unique_ptr<JavaRegex> regex, std::string replacement)
      : regex_(std::move(regex)), replacement_(std::move(replacement)) {}
  bool intercept(InterceptedEvent& event) const override {
    const std::string_view body = event.body();
    std::string replaced;
    try {
      if (!regex_->find(body)) return true;  // nothing to replace: the body stays where it is
      replaced = regex_->replace_all(body, replacement_);
    } catch (const MatchFailed& e) {  // e.g. the match limit on a hostile line: the body stays
      log_undecided(regex_->pattern(), e);
      return true;
    }
    event.set_body(replaced);
    return true;
  }

  std::optional<std::vector<std::string>> headers_touched() const override { return std::vector<std::string>{}; }

 private:
  const std::unique_ptr<JavaRegex> regex_;
  const std::string replacement_;
};

// regex_extractor --------------------------------------------------------------------------

struct RegexExtractorConfig {
  std::string regex;
  std::vector<std::string> serializers;
};

const config::PropertyTable<RegexExtractorConfig> kRegexExtractorProperties{
    {"regex", &RegexExtractorConfig::regex, "",
     "Required: searched for in the body (first match); group i goes to serializer i."},
    {"serializers",
     config::list_of(&RegexExtractorConfig::serializers, "a serializer name",
                     [](std::string_view w) { return std::optional<std::string>(w); }),
     "",
     "Required: the serializers' names, one per group in order. serializers.<s>.name (required) names the header; "
     "serializers.<s>.type is DEFAULT (or absent: the text as matched) or "
     "org.apache.flume.interceptor.RegexExtractorInterceptorMillisSerializer with serializers.<s>.pattern (a Joda "
     "time pattern: y M d H h a m s S Z; the agent's zone unless Z): the time in ms. A group that did not take part, "
     "or a time that does not parse, sets no header (counted in the log)."},
};

constexpr std::string_view kPassThrough = "org.apache.flume.interceptor.RegexExtractorInterceptorPassThroughSerializer";
constexpr std::string_view kMillis = "org.apache.flume.interceptor.RegexExtractorInterceptorMillisSerializer";

struct Serializer {
  std::string header;
  std::unique_ptr<JodaPattern> millis;  // null: the text as matched
};

class RegexExtractorInterceptor final : public Interceptor {
 public:
  RegexExtractorInterceptor(std::string name, std::unique_ptr<JavaRegex> regex, std::vector<Serializer> serializers)
      : name_(std::move(name)), regex_(std::move(regex)), serializers_(std::move(serializers)) {}
  bool intercept(InterceptedEvent& event) const override {
    thread_local std::vector<std::string_view> groups;
    try {
      if (!regex_->find(event.body(), &groups)) return true;
    } catch (const MatchFailed& e) {
      log_undecided(regex_->pattern(), e);
      return true;
    }
    for (size_t i = 0; i < serializers_.size() && i + 1 < groups.size(); ++i) {
      const std::string_view group = groups[i + 1];
      if (!group.data()) continue;  // it did not take part in the match: Flume's null, no header here
      const Serializer& s = serializers_[i];
      if (!s.millis) {
        event.set_header(s.header, group);
        continue;
      }
      if (const auto millis = s.millis->parse_millis(group)) {
        event.set_header(s.header, std::to_string(*millis));
      } else {
        thread_local LogLimiter unparsed;
        if (auto note = unparsed.next())
          spdlog::warn("{}: \"{}\" is not a time in the pattern of {}: header {} not set{}", name_, group, s.header,
                       s.header, *note);
      }
    }
    return true;
  }

  std::optional<std::vector<std::string>> headers_touched() const override {
    std::vector<std::string> names;
    for (const Serializer& s : serializers_) names.push_back(s.header);
    return names;
  }

 private:
  const std::string name_;
  const std::unique_ptr<JavaRegex> regex_;
  const std::vector<Serializer> serializers_;
};

std::unique_ptr<Interceptor> make_regex_extractor(const config::ComponentConfig& c) {
  // serializers.<s>.* belong to the serializers, read here; everything else is the table's.
  config::ComponentConfig own = c;
  std::erase_if(own.properties, [](const auto& entry) { return entry.first.starts_with("serializers."); });
  const RegexExtractorConfig config = config::bind(kRegexExtractorProperties, own);
  if (config.regex.empty()) c.fail("regex", "is missing: the regular expression whose groups become headers");
  if (config.serializers.empty()) c.fail("serializers", "is missing: a serializer name per group");
  std::unique_ptr<JavaRegex> regex = compile(c, "regex", config.regex);
  std::vector<Serializer> serializers;
  for (const std::string& s : config.serializers) {
    const std::string prefix = "serializers." + s + ".";
    auto value = [&](const std::string& key) -> std::optional<std::string> {
      const auto it = c.properties.find(prefix + key);
      return it == c.properties.end() ? std::nullopt : std::optional<std::string>(it->second.value);
    };
    Serializer serializer;
    serializer.header = value("name").value_or("");
    if (serializer.header.empty()) c.fail(prefix + "name", "is missing: the header this group is put in");
    const std::string type = value("type").value_or("DEFAULT");
    if (type == kMillis) {
      const std::string pattern = value("pattern").value_or("");
      if (pattern.empty()) c.fail(prefix + "pattern", "is missing: the time pattern (e.g. yyyy-MM-dd HH:mm)");
      try {
        serializer.millis = std::make_unique<JodaPattern>(pattern);
      } catch (const std::invalid_argument& e) {
        c.fail(prefix + "pattern", e.what());
      }
    } else if (type != "DEFAULT" && type != "default" && type != kPassThrough) {
      c.fail(prefix + "type", "\"" + type + "\" is not a serializer Sluice has: DEFAULT (the text) or " +
                                  std::string(kMillis) + " (custom classes are not supported)");
    }
    for (const auto& [key, given] : c.properties)
      if (key.starts_with(prefix) && key != prefix + "name" && key != prefix + "type" &&
          !(key == prefix + "pattern" && serializer.millis))
        c.fail(key, "is not a property of this serializer (name, type, and pattern for the millis serializer)");
    serializers.push_back(std::move(serializer));
  }
  for (const auto& [key, given] : c.properties)
    if (key.starts_with("serializers.") &&
        std::none_of(config.serializers.begin(), config.serializers.end(),
                     [&](const std::string& s) { return key.starts_with("serializers." + s + "."); }))
      c.fail(key, "configures a serializer not listed in serializers");
  return std::make_unique<RegexExtractorInterceptor>(c.key_prefix, std::move(regex), std::move(serializers));
}

// remove_header ----------------------------------------------------------------------------

struct RemoveHeaderConfig {
  std::string with_name;
  std::string from_list;
  std::string from_list_separator;
  std::string matching;
};

const config::PropertyTable<RemoveHeaderConfig> kRemoveHeaderProperties{
    {"withName", &RemoveHeaderConfig::with_name, "", "A header to remove (its exact name)."},
    {"fromList", &RemoveHeaderConfig::from_list, "", "Headers to remove, separated by fromListSeparator."},
    {"fromListSeparator", &RemoveHeaderConfig::from_list_separator, "\\s*,\\s*",
     "The regular expression between fromList's names."},
    {"matching", &RemoveHeaderConfig::matching, "",
     "Removes every header whose whole name matches this regular expression (Java's matches())."},
};

class RemoveHeaderInterceptor final : public Interceptor {
 public:
  RemoveHeaderInterceptor(std::string with_name, std::vector<std::string> list, std::unique_ptr<JavaRegex> matching)
      : with_name_(std::move(with_name)), list_(std::move(list)), matching_(std::move(matching)) {}
  bool intercept(InterceptedEvent& event) const override {
    if (!with_name_.empty()) event.remove_header(with_name_);
    if (list_.empty() && !matching_) return true;
    for (const std::string& name : event.header_names()) {
      bool remove = std::find(list_.begin(), list_.end(), name) != list_.end();
      try {
        remove = remove || (matching_ && matching_->matches(name));
      } catch (const MatchFailed& e) {
        log_undecided(matching_->pattern(), e);
      }
      if (remove) event.remove_header(name);
    }
    return true;
  }

  std::optional<std::vector<std::string>> headers_touched() const override {
    if (matching_) return std::nullopt;  // whatever the pattern matches
    std::vector<std::string> names = list_;
    if (!with_name_.empty()) names.push_back(with_name_);
    return names;
  }

 private:
  const std::string with_name_;
  const std::vector<std::string> list_;
  const std::unique_ptr<JavaRegex> matching_;
};

}  // namespace

const ComponentSpec kRegexFilterInterceptorSpec{
    .kind = config::Kind::interceptor,
    .type = "regex_filter",
    .aliases = {"org.apache.flume.interceptor.RegexFilteringInterceptor$Builder"},
    .doc =
        "Keeps (or, with excludeEvents, drops) the events whose body a regular expression is found in; a dropped "
        "event is counted, never silently gone.",
    .describe = [] { return config::describe(kRegexFilterProperties); },
    .make_interceptor = [](const config::ComponentConfig& c) -> std::unique_ptr<Interceptor> {
      const RegexFilterConfig config = config::bind(kRegexFilterProperties, c);
      return std::make_unique<RegexFilterInterceptor>(compile(c, "regex", config.regex), config.exclude_events);
    },
};

const ComponentSpec kSearchReplaceInterceptorSpec{
    .kind = config::Kind::interceptor,
    .type = "search_replace",
    .aliases = {"org.apache.flume.interceptor.SearchAndReplaceInterceptor$Builder"},
    .doc = "Replaces every match of a regular expression in the body (Java's replaceAll).",
    .describe = [] { return config::describe(kSearchReplaceProperties); },
    .make_interceptor = [](const config::ComponentConfig& c) -> std::unique_ptr<Interceptor> {
      const SearchReplaceConfig config = config::bind(kSearchReplaceProperties, c);
      if (config.search_pattern.empty()) c.fail("searchPattern", "is missing: the regular expression to replace");
      check_charset(c, config.charset);
      std::unique_ptr<JavaRegex> regex = compile(c, "searchPattern", config.search_pattern);
      try {
        regex->check_replacement(config.replace_string);
      } catch (const std::invalid_argument& e) {
        c.fail("replaceString", e.what());
      }
      return std::make_unique<SearchReplaceInterceptor>(std::move(regex), config.replace_string);
    },
};

const ComponentSpec kRegexExtractorInterceptorSpec{
    .kind = config::Kind::interceptor,
    .type = "regex_extractor",
    .aliases = {"org.apache.flume.interceptor.RegexExtractorInterceptor$Builder"},
    .doc = "Puts the groups of a regular expression's first match in the body into headers (overwriting them).",
    .describe = [] { return config::describe(kRegexExtractorProperties); },
    .make_interceptor = &make_regex_extractor,
};

const ComponentSpec kRemoveHeaderInterceptorSpec{
    .kind = config::Kind::interceptor,
    .type = "remove_header",
    .aliases = {"org.apache.flume.interceptor.RemoveHeaderInterceptor$Builder"},
    .doc =
        "Removes headers: one by name, a list, or those whose name matches a regular expression (a parsed "
        "field's header too, e.g. host).",
    .describe = [] { return config::describe(kRemoveHeaderProperties); },
    .make_interceptor = [](const config::ComponentConfig& c) -> std::unique_ptr<Interceptor> {
      const RemoveHeaderConfig config = config::bind(kRemoveHeaderProperties, c);
      std::vector<std::string> list;
      if (!config.from_list.empty())
        list = compile(c, "fromListSeparator", config.from_list_separator)->split(config.from_list);
      std::unique_ptr<JavaRegex> matching = config.matching.empty() ? nullptr : compile(c, "matching", config.matching);
      return std::make_unique<RemoveHeaderInterceptor>(config.with_name, std::move(list), std::move(matching));
    },
};

}  // namespace sluice::interceptors
