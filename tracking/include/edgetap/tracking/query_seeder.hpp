// Chooses where new tracks start, by the camera's query policy:
//   grid      N x M points at cell centres;
//   features  strong corners (Shi-Tomasi), topped up to a count, kept a minimum
//             distance from live tracks;
//   points    an explicit list in source-image pixels.
// Grid and explicit points are slots: when a slot's track is lost it is
// re-seeded at the slot's position under a new id ("<base>.<generation>").
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "edgetap/config/config.hpp"
#include "edgetap/tracker.hpp"

namespace edgetap::pipeline {

class QuerySeeder {
 public:
  explicit QuerySeeder(const config::QuerySettings& settings);

  // New queries for `frame` (model pixels) given the tracks alive after it.
  // `source_width/height` convert explicit points from source-image pixels.
  std::vector<Query> seed(const ImageView& frame, int source_width, int source_height,
                          std::span<const TrackPoint> live);
  // Stops re-seeding the slot whose live track is `id` (a track removed on request).
  void retire(const std::string& id);
  // How many queries the first frame starts: the grid's, the explicit points, or
  // at most the features' count.
  std::size_t initial_count() const noexcept;

 private:
  struct Slot {
    std::string base;
    float x = 0;  // model pixels
    float y = 0;
    std::string current;  // id of the slot's live track, "" when free
    int generation = 0;
    bool retired = false;
  };
  void make_slots(const ImageView& frame, int source_width, int source_height);
  std::vector<Query> seed_slots(std::span<const TrackPoint> live);
  std::vector<Query> seed_features(const ImageView& frame, std::span<const TrackPoint> live);

  config::QuerySettings settings_;
  std::vector<Slot> slots_;
  bool slots_made_ = false;
  bool seeded_once_ = false;
  std::uint64_t next_feature_ = 0;
};

}  // namespace edgetap::pipeline
