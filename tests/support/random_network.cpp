#include "support/random_network.hpp"

#include <nlohmann/json.hpp>

#include <cstring>
#include <fstream>
#include <random>

namespace edgetap::test {
namespace {

// Small but complete: every layer kind of the real network is present.
const nlohmann::json kConfig = {{"version", "tiny-random"}, {"enc_channels", {8, 8, 12, 16, 16}},
                                {"feat_dim", 8},  {"strides", {4, 8, 16, 32}}, {"radius", 2},
                                {"width", 16},    {"heads", 2},  {"blocks", 2},  {"mlp_ratio", 2},
                                {"iters", 2},     {"window", 3}, {"n_freq", 2},  {"disp_scale", 32.0},
                                {"corr_hidden", 12}, {"pixel_mean", 0.5}, {"pixel_std", 0.25}, {"size_multiple", 32}};

}  // namespace

void write_safetensors(const std::string& path, const TensorList& tensors) {
  nlohmann::json header = nlohmann::json::object();
  std::uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    const std::uint64_t bytes = t.second.size() * 4;
    header[name] = {{"dtype", "F32"}, {"shape", t.first}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  const std::string text = header.dump();
  std::ofstream out(path, std::ios::binary);
  std::uint64_t size = text.size();
  for (int i = 0; i < 8; ++i) out.put(static_cast<char>((size >> (8 * i)) & 0xFF));
  out << text;
  for (const auto& [name, t] : tensors) out.write(reinterpret_cast<const char*>(t.second.data()), static_cast<std::streamsize>(t.second.size() * 4));
}

TensorList random_network_tensors(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  TensorList t;
  auto add = [&](const std::string& name, std::vector<std::int64_t> shape, float scale, float offset = 0.f) {
    std::int64_t n = 1;
    for (auto d : shape) n *= d;
    std::normal_distribution<float> normal(0.f, scale);
    std::vector<float> v(static_cast<std::size_t>(n));
    for (float& x : v) x = offset + normal(rng);
    t[name] = {shape, v};
  };
  const auto& c = kConfig;
  const auto enc = c["enc_channels"].get<std::vector<int>>();
  const int D = c["feat_dim"], w = c["width"], heads = c["heads"], window = c["window"], ch = c["corr_hidden"];
  const int n_corr = 4 * (2 * c["radius"].get<int>() + 1) * (2 * c["radius"].get<int>() + 1);
  const int token_in = ch + 2 + 4 * c["n_freq"].get<int>() + 1;
  auto conv = [&](const std::string& name, int cin, int cout, int k) {
    add(name + ".weight", {cout, cin, k, k}, 1.f / std::sqrt(static_cast<float>(cin * k * k)));
    add(name + ".bias", {cout}, 0.1f);
  };
  const std::vector<std::tuple<std::string, int, int>> convs = {
      {"stem", 3, enc[0]},      {"down4", enc[0], enc[1]},  {"res4", enc[1], enc[1]},    {"down8", enc[1], enc[2]},
      {"res8", enc[2], enc[2]}, {"down16", enc[2], enc[3]}, {"res16a", enc[3], enc[3]}, {"res16b", enc[3], enc[3]},
      {"down32", enc[3], enc[4]}};
  for (const auto& [name, cin, cout] : convs) conv("encoder." + name + ".conv", cin, cout, 3);
  const std::vector<std::pair<std::string, int>> lats = {{"lat4", enc[1]}, {"lat8", enc[2]}, {"lat16", enc[3]}, {"lat32", enc[4]}};
  for (const auto& [name, cin] : lats) conv("encoder." + name, cin, D, 1);
  auto linear = [&](const std::string& name, int in, int out) {
    add(name + ".weight", {out, in}, 1.f / std::sqrt(static_cast<float>(in)));
    add(name + ".bias", {out}, 0.05f);
  };
  linear("tracker.corr1", n_corr, ch);
  linear("tracker.corr2", ch, ch);
  linear("tracker.inp", token_in, w);
  linear("tracker.head", w, 4);
  add("tracker.h0", {w}, 0.1f);
  add("tracker.rel_bias", {heads, window + 1}, 0.5f);
  for (int b = 0; b < c["blocks"].get<int>(); ++b) {
    const std::string p = "tracker.blocks." + std::to_string(b);
    add(p + ".ln1.weight", {w}, 0.1f, 1.f);
    add(p + ".ln1.bias", {w}, 0.1f);
    add(p + ".ln2.weight", {w}, 0.1f, 1.f);
    add(p + ".ln2.bias", {w}, 0.1f);
    linear(p + ".qkv", w, 3 * w);
    linear(p + ".proj", w, w);
    linear(p + ".fc1", w, c["mlp_ratio"].get<int>() * w);
    linear(p + ".fc2", c["mlp_ratio"].get<int>() * w, w);
  }
  add("tracker.ln_out.weight", {w}, 0.1f, 1.f);
  add("tracker.ln_out.bias", {w}, 0.1f);
  return t;
}

NetworkFiles write_random_network(const std::string& dir, std::uint64_t seed) {
  NetworkFiles files{dir + "/tiny.json", dir + "/tiny.safetensors"};
  std::ofstream(files.config_path) << kConfig.dump(2);
  write_safetensors(files.weights_path, random_network_tensors(seed));
  return files;
}

}  // namespace edgetap::test
