// The live view's HTML: an index and one page per camera, with the little
// script that refreshes the frame and turns a click into a POST of a point.
#include <string>
#include <vector>

#include "edgetap/daemon/live_view.hpp"

namespace edgetap::daemon {
namespace {

// Camera names are letters, digits, '_' and '-' (the configuration checks); escaped anyway.
std::string escaped(const std::string& text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string replaced(std::string text, const std::string& what, const std::string& with) {
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + with.size())) {
    text.replace(at, what.size(), with);
  }
  return text;
}

constexpr const char* kStyle = R"(<style>
body { font-family: sans-serif; margin: 0; background: #181818; color: #eee; }
header { padding: 8px 12px; font-size: 14px; }
header input { width: 8em; }
#frame { display: block; cursor: crosshair; max-width: 100vw; max-height: calc(100vh - 40px); }
.dot, .ring { display: inline-block; width: 10px; height: 10px; border-radius: 50%; border: 2px solid #6cf; }
.dot { background: #6cf; }
a { color: #6cf; }
</style>)";

constexpr const char* kCameraPage = R"(<!doctype html>
<html><head><meta charset="utf-8"><title>edgetap: CAMERA</title>STYLE</head>
<body>
<header>camera <b>CAMERA</b> &middot; <span class="dot"></span> visible <span class="ring"></span> occluded
&middot; click the frame to add point <input id="point-id" value="p1" aria-label="id of the next point">
&middot; <span id="reply"></span> &middot; <a href="/">cameras</a></header>
<img id="frame" alt="the latest frame of CAMERA with its tracks">
<script>
"use strict";
const camera = "CAMERA";
const img = document.getElementById("frame");
const reply = document.getElementById("reply");
const pointId = document.getElementById("point-id");
// Each frame is fetched and decoded first and shown only then: a snapshot that fails
// (no frame yet, the daemon busy) leaves the last frame on the page, not a broken image.
let shown = null;
async function refresh() {
  let url = null;
  try {
    const res = await fetch("/cameras/" + camera + "/snapshot.jpg?tracks=1&t=" + Date.now());
    if (!res.ok) throw new Error("snapshot: HTTP " + res.status);
    url = URL.createObjectURL(await res.blob());
    const next = new Image();
    next.src = url;
    await next.decode();
    img.src = url;
    if (shown) URL.revokeObjectURL(shown);
    shown = url;
    setTimeout(refresh, 100);
  } catch (error) {
    if (url) URL.revokeObjectURL(url);
    setTimeout(refresh, 1000);
  }
}
// The next id: p1 -> p2, door -> door2.
function nextId(id) {
  const m = /^(.*?)(\d+)$/.exec(id);
  return m ? m[1] + (Number(m[2]) + 1) : id + "2";
}
img.addEventListener("click", async (event) => {
  if (!img.naturalWidth) return;  // no frame shown yet
  // Displayed pixels to source pixels, pixel centres at integer coordinates.
  const box = img.getBoundingClientRect();
  const clamp = (v, hi) => Math.min(Math.max(v, 0), hi);
  const x = clamp((event.clientX - box.left) * img.naturalWidth / box.width - 0.5, img.naturalWidth - 1);
  const y = clamp((event.clientY - box.top) * img.naturalHeight / box.height - 0.5, img.naturalHeight - 1);
  const point = {id: pointId.value, x: Math.round(x * 10) / 10, y: Math.round(y * 10) / 10};
  const res = await fetch("/cameras/" + camera + "/points", {
    method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify({points: [point]})});
  const body = await res.json();
  reply.textContent = body.ok && body.added.length
      ? "added " + body.added.join(", ") + " at " + point.x + ", " + point.y
      : "not added: " + (body.error || body.rejected.join("; "));
  if (body.ok && body.added.length) pointId.value = nextId(pointId.value);
});
refresh();
</script>
</body></html>
)";

}  // namespace

std::string live_view_index_html(const std::vector<std::string>& cameras) {
  std::string items;
  for (const std::string& name : cameras) {
    const std::string n = escaped(name);
    items += "<li><a href=\"/cameras/" + n + "/view\">" + n + "</a> (<a href=\"/cameras/" + n +
             "/snapshot.jpg\">snapshot</a>)</li>\n";
  }
  if (items.empty()) items = "<li>no cameras run</li>\n";
  return std::string("<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>edgetap</title>") + kStyle +
         "</head>\n<body><header>edgetapd: live view &middot; <a href=\"/metrics\">metrics</a> &middot; "
         "<a href=\"/healthz\">health</a></header>\n<ul>\n" + items + "</ul></body></html>\n";
}

std::string live_view_camera_html(const std::string& camera) {
  return replaced(replaced(kCameraPage, "STYLE", kStyle), "CAMERA", escaped(camera));
}

}  // namespace edgetap::daemon
