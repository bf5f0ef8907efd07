// A dataset on disk: a folder of sequence folders (each holding gt.json), or a
// single sequence folder given directly.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace edgetap::eval {

struct DatasetDir {
  std::string name;                                // the folder's name
  std::filesystem::path path;
  std::vector<std::filesystem::path> sequences;    // sorted by name
};

// Throws DatasetError when `dir` does not exist or holds no sequence.
DatasetDir find_dataset(const std::filesystem::path& dir);

}  // namespace edgetap::eval
