#pragma once
// A component declares its properties once, as a table binding each key to a member of its
// config struct, with a default (a string parsed like user input, so a default cannot be
// invalid), limits and a one-line doc. The same table parses, validates, and generates the
// reference printed by `sluice --print-config-reference`.
//
//   const PropertyTable<MemoryChannelConfig> kMemoryChannelProperties{
//       {"capacity", &MemoryChannelConfig::capacity, "100", "Max events held.", {.min = 1}},
//       {"mode", one_of(&C::mode, {{"fast", Mode::fast}, {"safe", Mode::safe}}), "safe", "..."},
//       {"ports", list_of(&C::ports, "port", parse_port), "", "..."},
//   };
//   MemoryChannelConfig c = bind(kMemoryChannelProperties, component);
//
// Members may be integers (int64_t, or size_t for counts and sizes that cannot be negative),
// ByteSize, bool, durations, strings, word lists, or anything a ParsedMember turns text into:
// an enumeration (one_of), a set of flags (flags_of), a list of parsed items (list_of) or one
// parsed value (parsed_as).

#include <algorithm>
#include <chrono>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "agent/api/config_tree.h"
#include "agent/api/property_values.h"

namespace sluice::config {

// A member that a parser of its own fills from the text.
template <class C>
struct ParsedMember {
  std::function<void(C&, std::string_view text, const ValueContext&)> assign;
  std::string type;  // as the reference shows it
};

template <class C>
using MemberPointer = std::variant<int64_t C::*, size_t C::*, ByteSize C::*, bool C::*, std::string C::*,
                                   std::vector<std::string> C::*, std::chrono::milliseconds C::*, ParsedMember<C>>;

// An enumeration: each accepted word and its value.
template <class C, class E>
ParsedMember<C> one_of(E C::*member, std::vector<std::pair<std::string_view, E>> words) {
  std::string listed;
  for (const auto& [word, value] : words) listed += " " + std::string(word);
  return {[member, words, listed](C& config, std::string_view text, const ValueContext& ctx) {
            for (const auto& [word, value] : words)
              if (word == text) {
                config.*member = value;
                return;
              }
            ctx.fail(text, "one of" + listed);
          },
          "one of:" + listed};
}

// A set of flags: a list of words, each adding its bits; `expected` says what may be listed.
template <class C, class F>
ParsedMember<C> flags_of(F C::*member, std::vector<std::pair<std::string_view, F>> words, std::string expected) {
  return {[member, words, expected](C& config, std::string_view text, const ValueContext& ctx) {
            F flags{};
            for (const std::string& given : parse_word_list(text)) {
              const auto it = std::find_if(words.begin(), words.end(), [&](const auto& w) { return w.first == given; });
              if (it == words.end())
                throw ConfigError(ctx.where.to_string() + ": " + ctx.key + ": \"" + given + "\": expected " + expected);
              flags = static_cast<F>(flags | it->second);
            }
            config.*member = flags;
          },
          "list of: " + expected};
}

// A list (words separated by spaces or commas), each item parsed by `parse_one`, which
// returns nothing for text that is not `what` ("an integer in [0, 65535]").
template <class C, class T, class Parse>
ParsedMember<C> list_of(std::vector<T> C::*member, std::string what, Parse parse_one) {
  return {[member, what, parse_one](C& config, std::string_view text, const ValueContext& ctx) {
            std::vector<T> items;
            for (const std::string& word : parse_word_list(text)) {
              std::optional<T> item = parse_one(word);
              if (!item) ctx.fail(word, what);
              items.push_back(std::move(*item));
            }
            config.*member = std::move(items);
          },
          "list, each " + what};
}

// One value parsed by `parse_one` (nothing: the text is not `what`).
template <class C, class T, class Parse>
ParsedMember<C> parsed_as(T C::*member, std::string what, Parse parse_one) {
  return {[member, what, parse_one](C& config, std::string_view text, const ValueContext& ctx) {
            std::optional<T> value = parse_one(text);
            if (!value) ctx.fail(text, what);
            config.*member = std::move(*value);
          },
          what};
}

template <class C>
struct Property {
  std::string_view name;
  MemberPointer<C> member;
  std::string_view default_value;
  std::string_view doc;
  Limits limits = {};
  std::vector<std::string_view> choices = {};  // strings: the accepted values, if restricted
  std::vector<std::string_view> aliases = {};  // other accepted names (Flume's, legacy)
};

template <class C>
using PropertyTable = std::vector<Property<C>>;

// A row of the generated reference.
struct PropertyDoc {
  std::string name;
  std::string type;
  std::string default_value;
  std::string doc;
  std::vector<std::string> aliases;
};

// Handles keys that no table row names (e.g. a sink's `kafka.*` pass-through). Returns false
// when it does not know the key either, which makes it an error.
using ExtraPropertyHandler = std::function<bool(const std::string& key, const PropertyValue&)>;

namespace detail {

// The type a row's member holds (a ParsedMember stands for itself).
template <class C, class M>
struct member_type_of {
  using type = ParsedMember<C>;
};
template <class C, class T>
struct member_type_of<C, T C::*> {
  using type = T;
};
template <class C, class M>
using member_type = typename member_type_of<C, M>::type;

inline Limits unsigned_limits(Limits limits) {
  limits.min = std::max<int64_t>(limits.min, 0);
  return limits;
}

template <class C>
void assign(const Property<C>& p, C& config, std::string_view text, const ValueContext& ctx) {
  std::visit(
      [&](const auto& member) {
        using T = member_type<C, std::remove_cvref_t<decltype(member)>>;
        if constexpr (std::is_same_v<T, ParsedMember<C>>) {
          member.assign(config, text, ctx);
        } else if constexpr (std::is_same_v<T, int64_t>) {
          config.*member = parse_integer(text, ctx, p.limits);
        } else if constexpr (std::is_same_v<T, size_t>) {
          config.*member = static_cast<size_t>(parse_integer(text, ctx, unsigned_limits(p.limits)));
        } else if constexpr (std::is_same_v<T, ByteSize>) {
          config.*member = parse_byte_size(text, ctx, p.limits);
        } else if constexpr (std::is_same_v<T, bool>) {
          config.*member = parse_boolean(text, ctx);
        } else if constexpr (std::is_same_v<T, std::chrono::milliseconds>) {
          config.*member = parse_duration(text, ctx, p.limits);
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          config.*member = parse_word_list(text);
        } else {
          if (!p.choices.empty() && std::find(p.choices.begin(), p.choices.end(), text) == p.choices.end()) {
            std::string expected = "one of";
            for (std::string_view c : p.choices) expected += " " + std::string(c);
            ctx.fail(text, expected);
          }
          config.*member = std::string(text);
        }
      },
      p.member);
}

template <class C>
std::string type_name(const Property<C>& p) {
  return std::visit(
      [&](const auto& member) -> std::string {
        using T = member_type<C, std::remove_cvref_t<decltype(member)>>;
        if constexpr (std::is_same_v<T, ParsedMember<C>>)
          return member.type;
        else if constexpr (std::is_same_v<T, int64_t>)
          return "integer " + limits_text(p.limits);
        else if constexpr (std::is_same_v<T, size_t>)
          return "integer " + limits_text(unsigned_limits(p.limits));
        else if constexpr (std::is_same_v<T, ByteSize>)
          return "size";
        else if constexpr (std::is_same_v<T, bool>)
          return "boolean";
        else if constexpr (std::is_same_v<T, std::chrono::milliseconds>)
          return "duration";
        else if constexpr (std::is_same_v<T, std::vector<std::string>>)
          return "list";
        else {
          if (p.choices.empty()) return "string";
          std::string s = "one of:";
          for (std::string_view c : p.choices) s += " " + std::string(c);
          return s;
        }
      },
      p.member);
}

}  // namespace detail

// The row a key names, by its name or one of its aliases; nullptr if none.
template <class C>
const Property<C>* find_property(const PropertyTable<C>& table, std::string_view key) {
  auto it = std::find_if(table.begin(), table.end(), [&](const Property<C>& p) {
    return p.name == key || std::find(p.aliases.begin(), p.aliases.end(), key) != p.aliases.end();
  });
  return it == table.end() ? nullptr : &*it;
}

// Builds C from the component's properties: defaults first, then every given value. Unknown
// keys go to `extra`; unknown to it too, they are an error that lists the known names.
template <class C>
C bind(const PropertyTable<C>& table, const ComponentConfig& component, const ExtraPropertyHandler& extra = {}) {
  C config{};
  for (const Property<C>& p : table)
    detail::assign(p, config, p.default_value, ValueContext{component.full_key(p.name) + " (default)", {}});
  std::vector<const Property<C>*> given;
  for (const auto& [key, value] : component.properties) {
    const Property<C>* row = find_property(table, key);
    if (!row) {
      if (extra && extra(key, value)) continue;
      std::string known;
      for (const Property<C>& p : table) known += (known.empty() ? "" : ", ") + std::string(p.name);
      throw ConfigError(value.where.to_string() + ": " + component.full_key(key) + ": unknown property for " +
                        std::string(kind_singular(component.kind)) + " type '" + component.type + "' (known: " + known +
                        ")");
    }
    if (std::find(given.begin(), given.end(), row) != given.end())
      throw ConfigError(value.where.to_string() + ": " + component.full_key(key) + ": sets '" + std::string(row->name) +
                        "' a second time, under another of its names");
    given.push_back(row);
    detail::assign(*row, config, value.value, ValueContext{component.full_key(key), value.where});
  }
  return config;
}

// Another component's table for a component of its own that shares its properties: some rows'
// defaults its own (`defaults`: name, default), some rows left out (`without`), so that every
// default the component uses is in a row, and the generated reference says it.
template <class C>
PropertyTable<C> adapted(PropertyTable<C> table,
                         const std::vector<std::pair<std::string_view, std::string_view>>& defaults,
                         const std::vector<std::string_view>& without = {}) {
  std::erase_if(
      table, [&](const Property<C>& p) { return std::find(without.begin(), without.end(), p.name) != without.end(); });
  for (const auto& [name, default_value] : defaults) {
    const auto it = std::find_if(table.begin(), table.end(), [&](const Property<C>& p) { return p.name == name; });
    if (it == table.end()) throw std::logic_error("adapted(): no property " + std::string(name));
    it->default_value = default_value;
  }
  return table;
}

// A table of a base of C's (settings several components share: a stream source's TLS) as rows
// of C's own table: each binds into C's base, with its name, default, limits and doc.
template <class C, class Base>
PropertyTable<C> lifted(const PropertyTable<Base>& table) {
  static_assert(std::is_base_of_v<Base, C>);
  PropertyTable<C> rows;
  for (const Property<Base>& row : table) {
    ParsedMember<C> member{[row](C& config, std::string_view text, const ValueContext& ctx) {
                             detail::assign(row, static_cast<Base&>(config), text, ctx);
                           },
                           detail::type_name(row)};
    rows.push_back(
        Property<C>{row.name, std::move(member), row.default_value, row.doc, row.limits, row.choices, row.aliases});
  }
  return rows;
}

// Two tables as one, `first`'s rows first.
template <class C>
PropertyTable<C> joined(PropertyTable<C> first, const PropertyTable<C>& second) {
  first.insert(first.end(), second.begin(), second.end());
  return first;
}

template <class C>
std::vector<PropertyDoc> describe(const PropertyTable<C>& table) {
  std::vector<PropertyDoc> docs;
  for (const Property<C>& p : table) {
    PropertyDoc d{std::string(p.name), detail::type_name(p), std::string(p.default_value), std::string(p.doc), {}};
    for (std::string_view a : p.aliases) d.aliases.emplace_back(a);
    docs.push_back(std::move(d));
  }
  return docs;
}

}  // namespace sluice::config
