// A small EdgeTAP network with random weights, written as the exported files
// (JSON configuration + safetensors), for engine tests that need no trained model.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace edgetap::test {

struct NetworkFiles {
  std::string config_path;
  std::string weights_path;
};

// Tensors as name -> (shape, values), written as F32 safetensors.
using TensorList = std::map<std::string, std::pair<std::vector<std::int64_t>, std::vector<float>>>;
void write_safetensors(const std::string& path, const TensorList& tensors);

// Writes <dir>/tiny.json and <dir>/tiny.safetensors.
NetworkFiles write_random_network(const std::string& dir, std::uint64_t seed);
// The tensors write_random_network() writes (to corrupt them in tests).
TensorList random_network_tensors(std::uint64_t seed);

}  // namespace edgetap::test
