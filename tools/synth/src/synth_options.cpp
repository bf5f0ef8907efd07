#include "edgetap/synth/synth_options.hpp"

namespace edgetap::synth {

std::string validate(const SynthOptions& o) {
  if (o.width < 32 || o.height < 32 || o.width > 4096 || o.height > 4096) return "size must be 32..4096 pixels a side";
  if (o.frames < 2 || o.frames > 10000) return "frames must be 2..10000";
  if (o.points < 1 || o.points > 100000) return "points must be 1..100000";
  if (o.sequences < 1) return "sequences must be at least 1";
  if (o.speed < 0 || o.speed > 64) return "speed must be 0..64 pixels per frame";
  if (o.rotation < 0 || o.rotation > 45) return "rotation must be 0..45 degrees per frame";
  if (o.scale_change < 0 || o.scale_change > 4) return "scale-change must be 0..4";
  if (o.occluders < 0 || o.occluders > 32) return "occluders must be 0..32";
  if (o.perspective < 0 || o.perspective > 0.5) return "perspective must be 0..0.5";
  if (o.drift < 0 || o.drift > 0.9) return "drift must be 0..0.9";
  if (o.noise < 0 || o.noise > 64) return "noise must be 0..64";
  if (o.blur_samples < 1 || o.blur_samples > 64) return "blur samples must be 1..64";
  if (o.shutter < 0 || o.shutter > 1) return "shutter must be 0..1";
  if (o.background_share < 0 || o.background_share > 1) return "background share must be 0..1";
  if (o.format != "jpg" && o.format != "png") return "format must be jpg or png";
  if (o.backgrounds.empty()) return "no background images given";
  if (o.occluders > 0 && o.cutouts.empty()) return "no cut-out images given (--cutouts), or use --occluders 0";
  return "";
}

}  // namespace edgetap::synth
