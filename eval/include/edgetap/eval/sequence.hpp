// Ground truth of one evaluation sequence, as gt.json describes it (see
// ../shared/DESIGN.md, "Dataset format"): per point and frame a position and a
// visibility flag, either of which may be unknown (null), in the pixels of the
// sequence's frames with pixel centres at integer coordinates.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace edgetap::eval {

// Bad evaluation input (missing file, malformed gt.json, frame count that does
// not match). The message names the file and what is wrong with it.
class DatasetError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One point in one frame. `known` is false where the annotation is null: such
// frames are never scored. An occluded point may have no position (has_xy).
struct GtSample {
  bool known = false;
  bool visible = false;
  bool has_xy = false;
  double x = 0;
  double y = 0;
};

struct GtPoint {
  std::string id;
  int query_frame = 0;         // where the tracker is told the point is
  double query_x = 0;
  double query_y = 0;
  std::vector<GtSample> frames;  // num_frames entries
  int layer = -1;              // generated sequences: the layer it lies on (0 = background); -1 unknown
};

struct Sequence {
  std::string name;                 // the folder's name
  std::filesystem::path dir;        // holds gt.json and frames/ (or video.*)
  int width = 0;
  int height = 0;
  int num_frames = 0;
  std::vector<GtPoint> points;
  std::vector<double> mask_area;    // per frame, <= 0 where unknown; empty when the file has none
  std::string source;               // free text: where the data came from
};

}  // namespace edgetap::eval
