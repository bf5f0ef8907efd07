// The track socket's hello line on arbitrary bytes: parse_hello either chooses
// cameras and a format or returns the error sent back; any exception, a crash or
// a sanitizer report is a bug.
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>

#include "edgetap/publish/hello.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string line(reinterpret_cast<const char*>(data), size);
  std::set<std::string> cameras;
  edgetap::pipeline::wire::Format format = edgetap::pipeline::wire::Format::ndjson;
  edgetap::pipeline::parse_hello(line, cameras, format);
  return 0;
}
