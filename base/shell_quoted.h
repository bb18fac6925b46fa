// gemm_mlp::shell_quoted(arg): an argument as a POSIX shell reads it back, for the commands the
// programs print for the user to run (a resume command, a dataset's fetch command).
#pragma once

#include <string>

namespace gemm_mlp {

// arg itself when it holds only characters no shell treats specially, else arg in single quotes
// (each ' inside written '\'').
inline std::string shell_quoted(const std::string& arg) {
  if (!arg.empty() && arg.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                            "0123456789_./=:,+-") == std::string::npos)
    return arg;
  std::string out = "'";
  for (char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace gemm_mlp
