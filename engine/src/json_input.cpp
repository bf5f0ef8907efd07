#include "edgetap/json_input.hpp"

namespace edgetap {

nlohmann::json parse_json_input(std::string_view text, std::string& error) {
  using nlohmann::json;
  // The callback sees `depth` = the containers around the value starting (0 for the
  // outermost). A value refused here is discarded without being built; the parse goes
  // on iteratively, so it costs memory in proportion to the text, never stack.
  bool too_deep = false;
  const json::parser_callback_t refuse_deep = [&too_deep](int depth, json::parse_event_t event, json&) {
    const bool opens = event == json::parse_event_t::object_start || event == json::parse_event_t::array_start;
    if (opens && depth >= kMaxJsonDepth) too_deep = true;
    return !too_deep;
  };
  json value;
  try {
    value = json::parse(text, refuse_deep);
  } catch (const json::exception& e) {  // a syntax error, with its position
    error = e.what();
    value = json(json::value_t::discarded);
  }
  if (too_deep) {
    error = "arrays and objects nested more than " + std::to_string(kMaxJsonDepth) + " deep (the limit)";
    return json(json::value_t::discarded);
  }
  return value;
}

}  // namespace edgetap
