#include "edgetap/engine/model_config.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "edgetap/engine/safetensors.hpp"
#include "edgetap/json_input.hpp"
#include "edgetap/kernels/cpu.hpp"

namespace edgetap::engine {
namespace {

template <typename T>
T field(const nlohmann::json& j, const std::string& path, const char* key) {
  if (!j.contains(key)) throw ModelError(path + ": missing key '" + key + "'");
  try {
    return j.at(key).get<T>();
  } catch (const nlohmann::json::exception&) {
    throw ModelError(path + ": key '" + std::string(key) + "' has the wrong type");
  }
}

// "visible_rule" and "vis_threshold" at the top level; absent in files before edgetap-v5's
// calibration: the visibility probability against 0.5.
void read_visible_rule(const nlohmann::json& j, const std::string& path, ModelConfig& c) {
  if (j.contains("visible_rule")) {
    const std::string rule = field<std::string>(j, path, "visible_rule");
    if (rule == "vis") {
      c.visible_rule = VisibleRule::visibility;
    } else if (rule == "vis*conf") {
      c.visible_rule = VisibleRule::visibility_times_confidence;
    } else {
      throw ModelError(path + ": visible_rule '" + rule + "' must be \"vis\" or \"vis*conf\"");
    }
  }
  if (j.contains("vis_threshold")) {
    c.visible_threshold = field<float>(j, path, "vis_threshold");
    if (!(c.visible_threshold >= 0.f && c.visible_threshold <= 1.f)) {
      throw ModelError(path + ": vis_threshold must be in [0, 1]");
    }
  }
}

// "refinement" at the top level: {"radius", "iters", "min_ncc", "max_shift"}; absent in files
// before edgetap-large-v6's: no refinement.
void read_refinement(const nlohmann::json& j, const std::string& path, ModelConfig& c) {
  if (!j.contains("refinement")) return;
  const nlohmann::json& r = j["refinement"];
  const std::string where = path + ": refinement";
  if (!r.is_object()) throw ModelError(where + " must be an object, got " + r.dump());
  TemplateAlignmentConfig a;
  a.radius = field<int>(r, where, "radius");
  a.iters = field<int>(r, where, "iters");
  a.min_ncc = field<float>(r, where, "min_ncc");
  a.max_shift = field<float>(r, where, "max_shift");
  if (a.radius < 1 || a.radius > 32) throw ModelError(where + ": radius " + std::to_string(a.radius) + " must be in [1, 32]");
  if (a.iters < 1 || a.iters > 20) throw ModelError(where + ": iters " + std::to_string(a.iters) + " must be in [1, 20]");
  if (!(a.min_ncc >= -1.f && a.min_ncc <= 1.f)) throw ModelError(where + ": min_ncc must be in [-1, 1]");
  if (!(a.max_shift > 0.f && a.max_shift <= 32.f)) throw ModelError(where + ": max_shift must be in (0, 32]");
  c.refinement = a;
}

// "support_grid" at the top level: the side of the grid of support tracks; absent: 0, none.
void read_support_grid(const nlohmann::json& j, const std::string& path, ModelConfig& c) {
  if (!j.contains("support_grid")) return;
  const nlohmann::json& g = j["support_grid"];
  if (!g.is_number_integer() || g.get<std::int64_t>() < 0 || g.get<std::int64_t>() > kMaxSupportGrid) {
    throw ModelError(path + ": support_grid " + g.dump() + " must be an integer in [0, " +
                     std::to_string(kMaxSupportGrid) + "]");
  }
  c.support_grid = g.get<int>();
}

// "entry_velocity" beside the hyper-parameters; absent in files before round 24: 0.
void read_entry_velocity(const nlohmann::json& m, const std::string& path, ModelConfig& c) {
  if (!m.contains("entry_velocity")) return;
  if (!m["entry_velocity"].is_number()) {
    throw ModelError(path + ": key 'entry_velocity' must be a number, got " + m["entry_velocity"].dump());
  }
  const double v = m["entry_velocity"].get<double>();
  if (!(v >= 0.0 && v <= 2.0)) {  // also a NaN (JSON has none, but the check should not rely on it)
    std::ostringstream shown;
    shown << v;
    throw ModelError(path + ": entry_velocity " + shown.str() + " must be in [0, 2]");
  }
  c.entry_velocity = static_cast<float>(v);
}

// "recent_descriptors" beside the hyper-parameters; absent in files before round 25: false. They are
// sampled where a frame enters, the previous output, so they need entry_velocity 0 (as EdgeTap's check).
void read_recent_descriptors(const nlohmann::json& m, const std::string& path, ModelConfig& c) {
  if (!m.contains("recent_descriptors")) return;
  if (!m["recent_descriptors"].is_boolean()) {
    throw ModelError(path + ": key 'recent_descriptors' must be true or false, got " + m["recent_descriptors"].dump());
  }
  c.recent_descriptors = m["recent_descriptors"].get<bool>();
  if (c.recent_descriptors && c.entry_velocity != 0.f) {
    std::ostringstream shown;
    shown << c.entry_velocity;
    throw ModelError(path + ": key 'recent_descriptors' needs entry_velocity 0, not " + shown.str() +
                     " (they are sampled at the previous output, where a frame enters)");
  }
}

// "cross_scale" (training/edgetap/model.py) beside the hyper-parameters; absent in files before round 27: false.
void read_cross_scale(const nlohmann::json& m, const std::string& path, ModelConfig& c) {
  if (!m.contains("cross_scale")) return;
  if (!m["cross_scale"].is_boolean()) {
    throw ModelError(path + ": key 'cross_scale' must be true or false, got " + m["cross_scale"].dump());
  }
  c.cross_scale = m["cross_scale"].get<bool>();
}

}  // namespace

ModelConfig load_model_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ModelError(path + ": cannot open the model configuration");
  std::ostringstream text;
  text << in.rdbuf();
  std::string error;
  const nlohmann::json j = parse_json_input(text.str(), error);
  if (j.is_discarded() || !j.is_object()) {
    throw ModelError(path + ": not a JSON object" + (error.empty() ? "" : " (" + error + ")"));
  }
  // The hyper-parameters sit under "config" (the export format) or at the top level.
  const nlohmann::json& m = j.contains("config") && j["config"].is_object() ? j["config"] : j;
  ModelConfig c;
  c.version = m.value("version", j.value("version", std::string("unknown")));
  const auto enc = field<std::vector<int>>(m, path, "enc_channels");
  c.strides = field<std::vector<int>>(m, path, "strides");
  if (enc.size() != c.enc_channels.size()) throw ModelError(path + ": enc_channels needs 5 widths");
  std::copy(enc.begin(), enc.end(), c.enc_channels.begin());
  c.feat_dim = field<int>(m, path, "feat_dim");
  c.radius = field<int>(m, path, "radius");
  c.width = field<int>(m, path, "width");
  c.heads = field<int>(m, path, "heads");
  c.blocks = field<int>(m, path, "blocks");
  c.mlp_ratio = field<int>(m, path, "mlp_ratio");
  c.iters = field<int>(m, path, "iters");
  c.window = field<int>(m, path, "window");
  c.n_freq = field<int>(m, path, "n_freq");
  c.disp_scale = field<float>(m, path, "disp_scale");
  c.corr_hidden = field<int>(m, path, "corr_hidden");
  c.pixel_mean = field<float>(m, path, "pixel_mean");
  c.pixel_std = field<float>(m, path, "pixel_std");
  c.size_multiple = m.contains("size_multiple") ? field<int>(m, path, "size_multiple") : 32;
  if (c.size_multiple < 1 || c.size_multiple > 4096) {
    throw ModelError(path + ": size_multiple " + std::to_string(c.size_multiple) + " must be in [1, 4096]");
  }
  if (c.heads <= 0 || c.width % c.heads != 0) throw ModelError(path + ": width must be a multiple of heads");
  if (c.radius < 0 || c.radius > 7) throw ModelError(path + ": radius must be in [0, 7]");
  c.query_patch = m.value("query_patch", 1);  // absent in edgetap-v1/v2 files: one descriptor
  if (c.query_patch < 1 || c.query_patch > 7 || c.query_patch % 2 == 0) {
    throw ModelError(path + ": query_patch " + std::to_string(c.query_patch) + " must be odd, in [1, 7]");
  }
  // Cross-track attention layers (absent in edgetap-v1..v4 files: none).
  if (m.contains("cross_after")) {
    const nlohmann::json& ca = m["cross_after"];
    if (!ca.is_array()) throw ModelError(path + ": cross_after must be a list of block indices");
    for (const nlohmann::json& b : ca) {
      if (!b.is_number_integer() || b.get<int>() < 0 || b.get<int>() >= c.blocks ||
          c.cross_layer(b.get<int>()) >= 0) {
        throw ModelError(path + ": cross_after " + ca.dump() + " must name distinct blocks in [0, " +
                         std::to_string(c.blocks - 1) + "]");
      }
      c.cross_after.push_back(b.get<int>());
    }
  }
  read_entry_velocity(m, path, c);
  read_recent_descriptors(m, path, c);
  read_cross_scale(m, path, c);
  read_visible_rule(j, path, c);
  read_refinement(j, path, c);
  read_support_grid(j, path, c);
  if (c.strides != std::vector<int>{4, 8, 16, 32} && c.strides != std::vector<int>{2, 4, 8, 16, 32}) {
    throw ModelError(path + ": this engine implements strides [4, 8, 16, 32] and [2, 4, 8, 16, 32]");
  }
  if (c.window <= 0 || c.iters <= 0 || c.blocks <= 0 || c.feat_dim <= 0 || c.pixel_std == 0.f) {
    throw ModelError(path + ": window, iters, blocks, feat_dim must be positive and pixel_std non-zero");
  }
  if (c.window + 1 > kernels::cpu::kMaxCachedKeys) {  // the window's frames and the anchor
    throw ModelError(path + ": window " + std::to_string(c.window) + " is more than this engine's " +
                     std::to_string(kernels::cpu::kMaxCachedKeys - 1));
  }
  return c;
}

std::vector<CorrelationRead> ModelConfig::correlation_reads() const {
  // Each set's descriptors against their own level's window, levels fine to coarse, the query's set
  // first; then (cross_scale) the query's descriptors of level l against level l+1's window, then
  // against level l-1's: the order of training/edgetap/model.py's correlation_reads.
  const int L = levels();
  std::vector<CorrelationRead> reads;
  reads.reserve(static_cast<std::size_t>(correlation_read_count()));
  for (int set = 0; set < descriptor_sets(); ++set) {
    for (int l = 0; l < L; ++l) reads.push_back({set, l, l});
  }
  if (cross_scale) {
    for (int l = 0; l + 1 < L; ++l) reads.push_back({0, l, l + 1});
    for (int l = 1; l < L; ++l) reads.push_back({0, l, l - 1});
  }
  return reads;
}

int ModelConfig::iterations(int requested) const {
  if (requested > iters) {
    throw std::invalid_argument("iters " + std::to_string(requested) + " is more than the model's " +
                                std::to_string(iters) + " refinement iterations (1.." + std::to_string(iters) +
                                " can run)");
  }
  return requested > 0 ? requested : iters;
}

}  // namespace edgetap::engine
