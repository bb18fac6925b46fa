// CSV output shared by the apps (RFC 4180): a field that holds a comma, a double quote or a line
// break is quoted, its double quotes doubled.
#pragma once

#include <string>
#include <vector>

namespace apps {

inline std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"') out += '"';
    out += ch;
  }
  return out + "\"";
}

// One line: the fields quoted as needed, separated by commas, ended by a newline.
inline std::string csv_row(const std::vector<std::string>& fields) {
  std::string line;
  for (std::size_t i = 0; i < fields.size(); ++i) line += (i ? "," : "") + csv_field(fields[i]);
  return line + "\n";
}

}  // namespace apps
