#pragma once
/// Running the project's programs as a user would, from the source directory (so relative paths
/// in their outputs are stable), capturing exit status, stdout and stderr.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <cstdio>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include "support/temp_files.h"

namespace salus::test {

struct ProgramResult {
  int code = -1;
  std::string out;
  std::string err;
};

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

/// Starts args[0] with args (a path, no search), its stdout and stderr to /dev/null, and returns
/// its pid without waiting (-1 when it could not fork): for tests that signal a run mid-way.
inline pid_t spawn_silent(const std::vector<std::string>& args) {
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  std::FILE* null = std::fopen("/dev/null", "w");
  if (null != nullptr) {
    ::dup2(::fileno(null), 1);
    ::dup2(::fileno(null), 2);
  }
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  ::execv(argv[0], argv.data());
  ::_exit(127);
}

/// The process's scratch folder, created.
inline std::filesystem::path scratch() {
  std::filesystem::create_directories(temp_dir());
  return temp_dir();
}

/// The program `name` built in the same folder as `binary` (the programs are built side by side).
inline std::string beside(const std::string& binary, const std::string& name) {
  return std::filesystem::path(binary).replace_filename(name).string();
}

/// Runs `binary args` in `source_dir` with no standard input.
inline ProgramResult run_program(const std::string& source_dir, const std::string& binary, const std::string& args) {
  const std::filesystem::path d = scratch();
  const std::string cmd = "cd '" + source_dir + "' && '" + binary + "' " + args + " >'" + (d / "out").string() +
                          "' 2>'" + (d / "err").string() + "' </dev/null";
  const int status = std::system(cmd.c_str());
  ProgramResult r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(d / "out");
  r.err = slurp(d / "err");
  return r;
}

}  // namespace salus::test
