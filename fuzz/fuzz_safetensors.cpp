// The safetensors loader on arbitrary bytes, written to a file as the daemon
// reads one. A file is either tensors or a ModelError naming the problem; any
// other exception (std::length_error, std::bad_alloc), a crash or a sanitizer
// report is a bug.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "edgetap/engine/safetensors.hpp"

namespace {

std::string model_path;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // In memory where there is /dev/shm: five times the executions per second of /tmp.
  for (const char* dir : {"/dev/shm", "/tmp"}) {
    std::string path = std::string(dir) + "/edgetap-fuzz-XXXXXX.safetensors";
    const int fd = ::mkstemps(path.data(), 12);
    if (fd < 0) continue;
    ::close(fd);
    model_path = path;
    break;
  }
  if (model_path.empty()) std::abort();
  std::atexit([] { ::unlink(model_path.c_str()); });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::FILE* file = std::fopen(model_path.c_str(), "wb");
  if (file == nullptr || std::fwrite(data, 1, size, file) != size || std::fclose(file) != 0) std::abort();
  try {
    const edgetap::engine::TensorMap tensors = edgetap::engine::load_safetensors(model_path);
    for (const auto& [name, tensor] : tensors) {
      if (static_cast<std::size_t>(tensor.numel()) != tensor.data.size()) std::abort();  // shape and data agree
    }
  } catch (const edgetap::engine::ModelError&) {
  }
  return 0;
}
