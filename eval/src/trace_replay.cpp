#include "edgetap/eval/trace_replay.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include "edgetap/tracker_trace.hpp"

namespace edgetap::eval {

// The trace and how far each pass has been replayed.
class ReplayState {
 public:
  ReplayState(trace::Trace read, std::string tracker_name)
      : trace(std::move(read)), name(std::move(tracker_name)), next_call(trace.passes.size(), 0) {}
  trace::Trace trace;
  std::string name;
  std::vector<std::size_t> next_call;  // per pass
  std::size_t passes_made = 0;
};

namespace {

std::string position(float x, float y) {
  std::ostringstream s;
  s.precision(9);
  s << "(" << x << ", " << y << ")";
  return s.str();
}

bool same(float a, float b) { return a == b || (std::isnan(a) && std::isnan(b)); }

class ReplayTracker final : public Tracker {
 public:
  ReplayTracker(std::shared_ptr<ReplayState> state, std::size_t pass) : state_(std::move(state)), pass_(pass) {}

  std::string_view name() const noexcept override { return state_->name; }
  std::size_t size() const noexcept override { return live_.size(); }

  void add_queries(std::span<const Query> queries) override {
    const trace::Call& call = expect(trace::Op::add_queries);
    for (std::size_t i = 0; i < std::max(queries.size(), call.queries.size()); ++i) {
      if (i >= queries.size() || i >= call.queries.size()) {
        const std::string& id = i < queries.size() ? queries[i].id : call.queries[i].id;
        fail(call, "add_queries of " + std::to_string(queries.size()) + " queries where the trace has " +
                       std::to_string(call.queries.size()) + " (first differing id " + id + ")");
      }
      const Query& got = queries[i];
      const Query& want = call.queries[i];
      if (got.id != want.id) fail(call, "add_queries id " + got.id + " where the trace has id " + want.id);
      if (!same(got.x, want.x) || !same(got.y, want.y)) {
        fail(call, "add_queries id " + got.id + " at " + position(got.x, got.y) + " where the trace has " +
                       position(want.x, want.y));
      }
      live_.insert(got.id);
    }
    advance();
  }

  std::size_t remove_queries(std::span<const std::string> ids) override {
    const trace::Call& call = expect(trace::Op::remove_queries);
    if (ids.size() != call.ids.size() || !std::equal(ids.begin(), ids.end(), call.ids.begin())) {
      std::size_t i = 0;
      while (i < ids.size() && i < call.ids.size() && ids[i] == call.ids[i]) ++i;
      const std::string id = i < ids.size() ? ids[i] : call.ids[i];
      fail(call, "remove_queries differs from the trace at id " + id);
    }
    std::size_t removed = 0;
    for (const std::string& id : ids) removed += live_.erase(id);
    advance();
    return removed;
  }

  Status push_frame(const ImageView& frame, std::vector<TrackPoint>& out) noexcept override {
    out.clear();
    try {
      const trace::Call& call = expect(trace::Op::push_frame);
      if (frame.width != call.width || frame.height != call.height) {
        fail(call, "push_frame " + std::to_string(call.frame) + " of a " + std::to_string(frame.width) + "x" +
                       std::to_string(frame.height) + " frame where the trace has " + std::to_string(call.width) +
                       "x" + std::to_string(call.height));
      }
      out = *call.points;
      for (const TrackPoint& p : out) {
        if (p.lost) live_.erase(p.id);
      }
      advance();
      return Status::ok();
    } catch (const std::exception& e) {
      out.clear();
      return Status::error(Status::Code::invalid_argument, e.what());
    }
  }

 private:
  // The pass's next call, which must be an `op`.
  const trace::Call& expect(trace::Op op) const {
    const auto& calls = state_->trace.passes.size() > pass_ ? state_->trace.passes[pass_] : kNone;
    const std::size_t index = pass_ < state_->next_call.size() ? state_->next_call[pass_] : 0;
    if (index >= calls.size()) {
      throw trace::TraceError(state_->trace.file.string() + ": pass " + std::to_string(pass_) + ": call " +
                              std::to_string(index + 1) + " (" + trace::to_string(op) + ") is past the " +
                              std::to_string(calls.size()) + " calls the trace has for this pass");
    }
    const trace::Call& call = calls[index];
    if (call.op != op) {
      fail(call, std::string(trace::to_string(op)) + " where the trace has " + trace::to_string(call.op));
    }
    return call;
  }

  [[noreturn]] void fail(const trace::Call& call, const std::string& what) const {
    throw trace::TraceError(trace::where(state_->trace, call) + "call " + std::to_string(state_->next_call[pass_] + 1) +
                            ": " + what + " (the run differs from the one recorded)");
  }

  void advance() { ++state_->next_call[pass_]; }

  static inline const std::vector<trace::Call> kNone{};
  std::shared_ptr<ReplayState> state_;
  std::size_t pass_;
  std::set<std::string> live_;
};

}  // namespace

TraceReplay::TraceReplay(const std::filesystem::path& answered_trace, std::string tracker_name)
    : state_(std::make_shared<ReplayState>(trace::read_trace(answered_trace, true), std::move(tracker_name))) {}

TrackerFactory TraceReplay::factory() const {
  return [state = state_]() -> std::unique_ptr<Tracker> {
    return std::make_unique<ReplayTracker>(state, state->passes_made++);
  };
}

void TraceReplay::check_complete() const {
  const auto& passes = state_->trace.passes;
  if (state_->passes_made < passes.size()) {
    throw trace::TraceError(state_->trace.file.string() + ": the trace has " + std::to_string(passes.size()) +
                            " passes, the run made " + std::to_string(state_->passes_made) +
                            " (the run differs from the one recorded)");
  }
  for (std::size_t p = 0; p < passes.size(); ++p) {
    if (state_->next_call[p] < passes[p].size()) {
      const trace::Call& call = passes[p][state_->next_call[p]];
      throw trace::TraceError(trace::where(state_->trace, call) + "the run ended before call " +
                              std::to_string(state_->next_call[p] + 1) + " (" + trace::to_string(call.op) +
                              ") of " + std::to_string(passes[p].size()));
    }
  }
}

}  // namespace edgetap::eval
