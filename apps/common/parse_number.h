// Strict parsing of the numbers and names that the apps take from flags and from checkpoints'
// metadata. Each throws std::runtime_error("<what> must be <expected>, got '<text>'").
#pragma once

#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace apps {

// Numbers as a user or a checkpoint writes them, and nothing else: decimal, the whole text, in
// range (CLI11 alone would read 0x10 as 16, 010 as 8 and '' as 0; std::stoull "-1" as 2^64 - 1).
// The lexers below give the value of a well-formed text, or nothing; the parsers add the range
// and throw; apps/common/number_flags.h makes CLI11 validators of the same lexers.

// An optional '-', then decimal digits, within long long.
inline std::optional<long long> decimal_integer_value(const std::string& text) {
  const size_t digits = text.rfind('-', 0) == 0 ? 1 : 0;
  if (text.size() == digits || text.find_first_not_of("0123456789", digits) != std::string::npos)
    return std::nullopt;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), nullptr, 10);
  if (errno == ERANGE) return std::nullopt;
  return v;
}

// Decimal digits alone, within unsigned long long.
inline std::optional<unsigned long long> decimal_unsigned_value(const std::string& text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  errno = 0;
  const unsigned long long v = std::strtoull(text.c_str(), nullptr, 10);
  if (errno == ERANGE) return std::nullopt;
  return v;
}

// Digits, sign, point and exponent only (no hex, inf or nan), the whole text, finite.
inline std::optional<double> finite_decimal_value(const std::string& text) {
  if (text.empty() || text.find_first_not_of("0123456789.eE+-") != std::string::npos)
    return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (*end != '\0' || errno == ERANGE || !std::isfinite(v)) return std::nullopt;
  return v;
}

// `what` names the source: a flag ("--momentum") or a checkpoint's key.
[[noreturn]] inline void bad_value(const std::string& what, const std::string& text,
                                   const std::string& expected) {
  throw std::runtime_error(what + " must be " + expected + ", got '" + text + "'");
}

inline int parse_int(const std::string& what, const std::string& text, int min) {
  const std::optional<long long> v = decimal_integer_value(text);
  if (v && *v >= min && *v <= INT_MAX) return static_cast<int>(*v);
  // Beyond int, or digits beyond long long (which the lexer refuses), are "too large".
  const bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
  if (v ? *v > INT_MAX : digits)
    bad_value(what, text,
              "an integer in " + std::to_string(min) + " .. " + std::to_string(INT_MAX));
  bad_value(what, text, "an integer >= " + std::to_string(min));
}

inline uint64_t parse_seed(const std::string& what, const std::string& text) {
  const std::optional<unsigned long long> v = decimal_unsigned_value(text);
  if (!v) bad_value(what, text, "an integer in 0 .. 18446744073709551615");
  return *v;
}

enum class Range { Positive, NonNegative, BelowOne };  // > 0; >= 0; in [0, 1)

inline float parse_real(const std::string& what, const std::string& text, Range range) {
  const std::string expected = range == Range::Positive      ? "a finite decimal number > 0"
                               : range == Range::NonNegative ? "a finite decimal number >= 0"
                                                             : "a decimal number in [0, 1)";
  const std::optional<double> d = finite_decimal_value(text);
  const float v = d ? static_cast<float>(*d) : 0.0f;
  const bool in_range = range == Range::Positive      ? v > 0.0f
                        : range == Range::NonNegative ? v >= 0.0f
                                                      : v >= 0.0f && v < 1.0f;
  if (!d || !std::isfinite(v) || !in_range) bad_value(what, text, expected);
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
