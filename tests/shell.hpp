// Runs a command line as a user would, for the tests of the command: exit status and output.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

#include "tests/catch.hpp"

namespace gemmtune::test {

struct Run {
  int status;
  std::string output;  // stdout and stderr together
};

inline Run shell(const std::string& cmd) {
  FILE* pipe = popen((cmd + " 2>&1").c_str(), "r");
  REQUIRE(pipe);
  std::string out;
  std::array<char, 4096> buf;
  while (size_t n = fread(buf.data(), 1, buf.size(), pipe)) out.append(buf.data(), n);
  const int status = pclose(pipe);
  return {WEXITSTATUS(status), out};
}

// The command built beside the tests, with these arguments.
inline Run run(const std::string& args) {
  return shell(std::string(GEMMTUNE_CLI) + " " + args);
}

}  // namespace gemmtune::test
