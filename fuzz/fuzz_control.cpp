// The control protocol on arbitrary request lines: ControlServer::answer (the JSON
// parse with its depth limit, the id echo, the reply's dump) over
// handle_control_request (dispatch and every check on cmd, camera, points and ids)
// against a runtime with one camera, "gate", whose source cannot open. Its worker
// has stopped, so a request that passes every check gets "the camera has stopped"
// at once instead of waiting for a frame. Every line must get one JSON reply line;
// an exception, a crash or a sanitizer report is a bug.
#include <stdlib.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "edgetap/config/load.hpp"
#include "edgetap/daemon/control_commands.hpp"
#include "edgetap/daemon/control_server.hpp"
#include "edgetap/daemon/logging.hpp"
#include "edgetap/daemon/runtime.hpp"

namespace {

using namespace edgetap;

// Made once and never destroyed: libFuzzer ends the process with exit().
daemon::Runtime* runtime = nullptr;
daemon::ControlServer* control = nullptr;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  char dir_template[] = "/tmp/edgetap-fuzz-control-XXXXXX";
  const char* dir = ::mkdtemp(dir_template);
  if (dir == nullptr) std::abort();
  const std::string yaml = "publisher: {socket: '" + std::string(dir) +
                           "/tracks.sock'}\n"
                           "cameras:\n"
                           "  - {name: gate, source: 'file:///nonexistent/gate.mp4', model_size: [80, 60],"
                           " tracker: klt, queries: {grid: [4, 4]}}\n";
  runtime = new daemon::Runtime(config::load_string(yaml, "fuzz.yaml", dir));
  std::string error;
  if (!runtime->start(error)) std::abort();
  for (int i = 0; i < 500 && !runtime->all_finished(); ++i) ::usleep(10000);
  if (!runtime->all_finished()) std::abort();  // see above: requests must not wait for frames
  control = new daemon::ControlServer(
      std::string(dir) + "/control.sock",
      [](const nlohmann::json& request) { return daemon::handle_control_request(*runtime, request); },
      daemon::make_logger("control"));
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string line(reinterpret_cast<const char*>(data), size);
  const std::string reply = control->answer(line);
  // One line of JSON whatever came in (the reply is ASCII: no raw newline inside).
  if (reply.empty() || reply.back() != '\n' || reply.find('\n') != reply.size() - 1) std::abort();
  if (!nlohmann::json::accept(reply)) std::abort();
  return 0;
}
