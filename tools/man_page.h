#pragma once
// A manual page (man(7) roff) written from a program's CLI11 option table: the options `--help`
// lists, with the same descriptions and defaults, so the two cannot drift apart. Each program
// prints it with the hidden --print-man-page; the build installs the result (share/man/man1).

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

namespace sluice::tools {

// Text for roff: backslashes and hyphens escaped, no line starting with a control character.
inline std::string roff_text(std::string_view text) {
  std::string out;
  bool line_start = true;
  for (char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    if (c == '\\')
      out += "\\e";
    else if (c == '-')
      out += "\\-";
    else
      out += c;
    line_start = c == '\n';
  }
  return out;
}

struct ManSection {
  std::string title;  // e.g. "SIGNALS"
  std::string text;   // paragraphs separated by blank lines
};

// `source`: the package and version, for the page's footer ("sluice 0.1.0").
// `synopsis`: one line per way to call it.
inline std::string man_page(const CLI::App& app, std::string_view program, std::string_view summary,
                            const std::vector<std::string>& synopsis, std::string_view source,
                            const std::vector<ManSection>& sections) {
  std::string page =
      ".TH " + roff_text(std::string(program)) + " 1 \"\" \"" + roff_text(source) + "\" \"User Commands\"\n";
  page += ".SH NAME\n" + roff_text(std::string(program)) + " \\- " + roff_text(summary) + "\n";
  page += ".SH SYNOPSIS\n";
  for (size_t i = 0; i < synopsis.size(); ++i) page += (i ? ".br\n" : "") + roff_text(synopsis[i]) + "\n";
  const auto paragraphs = [](const std::string& text) {
    std::string out;
    size_t start = 0;
    while (start < text.size()) {
      size_t end = text.find("\n\n", start);
      if (end == std::string::npos) end = text.size();
      out += ".PP\n" + roff_text(text.substr(start, end - start)) + "\n";
      start = end + 2;
    }
    return out;
  };
  page += ".SH DESCRIPTION\n" + paragraphs(app.get_description());
  page += ".SH OPTIONS\n";
  for (const CLI::Option* option : app.get_options()) {
    if (option->get_group().empty()) continue;  // hidden
    // "-f,--conf-file" as "\fB\-f\fR, \fB\-\-conf\-file\fR"
    std::string names;
    const std::string written = option->get_name(false, true);
    std::string_view all = written;
    while (!all.empty()) {
      const size_t comma = std::min(all.find(','), all.size());
      names += (names.empty() ? "\\fB" : ", \\fB") + roff_text(all.substr(0, comma)) + "\\fR";
      all.remove_prefix(std::min(comma + 1, all.size()));
    }
    page += ".TP\n" + names;
    if (!option->get_type_name().empty() && option->get_expected_max() > 0)
      page += " \\fI" + roff_text(option->get_type_name()) + "\\fR";
    page += "\n" + roff_text(option->get_description());
    if (!option->get_default_str().empty()) page += " (default: " + roff_text(option->get_default_str()) + ")";
    page += "\n";
  }
  for (const CLI::App* command : app.get_subcommands([](const CLI::App*) { return true; })) {
    page += ".SH COMMAND: " + roff_text(command->get_name()) + "\n" + paragraphs(command->get_description());
    for (const CLI::App* sub : command->get_subcommands([](const CLI::App*) { return true; }))
      page += ".TP\n\\fB" + roff_text(command->get_name() + " " + sub->get_name()) + "\\fR\n" +
              roff_text(sub->get_description()) + "\n";
  }
  for (const ManSection& section : sections)
    page += ".SH " + roff_text(section.title) + "\n" + paragraphs(section.text);
  return page;
}

}  // namespace sluice::tools
