// Running a built binary as a user does, for the app tests: its exit status and its output.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace app_test {

struct Result {
  int status;          // the exit status; -1 when killed by a signal
  std::string output;  // stdout and stderr
};

inline Result run(const std::string& command) {
  std::FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return {-1, "popen failed"};
  std::string out;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
  const int status = ::pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

}  // namespace app_test

// The command exits non-zero and its output contains needle.
#define EXPECT_FAILS_WITH(command, needle)                                                \
  do {                                                                                    \
    const ::app_test::Result r = ::app_test::run(command);                                \
    EXPECT_NE(r.status, 0) << (command) << "\n" << r.output;                              \
    EXPECT_NE(r.output.find(needle), std::string::npos) << (command) << "\n" << r.output; \
  } while (0)
