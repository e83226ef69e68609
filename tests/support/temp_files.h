#pragma once
/// Scratch files for tests: one folder per test process, removed when the process exits.
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

namespace salus::test {

inline std::filesystem::path temp_dir() {
  return std::filesystem::temp_directory_path() / ("salus-test-" + std::to_string(::getpid()));
}

namespace detail {
struct TempDirCleanup {
  ~TempDirCleanup() {
    std::error_code ignored;
    std::filesystem::remove_all(temp_dir(), ignored);
  }
};
inline const TempDirCleanup kTempDirCleanup;
}  // namespace detail

/// Writes `text` to `name` in the process's scratch folder and returns the path.
inline std::string temp_file(const std::string& name, const std::string& text) {
  std::filesystem::create_directories(temp_dir());
  const auto path = temp_dir() / name;
  std::ofstream(path, std::ios::binary) << text;
  return path.string();
}

}  // namespace salus::test
