// Parsing JSON that comes from outside the process: a control request, a track
// subscriber's hello, a model file's header or configuration. nlohmann's parser is
// iterative, but copying, comparing and dumping a value recurse once per level of
// nesting, so 100,000 nested arrays in a 200 KB line overflow the stack. Every such
// parse goes through parse_json_input, which refuses nesting beyond kMaxJsonDepth.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace edgetap {

// The deepest nesting of arrays and objects accepted, the outermost value counting 1.
// EdgeTAP's own messages and files nest at most 4 deep.
inline constexpr int kMaxJsonDepth = 32;

// `text` as one JSON value; on failure a discarded value (is_discarded()) and `error`
// says why: the parser's message (with the position), or nesting deeper than kMaxJsonDepth.
nlohmann::json parse_json_input(std::string_view text, std::string& error);

}  // namespace edgetap
