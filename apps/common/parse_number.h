// Strict parsing of the numbers and names that the apps take from flags and from checkpoints'
// metadata. Each throws std::runtime_error("<what> must be <expected>, got '<text>'").
#pragma once

#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace apps {

// Numbers as a user or a checkpoint writes them, and nothing else: decimal, the whole text, in
// range (CLI11 alone would read 0x10 as 16 and '' as 0; std::stoull "-1" as 2^64 - 1). `what`
// names the source: a flag ("--momentum") or a checkpoint's key.
[[noreturn]] inline void bad_value(const std::string& what, const std::string& text,
                                   const std::string& expected) {
  throw std::runtime_error(what + " must be " + expected + ", got '" + text + "'");
}

inline int parse_int(const std::string& what, const std::string& text, int min) {
  const std::string expected = "an integer >= " + std::to_string(min);
  const size_t digits = text.rfind('-', 0) == 0 ? 1 : 0;
  if (text.size() == digits || text.find_first_not_of("0123456789", digits) != std::string::npos)
    bad_value(what, text, expected);
  errno = 0;
  const long long v = std::strtoll(text.c_str(), nullptr, 10);
  if (v < min && errno != ERANGE) bad_value(what, text, expected);
  if (errno == ERANGE || v > INT_MAX)
    bad_value(what, text,
              "an integer in " + std::to_string(min) + " .. " + std::to_string(INT_MAX));
  return static_cast<int>(v);
}

inline uint64_t parse_seed(const std::string& what, const std::string& text) {
  errno = 0;
  const uint64_t v = std::strtoull(text.c_str(), nullptr, 10);
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos || errno == ERANGE)
    bad_value(what, text, "an integer in 0 .. 18446744073709551615");
  return v;
}

enum class Range { Positive, NonNegative, BelowOne };  // > 0; >= 0; in [0, 1)

inline float parse_real(const std::string& what, const std::string& text, Range range) {
  const std::string expected = range == Range::Positive      ? "a finite decimal number > 0"
                               : range == Range::NonNegative ? "a finite decimal number >= 0"
                                                             : "a decimal number in [0, 1)";
  // Digits, sign, point and exponent only: no hex, inf or nan.
  if (text.empty() || text.find_first_not_of("0123456789.eE+-") != std::string::npos)
    bad_value(what, text, expected);
  char* end = nullptr;
  const float v = std::strtof(text.c_str(), &end);
  const bool in_range = range == Range::Positive      ? v > 0.0f
                        : range == Range::NonNegative ? v >= 0.0f
                                                      : v >= 0.0f && v < 1.0f;
  if (*end != '\0' || !std::isfinite(v) || !in_range) bad_value(what, text, expected);
  return v;
}

inline std::string parse_choice(const std::string& what, const std::string& text, const char* first,
                                const char* second) {
  if (text != first && text != second) bad_value(what, text, std::string(first) + " or " + second);
  return text;
}

// "1024,1024" → {1024, 1024}; every size >= 1, none empty.
inline std::vector<int> parse_sizes(const std::string& what, const std::string& text) {
  const std::string expected = "layer sizes >= 1, comma-separated (e.g. 1024,1024)";
  if (text.empty() || text.back() == ',') bad_value(what, text, expected);
  std::vector<int> sizes;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, ',');) {
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos ||
        part.find_first_not_of('0') == std::string::npos)  // empty, not digits, or 0
      bad_value(what, text, expected);
    sizes.push_back(parse_int(what, part, 1));
  }
  return sizes;
}

}  // namespace apps
