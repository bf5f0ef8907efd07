#include "edgetap/capture/frame_queue.hpp"

namespace edgetap::pipeline {

bool FrameQueue::push(Frame frame) {
  std::unique_lock lock(mutex_);
  if (overflow_ == Overflow::block) {
    not_full_.wait(lock, [&] { return closed_ || frames_.size() < capacity_; });
  }
  if (closed_) return false;
  if (frames_.size() >= capacity_) {
    frames_.pop_front();
    ++drops_;
  }
  frames_.push_back(std::move(frame));
  lock.unlock();
  not_empty_.notify_one();
  return true;
}

std::optional<Frame> FrameQueue::pop(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  if (!not_empty_.wait_for(lock, timeout, [&] { return closed_ || !frames_.empty(); })) return std::nullopt;
  if (frames_.empty()) return std::nullopt;
  Frame frame = std::move(frames_.front());
  frames_.pop_front();
  lock.unlock();
  not_full_.notify_one();
  return frame;
}

void FrameQueue::close() {
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
  }
  not_empty_.notify_all();
  not_full_.notify_all();
}

void FrameQueue::reopen() {
  std::lock_guard lock(mutex_);
  closed_ = false;
}

bool FrameQueue::closed() const {
  std::lock_guard lock(mutex_);
  return closed_;
}

std::uint64_t FrameQueue::drops() const {
  std::lock_guard lock(mutex_);
  return drops_;
}

std::size_t FrameQueue::size() const {
  std::lock_guard lock(mutex_);
  return frames_.size();
}

}  // namespace edgetap::pipeline
