// A reader for the safetensors format: an 8-byte little-endian header length,
// a JSON header {name: {dtype, shape, data_offsets}}, then the raw data.
// Every inconsistency (truncation, bad JSON, offsets out of range, sizes that
// do not match shape x dtype) is an error naming the file and the tensor.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace edgetap::engine {

class ModelError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Tensor {
  std::vector<std::int64_t> shape;
  std::vector<float> data;  // converted to FP32 (F32, F16, BF16; I64 and U8 for test data)

  std::int64_t numel() const;
  std::string shape_string() const;
};

using TensorMap = std::map<std::string, Tensor>;

TensorMap load_safetensors(const std::string& path);

}  // namespace edgetap::engine
