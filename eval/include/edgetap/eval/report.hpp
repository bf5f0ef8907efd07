// Presenting results: a fixed-width table per dataset (one row per sequence
// and a mean row) and the whole run as JSON.
#pragma once

#include <string>
#include <vector>

#include "edgetap/eval/evaluation.hpp"

namespace edgetap::eval {

// `rows` may be empty (overall table: only the mean row).
std::string format_table(const std::string& title, const std::vector<const SequenceResult*>& rows,
                         const std::vector<ModeSummary>& mean);

// Everything: options, per-sequence scores (all thresholds), per-dataset and overall means.
std::string format_json(const std::vector<DatasetResult>& datasets, const EvalOptions& options);

}  // namespace edgetap::eval
