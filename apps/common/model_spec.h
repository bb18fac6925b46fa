// A model and batch as the benchmark apps take them: "784-1024-1024-10:256", the layer widths
// (input first) and the batch, every number decimal and >= 1 (apps/common/parse_number.h).
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "apps/common/parse_number.h"

namespace apps {

struct ModelSpec {
  std::vector<int> widths;
  int batch = 0;
  std::string text;  // as given
};

// Throws std::runtime_error naming `what` (the flag) and the spec where it is not
// WIDTH-...-WIDTH:BATCH with at least min_widths widths.
inline ModelSpec parse_model_spec(const std::string& what, const std::string& spec,
                                  int min_widths) {
  const char* words[] = {"no", "one", "two", "three", "four"};
  const std::string count =
      min_widths >= 0 && min_widths <= 4 ? words[min_widths] : std::to_string(min_widths);
  const std::string expected = "WIDTH-WIDTH-...:BATCH, at least " + count + " widths, each >= 1";
  const size_t colon = spec.find(':');
  if (colon == std::string::npos || colon == 0 || spec[colon - 1] == '-' || spec[0] == '-')
    bad_value(what, spec, expected);
  ModelSpec m;
  m.text = spec;
  std::stringstream widths(spec.substr(0, colon));
  for (std::string w; std::getline(widths, w, '-');) {
    if (w.empty()) bad_value(what, spec, expected);
    m.widths.push_back(parse_int(what, w, 1));
  }
  if (static_cast<int>(m.widths.size()) < min_widths) bad_value(what, spec, expected);
  m.batch = parse_int(what, spec.substr(colon + 1), 1);
  return m;
}

}  // namespace apps
