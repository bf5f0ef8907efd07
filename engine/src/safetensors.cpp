#include "edgetap/engine/safetensors.hpp"

#include "edgetap/json_input.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

namespace edgetap::engine {
namespace {

float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = (h >> 15) & 1, exp = (h >> 10) & 0x1F, mant = h & 0x3FF;
  float value;
  if (exp == 0) {
    value = std::ldexp(static_cast<float>(mant), -24);
  } else if (exp == 31) {
    value = mant ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  } else {
    value = std::ldexp(static_cast<float>(mant | 0x400), static_cast<int>(exp) - 25);
  }
  return sign ? -value : value;
}

float bf16_to_float(std::uint16_t b) {
  const std::uint32_t bits = static_cast<std::uint32_t>(b) << 16;
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

// The byte count of a tensor of `shape` and `width`-byte elements, or false when it does
// not fit in 64 bits: the shape comes from the file and is checked before it sizes anything.
bool checked_byte_count(const std::vector<std::int64_t>& shape, int width, std::uint64_t& bytes) {
  bytes = static_cast<std::uint64_t>(width);
  for (const std::int64_t d : shape) {
    if (__builtin_mul_overflow(bytes, static_cast<std::uint64_t>(d), &bytes)) return false;
  }
  return true;
}

}  // namespace

std::int64_t Tensor::numel() const {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  return n;
}

std::string Tensor::shape_string() const {
  std::ostringstream s;
  s << "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s << (i ? ", " : "") << shape[i];
  s << "]";
  return s.str();
}

TensorMap load_safetensors(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ModelError(path + ": cannot open the model file");
  in.seekg(0, std::ios::end);
  const auto file_size = static_cast<std::uint64_t>(in.tellg());
  in.seekg(0);
  unsigned char length_bytes[8];
  if (file_size < 8 || !in.read(reinterpret_cast<char*>(length_bytes), 8)) {
    throw ModelError(path + ": truncated (shorter than the 8-byte header length)");
  }
  std::uint64_t header_size = 0;
  for (int i = 7; i >= 0; --i) header_size = (header_size << 8) | length_bytes[i];
  if (header_size > file_size - 8) {
    throw ModelError(path + ": truncated or corrupt (header of " + std::to_string(header_size) + " bytes, file of " +
                     std::to_string(file_size) + ")");
  }
  std::string header(header_size, '\0');
  in.read(header.data(), static_cast<std::streamsize>(header_size));
  std::string error;
  const nlohmann::json meta = parse_json_input(header, error);
  if (meta.is_discarded() || !meta.is_object()) {
    throw ModelError(path + ": the header is not a JSON object" + (error.empty() ? "" : " (" + error + ")"));
  }
  const std::uint64_t data_size = file_size - 8 - header_size;
  std::vector<char> data(data_size);
  in.read(data.data(), static_cast<std::streamsize>(data_size));

  TensorMap tensors;
  for (const auto& [name, info] : meta.items()) {
    if (name == "__metadata__") continue;
    const std::string where = path + ": tensor '" + name + "'";
    if (!info.is_object() || !info.contains("dtype") || !info.contains("shape") || !info.contains("data_offsets")) {
      throw ModelError(where + ": needs dtype, shape and data_offsets");
    }
    Tensor t;
    if (!info["shape"].is_array()) throw ModelError(where + ": bad shape (expected a list of sizes)");
    for (const auto& d : info["shape"]) {
      if (!d.is_number_integer() || d.get<std::int64_t>() < 0) throw ModelError(where + ": bad shape");
      t.shape.push_back(d.get<std::int64_t>());
    }
    const std::string dtype = info["dtype"].is_string() ? info["dtype"].get<std::string>() : "";
    const int width = dtype == "F32" ? 4 : (dtype == "F16" || dtype == "BF16") ? 2 : dtype == "I64" ? 8 : dtype == "U8" ? 1 : 0;
    if (width == 0) throw ModelError(where + ": unsupported dtype '" + dtype + "' (F32, F16, BF16, I64, U8)");
    const auto& offsets = info["data_offsets"];
    if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() || !offsets[1].is_number_unsigned()) {
      throw ModelError(where + ": bad data_offsets");
    }
    const auto begin = offsets[0].get<std::uint64_t>(), end = offsets[1].get<std::uint64_t>();
    if (end < begin || end > data_size) {
      throw ModelError(where + ": data [" + std::to_string(begin) + ", " + std::to_string(end) +
                       ") lies outside the file's " + std::to_string(data_size) + " data bytes (truncated?)");
    }
    std::uint64_t bytes = 0;
    if (!checked_byte_count(t.shape, width, bytes)) {
      throw ModelError(where + ": shape " + t.shape_string() + " of " + dtype + " is too large (its size overflows)");
    }
    if (end - begin != bytes) {
      throw ModelError(where + ": " + std::to_string(end - begin) + " bytes do not match shape " + t.shape_string() +
                       " of " + dtype);
    }
    const std::uint64_t n = bytes / static_cast<std::uint64_t>(width);  // at most the file's size: safe to allocate
    t.data.resize(n);
    const char* src = data.data() + begin;
    for (std::uint64_t i = 0; i < n; ++i) {
      if (width == 4) {
        std::memcpy(&t.data[i], src + 4 * i, 4);
      } else if (width == 8) {
        std::int64_t v;
        std::memcpy(&v, src + 8 * i, 8);
        t.data[i] = static_cast<float>(v);
      } else if (width == 1) {
        t.data[i] = static_cast<unsigned char>(src[i]);
      } else {
        std::uint16_t v;
        std::memcpy(&v, src + 2 * i, 2);
        t.data[i] = dtype == "F16" ? half_to_float(v) : bf16_to_float(v);
      }
    }
    tensors.emplace(name, std::move(t));
  }
  return tensors;
}

}  // namespace edgetap::engine
