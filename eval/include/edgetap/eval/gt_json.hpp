// Reading and writing gt.json. Reading validates everything the evaluator
// relies on and throws DatasetError naming the file and the offending key
// (for example "points[3].xy has 12 entries, num_frames is 90").
#pragma once

#include <filesystem>
#include <string>

#include "edgetap/eval/sequence.hpp"

namespace edgetap::eval {

// Parses gt.json text; `origin` names the file in error messages. A point
// without "query" gets the first frame where it is known and visible
// (the TAP-Vid query-first rule); a point visible nowhere is an error.
Sequence parse_ground_truth(const std::string& text, const std::string& origin);

// Reads <dir>/gt.json. The sequence's name is the folder's name.
Sequence read_ground_truth(const std::filesystem::path& dir);

// Writes `sequence` as gt.json text (positions rounded to 1/1000 px).
std::string format_ground_truth(const Sequence& sequence);

}  // namespace edgetap::eval
