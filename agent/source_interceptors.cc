#include "agent/source_interceptors.h"

#include <algorithm>

#include "agent/component_registry.h"

namespace sluice {
namespace {

constexpr std::string_view kMorphline = "org.apache.flume.sink.solr.morphline.MorphlineInterceptor$Builder";

}  // namespace

std::shared_ptr<const InterceptorChain> take_interceptors(config::ComponentConfig& source) {
  const auto list = source.properties.find("interceptors");
  std::vector<std::string> names;
  if (list != source.properties.end()) names = config::parse_word_list(list->second.value);
  std::vector<std::unique_ptr<Interceptor>> chain;
  for (const std::string& name : names) {
    const std::string prefix = "interceptors." + name + ".";
    config::ComponentConfig interceptor;
    interceptor.kind = config::Kind::interceptor;
    interceptor.name = name;
    interceptor.key_prefix = source.key_prefix + ".interceptors." + name;
    interceptor.type_where = list->second.where;
    for (const auto& [key, value] : source.properties) {
      if (!key.starts_with(prefix)) continue;
      const std::string property = key.substr(prefix.size());
      if (property == "type") {
        interceptor.type = value.value;
        interceptor.type_where = value.where;
      } else {
        interceptor.properties[property] = value;
      }
    }
    if (interceptor.type.empty())
      source.fail(prefix + "type", "is missing: every interceptor listed in interceptors needs a type");
    interceptor.type = config::flume_type(interceptor.type);
    if (interceptor.type == kMorphline)
      source.fail(prefix + "type",
                  "the morphline interceptor runs Kite morphlines, Java code Sluice does not embed: not supported "
                  "(regex_extractor, search_replace and static do what most morphlines in front of Kafka do)");
    const ComponentSpec* spec = nullptr;
    try {
      spec = &find_component(interceptor);
    } catch (const config::ConfigError& e) {
      throw config::ConfigError(std::string(e.what()) +
                                "; custom interceptor classes are not supported: Sluice runs no Java");
    }
    chain.push_back(spec->make_interceptor(interceptor));
  }
  // Every key under interceptors. must belong to a listed interceptor.
  for (const auto& [key, value] : source.properties)
    if (key.starts_with("interceptors.") && std::none_of(names.begin(), names.end(), [&](const std::string& n) {
          return key.starts_with("interceptors." + n + ".");
        }))
      source.fail(key, "configures an interceptor not listed in interceptors");
  std::erase_if(source.properties, [](const auto& entry) {
    return entry.first == "interceptors" || entry.first.starts_with("interceptors.");
  });
  if (chain.empty()) return nullptr;
  return std::make_shared<const InterceptorChain>(std::move(chain));
}

}  // namespace sluice
