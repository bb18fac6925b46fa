// Strict number options for CLI11, added with ->transform(...). CLI11 alone reads integers with
// strtoll(text, 0): "0x10" is 16, "010" is 8, an unsigned option takes "-1" as 2^64 − 1; and a
// floating-point option takes "nan" and "inf". These accept a decimal number in a range only,
// and hand CLI11 the number's canonical text. An empty value is an error too.
//
//   app.add_option("--seed", seed)->transform(apps::decimal_unsigned());
//   app.add_option("--reps", reps)->transform(apps::decimal_integer(20, 100000));
//   app.add_option("--max-seconds", s)->transform(apps::finite_number(0, 86400, true));
//
// A bad value exits through CLI11 as "--seed: must be a decimal integer in 0 .. 1844…, got '-1'".
#pragma once

#include <CLI/CLI.hpp>
#include <climits>
#include <limits>
#include <optional>
#include <string>

#include "apps/common/parse_number.h"

namespace apps {

// A decimal integer in [min, max]: an optional '-' (when min < 0), then digits.
inline CLI::Validator decimal_integer(long long min, long long max) {
  const std::string range = std::to_string(min) + " .. " + std::to_string(max);
  return CLI::Validator(
      [min, max, range](std::string& text) -> std::string {
        const std::optional<long long> value = decimal_integer_value(text);
        if (!value || *value < min || *value > max)
          return "must be a decimal integer in " + range + ", got '" + text + "'";
        text = std::to_string(*value);
        return "";
      },
      "INT in " + range);
}

// A decimal integer in [0, max], digits only.
inline CLI::Validator decimal_unsigned(unsigned long long max = ULLONG_MAX) {
  const std::string range = "0 .. " + std::to_string(max);
  return CLI::Validator(
      [max, range](std::string& text) -> std::string {
        const std::optional<unsigned long long> value = decimal_unsigned_value(text);
        if (!value || *value > max)
          return "must be a decimal integer in " + range + ", got '" + text + "'";
        text = std::to_string(*value);
        return "";
      },
      "UINT in " + range);
}

// A finite decimal number (digits, '.', an exponent; no hex, NaN or infinity) in [min, max], or
// (min, max] when min_exclusive.
inline CLI::Validator finite_number(double min, double max, bool min_exclusive = false) {
  const auto text_of = [](double x) {
    std::string s = std::to_string(x);
    s.erase(s.find_last_not_of('0') + 1);
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  };
  const std::string range = (min_exclusive ? "(" : "[") + text_of(min) + ", " + text_of(max) + "]";
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        const std::optional<double> value = finite_decimal_value(text);
        if (!value || (min_exclusive ? *value <= min : *value < min) || *value > max)
          return "must be a finite decimal number in " + range + ", got '" + text + "'";
        return "";
      },
      "NUMBER in " + range);
}

}  // namespace apps
