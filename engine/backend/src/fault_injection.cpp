#include "edgetap/backend/fault_injection.hpp"

#include <atomic>
#include <cstdlib>
#include <optional>

namespace edgetap::backend {

namespace {

// The frame the hook fails at, read once: nullopt when unset or not a positive number.
std::optional<std::int64_t> fault_frame() {
  static const std::optional<std::int64_t> frame = []() -> std::optional<std::int64_t> {
    const char* value = std::getenv(kInjectFaultVariable);
    if (value == nullptr) return std::nullopt;
    char* end = nullptr;
    const long long n = std::strtoll(value, &end, 10);
    if (end == value || *end != '\0' || n < 1) return std::nullopt;
    return n;
  }();
  return frame;
}

// Whether a session of this process has taken the fault yet.
std::atomic<bool> fault_spent{false};

// Counts its frames; the first session of the process to reach the fault
// frame takes the fault and keeps failing from then on.
class FailingSession final : public engine::TrackingSession {
 public:
  FailingSession(std::unique_ptr<engine::TrackingSession> inner, std::int64_t fail_at)
      : inner_(std::move(inner)), fail_at_(fail_at) {}

  Status push_frame(const ImageView& frame) noexcept override {
    if (++pushed_ == fail_at_ && !fault_spent.exchange(true)) failed_ = true;
    if (failed_) return Status::error(Status::Code::internal, kInjectedFaultMessage);
    return inner_->push_frame(frame);
  }
  std::vector<int> add_tracks(std::span<const engine::Point2> points) override { return inner_->add_tracks(points); }
  void remove_track(int handle) override { inner_->remove_track(handle); }
  bool alive(int handle) const override { return inner_->alive(handle); }
  const engine::TrackEstimate& estimate(int handle) const override { return inner_->estimate(handle); }
  std::int64_t frames() const noexcept override { return inner_->frames(); }
  void warm_up(int width, int height, std::span<const int> batches) override { inner_->warm_up(width, height, batches); }
  void encode_ahead(std::span<const ImageView> frames) override { inner_->encode_ahead(frames); }

 private:
  std::unique_ptr<engine::TrackingSession> inner_;
  std::int64_t fail_at_;
  std::int64_t pushed_ = 0;
  bool failed_ = false;
};

}  // namespace

std::unique_ptr<engine::TrackingSession> with_injected_fault(std::unique_ptr<engine::TrackingSession> session) {
  const std::optional<std::int64_t> frame = fault_frame();
  if (!frame || fault_spent.load()) return session;
  return std::make_unique<FailingSession>(std::move(session), *frame);
}

}  // namespace edgetap::backend
