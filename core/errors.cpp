#include "core/errors.h"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace salus::core {

void invariant_failed(const char* invariant, const char* file, int line, const std::string& detail) {
  throw std::logic_error(std::string("internal invariant '") + invariant + "' broken at " + file + ":" +
                         std::to_string(line) + (detail.empty() ? "" : ": " + detail));
}

int open_input_file(const std::string& path, const std::string& kind) {
  // O_NONBLOCK: opening a FIFO without a writer must not hang before fstat can refuse it.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw InputError(path + ": cannot open " + kind + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    throw InputError(path + ": cannot open " + kind + ": " + std::strerror(e));
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    throw InputError(path + ": is a directory, not a " + kind);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw InputError(path + ": is not a regular file (a FIFO, device or socket), not a " + kind);
  }
  // Regular files never block; reads go back to blocking for clarity.
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

}  // namespace salus::core
