#include "model/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

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
    // A 32-bit build without 64-bit file offsets cannot describe a file of 2 GiB or more.
    if (err == EOVERFLOW) return io_error("'" + path + "' is too large for this 32-bit build to open (2 GiB or more)");
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
  // A 32-bit process cannot map a file of 4 GiB or more: size_t would wrap and map a prefix.
  if constexpr (sizeof(size_t) < sizeof(st.st_size)) {
    if (static_cast<uint64_t>(st.st_size) > static_cast<uint64_t>(SIZE_MAX)) {
      ::close(fd);
      return io_error("'" + path + "' (" + std::to_string(static_cast<uint64_t>(st.st_size)) +
                      " bytes) is too large to map in this process's address space");
    }
  }
  // Shared, not private: read-only, the two are the same to every reader here, but the cuda
  // backend's weights=mapped registers the mapping with the GPU (cudaHostRegister), and on the
  // H200 VM that call never returned for a private file mapping while it took 0.1 s for a shared
  // one (scripts/host_register_probe.py, 2026-12-04).
  void* p = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_SHARED, fd, 0);
  const int err = errno;
  ::close(fd);
  if (p == MAP_FAILED) return io_error("cannot map '" + path + "': " + std::strerror(err));
  data_ = static_cast<unsigned char*>(p);
  size_ = static_cast<size_t>(st.st_size);
  return Status::ok();
}

}  // namespace encrt
