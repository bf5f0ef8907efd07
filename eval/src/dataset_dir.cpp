#include "edgetap/eval/dataset_dir.hpp"

#include <algorithm>

#include "edgetap/eval/sequence.hpp"

namespace edgetap::eval {

DatasetDir find_dataset(const std::filesystem::path& dir) {
  if (!std::filesystem::is_directory(dir)) throw DatasetError(dir.string() + ": no such folder");
  std::filesystem::path path = dir;
  if (!path.has_filename()) path = path.parent_path();  // "badja/" -> "badja"
  DatasetDir dataset{path.filename().string(), path, {}};
  if (std::filesystem::exists(path / "gt.json")) {
    dataset.sequences.push_back(path);
    return dataset;
  }
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(path, ec)) {
    if (entry.is_directory() && std::filesystem::exists(entry.path() / "gt.json")) {
      dataset.sequences.push_back(entry.path());
    }
  }
  if (ec) throw DatasetError(path.string() + ": cannot be listed (" + ec.message() + ")");
  if (dataset.sequences.empty()) {
    throw DatasetError(path.string() + ": holds no gt.json, and no sub-folder holding one (not a dataset)");
  }
  std::sort(dataset.sequences.begin(), dataset.sequences.end());
  return dataset;
}

}  // namespace edgetap::eval
