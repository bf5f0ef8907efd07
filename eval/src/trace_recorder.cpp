#include "edgetap/eval/trace_recorder.hpp"

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <system_error>
#include <utility>

#include "edgetap/tracker_trace.hpp"

namespace edgetap::eval {

// The trace being written: the JSON lines file and the frames folder.
class TraceSink {
 public:
  explicit TraceSink(const std::filesystem::path& dir) : dir_(dir), file_(dir / trace::kTraceFile) {
    std::error_code ec;
    if (std::filesystem::exists(dir, ec) && !std::filesystem::is_empty(dir, ec)) {
      throw std::runtime_error(dir.string() + ": the trace folder must be new or empty");
    }
    std::filesystem::create_directories(dir / trace::kFramesDir, ec);
    if (ec) throw std::runtime_error(dir.string() + ": cannot create the trace folder: " + ec.message());
    out_.open(file_);
    if (!out_) throw std::runtime_error(file_.string() + ": cannot write");
  }

  int new_pass() noexcept { return passes_++; }
  int passes() const noexcept { return passes_; }
  long long frames() const noexcept { return frames_; }

  // Writes the frame as an RGB PNG; returns its name inside the folder.
  std::string write_frame(int pass, int index, const ImageView& frame) {
    if (frame.empty()) throw std::runtime_error("pass " + std::to_string(pass) + ": an empty frame");
    char name[64];
    std::snprintf(name, sizeof name, "%s/p%05d-f%06d.png", trace::kFramesDir, pass, index);
    const cv::Mat rgb(frame.height, frame.width, CV_8UC3, const_cast<std::uint8_t*>(frame.data), frame.stride);
    cv::Mat bgr;
    cv::cvtColor(rgb, bgr, cv::COLOR_RGB2BGR);
    // Level 1: higher levels save nothing on camera frames (126 KB per 256x256
    // frame of the eval sets at 1, 3, 6 and 9) and take twice as long.
    if (!cv::imwrite((dir_ / name).string(), bgr, {cv::IMWRITE_PNG_COMPRESSION, 1})) {
      throw std::runtime_error((dir_ / name).string() + ": cannot write");
    }
    ++frames_;
    return name;
  }

  void write(const trace::Call& call) {
    out_ << trace::format_call(call) << '\n';
    out_.flush();
    if (!out_) throw std::runtime_error(file_.string() + ": cannot write");
  }

 private:
  std::filesystem::path dir_;
  std::filesystem::path file_;
  std::ofstream out_;
  int passes_ = 0;
  long long frames_ = 0;
};

namespace {

trace::Call call_of(int pass, trace::Op op) {
  trace::Call call;
  call.pass = pass;
  call.op = op;
  return call;
}

// Writes each call to the sink, then makes it on the real tracker.
class RecordingTracker final : public Tracker {
 public:
  RecordingTracker(std::unique_ptr<Tracker> inner, std::shared_ptr<TraceSink> sink)
      : inner_(std::move(inner)), sink_(std::move(sink)), pass_(sink_->new_pass()) {}

  std::string_view name() const noexcept override { return inner_->name(); }
  std::size_t size() const noexcept override { return inner_->size(); }
  std::size_t capacity() const noexcept override { return inner_->capacity(); }

  void add_queries(std::span<const Query> queries) override {
    trace::Call call = call_of(pass_, trace::Op::add_queries);
    call.queries.assign(queries.begin(), queries.end());
    sink_->write(call);
    inner_->add_queries(queries);
  }

  std::size_t remove_queries(std::span<const std::string> ids) override {
    trace::Call call = call_of(pass_, trace::Op::remove_queries);
    call.ids.assign(ids.begin(), ids.end());
    sink_->write(call);
    return inner_->remove_queries(ids);
  }

  // A hint, not a call the trace replays: the replay announces its own frames.
  void encode_ahead(std::span<const ImageView> frames) override { inner_->encode_ahead(frames); }

  Status push_frame(const ImageView& frame, std::vector<TrackPoint>& out) noexcept override {
    try {
      trace::Call call = call_of(pass_, trace::Op::push_frame);
      call.frame = pushes_;
      call.file = sink_->write_frame(pass_, pushes_, frame);
      call.width = frame.width;
      call.height = frame.height;
      sink_->write(call);
    } catch (const std::exception& e) {
      return Status::error(Status::Code::internal, std::string("recording the trace: ") + e.what());
    }
    ++pushes_;
    return inner_->push_frame(frame, out);
  }

 private:
  std::unique_ptr<Tracker> inner_;
  std::shared_ptr<TraceSink> sink_;
  int pass_;
  int pushes_ = 0;
};

}  // namespace

TraceRecorder::TraceRecorder(const std::filesystem::path& dir) : sink_(std::make_shared<TraceSink>(dir)) {}

TrackerFactory TraceRecorder::wrap(TrackerFactory make_tracker) {
  return [make_tracker = std::move(make_tracker), sink = sink_]() -> std::unique_ptr<Tracker> {
    return std::make_unique<RecordingTracker>(make_tracker(), sink);
  };
}

int TraceRecorder::passes() const noexcept { return sink_->passes(); }
long long TraceRecorder::frames() const noexcept { return sink_->frames(); }

}  // namespace edgetap::eval
