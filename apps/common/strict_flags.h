// Two things CLI11 does quietly that the apps make errors instead:
// - a switch given a value, --serial-step=2, is read as true (any number, or "yes", sets it);
// - a comma-separated option with ->delimiter(',') drops an empty item: --shapes 64,,64 is two
//   shapes, --variants cpu, is one.
//
//   if (auto why = apps::switch_given_a_value(app, argc, argv)) -> error *why (before app.parse)
//   app.add_option("--shapes", texts);   // no ->delimiter(',')
//   shapes = apps::comma_list("--shapes", texts);   // throws std::invalid_argument on an empty
//   item
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace apps {

// The first switch (an option that takes no value) given one as --name=VALUE, as an error message,
// or nullopt. Call before app.parse(argc, argv); the arguments after "--" are not options.
inline std::optional<std::string> switch_given_a_value(const CLI::App& app, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") break;
    const size_t eq = arg.find('=');
    if (arg.rfind("--", 0) != 0 || eq == std::string::npos) continue;
    const std::string name = arg.substr(0, eq);
    for (const CLI::Option* opt : app.get_options())
      if (opt->get_expected_max() == 0 && opt->check_lname(name.substr(2)))
        return name + " is a switch and takes no value, got '" + arg + "' (give " + name +
               " alone, or leave it out)";
  }
  return std::nullopt;
}

// The values of a list option (given without ->delimiter) split at commas, in order. An empty
// item (a comma at either end, two together, or an empty value) throws std::invalid_argument
// naming the flag and the value as given.
inline std::vector<std::string> comma_list(const std::string& flag,
                                           const std::vector<std::string>& texts) {
  std::vector<std::string> out;
  for (const std::string& text : texts) {
    for (size_t start = 0;;) {
      const size_t comma = text.find(',', start);
      const std::string item =
          text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (item.empty())
        throw std::invalid_argument(flag + " '" + text +
                                    "': an empty item (a comma at an end, or two together)");
      out.push_back(item);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  return out;
}

}  // namespace apps
