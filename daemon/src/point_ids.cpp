#include "edgetap/daemon/point_ids.hpp"

#include <cstdint>
#include <cstdio>

namespace edgetap::daemon {
namespace {

constexpr char32_t kInvalid = 0xFFFFFFFF;

// Decodes the UTF-8 code point at text[at], advancing `at`; kInvalid for a bad sequence.
char32_t next_code_point(std::string_view text, std::size_t& at) {
  const auto lead = static_cast<unsigned char>(text[at++]);
  if (lead < 0x80) return lead;
  const int extra = lead >= 0xF0 && lead < 0xF8 ? 3 : lead >= 0xE0 ? 2 : lead >= 0xC0 ? 1 : -1;
  if (extra < 0 || at + static_cast<std::size_t>(extra) > text.size()) return kInvalid;
  char32_t c = lead & (0x3F >> extra);
  for (int i = 0; i < extra; ++i) {
    const auto next = static_cast<unsigned char>(text[at++]);
    if ((next & 0xC0) != 0x80) return kInvalid;
    c = (c << 6) | (next & 0x3F);
  }
  return c;
}

bool is_control(char32_t c) { return c < 0x20 || (c >= 0x7F && c <= 0x9F); }

// Marks, embeddings, overrides and isolates that reorder displayed text.
bool is_bidi_control(char32_t c) {
  return c == 0x061C || c == 0x200E || c == 0x200F || (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069);
}

std::string code_point_name(char32_t c) {
  char name[16];
  std::snprintf(name, sizeof(name), "U+%04X", static_cast<unsigned>(c));
  return name;
}

}  // namespace

std::string point_id_problem(std::string_view id, std::size_t max_bytes) {
  if (id.empty()) return "the id is empty";
  if (id.size() > max_bytes) {
    return "the id is " + std::to_string(id.size()) + " bytes, more than " + std::to_string(max_bytes) +
           " (control.max_id_bytes)";
  }
  for (std::size_t at = 0; at < id.size();) {
    const char32_t c = next_code_point(id, at);
    if (c == kInvalid) return "the id is not valid UTF-8";
    if (is_control(c)) return "the id holds the control character " + code_point_name(c);
    if (is_bidi_control(c)) return "the id holds the bidirectional-text control " + code_point_name(c);
  }
  return "";
}

}  // namespace edgetap::daemon
