#include "model/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace encrt {

MappedFile::~MappedFile() {
  if (data_) munmap(data_, size_);
}

Status MappedFile::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return io_error("cannot open '" + path + "': " + std::strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return io_error("cannot stat '" + path + "': " + std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return io_error("'" + path + "' is not a regular file");
  }
  if (st.st_size == 0) {
    ::close(fd);
    return invalid_model("'" + path + "' is empty");
  }
  void* p = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
  const int err = errno;
  ::close(fd);
  if (p == MAP_FAILED) return io_error("cannot map '" + path + "': " + std::strerror(err));
  data_ = static_cast<unsigned char*>(p);
  size_ = static_cast<size_t>(st.st_size);
  return Status::ok();
}

}  // namespace encrt
