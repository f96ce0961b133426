#include "agent/config/config_file.h"

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <map>
#include <set>
#include <sstream>

#include "agent/config/config_filters.h"
#include "agent/config/properties_file.h"

namespace sluice::config {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool is_component_group(const std::string& key) {
  const size_t dot = key.find('.');
  if (dot == std::string::npos) return false;
  const std::string rest = key.substr(dot + 1);
  return rest == "sources" || rest == "channels" || rest == "sinks" || rest == "sinkgroups" || rest == "configfilters";
}

void flatten(const YAML::Node& node, const std::string& key, const std::string& file, FlatConfig& out) {
  const SourceLocation where{file, node.Mark().line + 1};
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      // <agent>.sources: {r1: ..., r2: ...} also lists its components, as the properties file does.
      if (is_component_group(key)) {
        std::string names;
        for (const auto& child : node) names += (names.empty() ? "" : " ") + child.first.as<std::string>();
        out.push_back({key, names, where});
      }
      for (const auto& child : node)
        flatten(child.second, key.empty() ? child.first.as<std::string>() : key + "." + child.first.as<std::string>(),
                file, out);
      break;
    }
    case YAML::NodeType::Sequence: {
      std::string words;
      for (const auto& item : node) {
        if (!item.IsScalar())
          throw ConfigError(SourceLocation{file, item.Mark().line + 1}.to_string() + ": " + key +
                            ": a list may hold only plain values");
        words += (words.empty() ? "" : " ") + item.as<std::string>();
      }
      out.push_back({key, words, where});
      break;
    }
    case YAML::NodeType::Scalar: out.push_back({key, node.as<std::string>(), where}); break;
    case YAML::NodeType::Null: out.push_back({key, "", where}); break;
    case YAML::NodeType::Undefined: break;
  }
}

}  // namespace

FileFormat format_of(const std::string& path) {
  return ends_with(path, ".yaml") || ends_with(path, ".yml") ? FileFormat::yaml : FileFormat::properties;
}

FlatConfig parse_yaml(const std::string& text, const std::string& file) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw ConfigError(SourceLocation{file, e.mark.line + 1}.to_string() + ": not valid YAML: " + e.msg);
  }
  FlatConfig flat;
  if (root.IsNull()) return flat;
  if (!root.IsMap()) throw ConfigError(file + ": expected a map of agents at the top (agent: {sources: ..., ...})");
  flatten(root, "", file, flat);
  return flat;
}

void substitute_environment(FlatConfig& flat) {
  for (FlatEntry& e : flat) {
    std::string out;
    size_t pos = 0;
    while (true) {
      const size_t start = e.value.find("${", pos);
      if (start == std::string::npos) break;
      const size_t end = e.value.find('}', start);
      if (end == std::string::npos)
        throw ConfigError(e.where.to_string() + ": " + e.key + ": \"${\" without a closing \"}\"");
      std::string name = e.value.substr(start + 2, end - start - 2), fallback;
      bool has_fallback = false;
      if (const size_t dash = name.find(":-"); dash != std::string::npos) {
        fallback = name.substr(dash + 2);
        name = name.substr(0, dash);
        has_fallback = true;
      }
      if (name.find('[') != std::string::npos) {  // a config filter's ${f['KEY']}: applied after this
        out += e.value.substr(pos, end + 1 - pos);
        pos = end + 1;
        continue;
      }
      const char* value = std::getenv(name.c_str());
      if (!value && !has_fallback)
        throw ConfigError(e.where.to_string() + ": " + e.key + ": environment variable " + name +
                          " is not set (or write ${" + name + ":-default})");
      out += e.value.substr(pos, start - pos);
      out += value ? value : fallback;
      pos = end + 1;
    }
    if (pos) e.value = out + e.value.substr(pos);
  }
}

FlatConfig load_config_file_as_written(const std::string& path) {
  const std::string text = read_config_file(path);
  return format_of(path) == FileFormat::yaml ? parse_yaml(text, path) : parse_properties(text, path);
}

FlatConfig load_config_file(const std::string& path) {
  FlatConfig flat = load_config_file_as_written(path);
  // The environment first, then the filters: a secret a filter brings is not read for ${...} again.
  substitute_environment(flat);
  apply_config_filters(flat);
  return flat;
}

std::string to_properties(const FlatConfig& flat) {
  std::ostringstream out;
  for (const FlatEntry& e : flat) out << e.key << " = " << e.value << "\n";
  return out.str();
}

std::string to_yaml(const FlatConfig& flat) {
  // agent → group → component → property (property names keep their dots). The component
  // lists (<agent>.sources = ...) become the keys of their maps; listed components without
  // properties still appear.
  YAML::Node root(YAML::NodeType::Map);
  std::set<std::string> listed_groups;
  for (const FlatEntry& e : flat) {
    if (is_component_group(e.key)) {
      const size_t dot = e.key.find('.');
      YAML::Node group = root[e.key.substr(0, dot)][e.key.substr(dot + 1)];
      std::istringstream names(e.value);
      for (std::string name; names >> name;)
        if (!group[name]) group[name] = YAML::Node(YAML::NodeType::Map);
      continue;
    }
    const size_t first = e.key.find('.');
    const size_t second = first == std::string::npos ? first : e.key.find('.', first + 1);
    const size_t third = second == std::string::npos ? second : e.key.find('.', second + 1);
    if (third == std::string::npos) {  // agent-level keys (monitoring.address) and anything unusual
      root[e.key.substr(0, first)][e.key.substr(first + 1)] = e.value;
      continue;
    }
    root[e.key.substr(0, first)][e.key.substr(first + 1, second - first - 1)]
        [e.key.substr(second + 1, third - second - 1)][e.key.substr(third + 1)] = e.value;
  }
  YAML::Emitter emitter;
  emitter << root;
  return std::string(emitter.c_str()) + "\n";
}

}  // namespace sluice::config
