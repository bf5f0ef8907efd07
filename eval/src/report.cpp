#include "edgetap/eval/report.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>

namespace edgetap::eval {
namespace {

using nlohmann::json;

std::string cell(double v) {
  char text[16];
  if (std::isnan(v)) return "     -";
  std::snprintf(text, sizeof text, " %5.3f", v);
  return text;
}

std::string mode_title(QueryMode mode) { return mode == QueryMode::first ? "query-first" : "strided"; }

json number_or_null(double v) { return std::isnan(v) ? json(nullptr) : json(v); }

json scores_json(const TapVidScores& s, double pck) {
  json thresholds = json::object();
  for (std::size_t i = 0; i < kThresholdsPx.size(); ++i) {
    const std::string d = std::to_string(static_cast<int>(kThresholdsPx[i]));
    thresholds["jaccard_" + d] = number_or_null(s.jaccard[i]);
    thresholds["within_" + d] = number_or_null(s.within[i]);
  }
  return {{"average_jaccard", number_or_null(s.average_jaccard)},
          {"average_pts_within_thresh", number_or_null(s.average_within)},
          {"occlusion_accuracy", number_or_null(s.occlusion_accuracy)},
          {"pck_0.2", number_or_null(pck)},
          {"thresholds", thresholds}};
}

json summary_json(const std::vector<ModeSummary>& summary) {
  json out = json::object();
  for (const ModeSummary& m : summary) {
    json entry = scores_json(m.scores, m.pck);
    entry["sequences"] = m.sequences;
    out[to_string(m.mode)] = entry;
  }
  return out;
}

}  // namespace

std::string format_table(const std::string& title, const std::vector<const SequenceResult*>& rows,
                         const std::vector<ModeSummary>& mean) {
  std::string out = title + "\n";
  char line[256];
  std::snprintf(line, sizeof line, "%-22s %6s %6s", "sequence", "frames", "points");
  out += line;
  for (const ModeSummary& m : mean) {
    std::snprintf(line, sizeof line, " | %-11s %7s %6s %6s %6s %6s", mode_title(m.mode).c_str(), "queries", "AJ",
                  "<d_avg", "OA", "PCK");
    out += line;
  }
  out += "\n";
  for (const SequenceResult* s : rows) {
    std::snprintf(line, sizeof line, "%-22s %6d %6d", s->name.c_str(), s->frames, s->points);
    out += line;
    for (const ModeResult& m : s->modes) {
      std::snprintf(line, sizeof line, " | %-11s %7d", "", m.queries);
      out += line + cell(m.scores.average_jaccard) + cell(m.scores.average_within) +
             cell(m.scores.occlusion_accuracy) + cell(m.pck);
    }
    out += "\n";
  }
  std::snprintf(line, sizeof line, "%-22s %6s %6s", "mean", "", "");
  out += line;
  for (const ModeSummary& m : mean) {
    std::snprintf(line, sizeof line, " | %-11s %7s", (std::to_string(m.sequences) + " seqs").c_str(), "");
    out += line + cell(m.scores.average_jaccard) + cell(m.scores.average_within) + cell(m.scores.occlusion_accuracy) +
           cell(m.pck);
  }
  return out + "\n";
}

std::string format_json(const std::vector<DatasetResult>& datasets, const EvalOptions& options) {
  json modes = json::array();
  for (QueryMode m : options.modes) modes.push_back(to_string(m));
  json root = {{"tracker", options.tracker},
               {"frame_size", to_string(options.size)},
               {"modes", modes},
               {"strided_stride", options.stride},
               {"every", options.every},
               {"metric_size", kMetricSize},
               {"pck_alpha", kPckAlpha}};
  json list = json::array();
  for (const DatasetResult& d : datasets) {
    json sequences = json::array();
    std::vector<const SequenceResult*> rows;
    for (const SequenceResult& s : d.sequences) {
      rows.push_back(&s);
      json per_mode = json::object();
      for (const ModeResult& m : s.modes) {
        json entry = scores_json(m.scores, m.pck);
        entry["queries"] = m.queries;
        per_mode[to_string(m.mode)] = entry;
      }
      sequences.push_back({{"name", s.name},
                           {"size", {s.width, s.height}},
                           {"frames", s.frames},
                           {"points", s.points},
                           {"track_seconds", s.track_seconds},
                           {"scores", per_mode}});
    }
    list.push_back({{"name", d.name}, {"path", d.path}, {"sequences", sequences},
                    {"mean", summary_json(summarize(rows, options.modes))}});
  }
  root["datasets"] = list;
  root["overall"] = summary_json(summarize(all_sequences(datasets), options.modes));
  return root.dump(2) + "\n";
}

}  // namespace edgetap::eval
