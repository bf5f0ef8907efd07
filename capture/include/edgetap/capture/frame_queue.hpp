// The bounded queue between a camera's capture thread and its tracking thread.
// Live sources drop the oldest frame when full (every drop counted); a file read
// as fast as possible blocks the producer instead, so no frame is skipped.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>

#include "edgetap/capture/frame.hpp"

namespace edgetap::pipeline {

class FrameQueue {
 public:
  enum class Overflow { drop_oldest, block };

  FrameQueue(std::size_t capacity, Overflow overflow) : capacity_(capacity), overflow_(overflow) {}

  // Adds a frame; returns false when the queue is closed.
  bool push(Frame frame);
  // Waits up to `timeout` for a frame; nullopt on timeout or when closed and empty.
  std::optional<Frame> pop(std::chrono::milliseconds timeout);
  // No more frames will come; wakes every waiter. Frames already queued can still be popped.
  void close();
  // Opens a closed queue again (a pipeline restarted).
  void reopen();

  bool closed() const;
  std::uint64_t drops() const;
  std::size_t size() const;

 private:
  const std::size_t capacity_;
  const Overflow overflow_;
  mutable std::mutex mutex_;
  std::condition_variable not_empty_;
  std::condition_variable not_full_;
  std::deque<Frame> frames_;
  std::uint64_t drops_ = 0;
  bool closed_ = false;
};

}  // namespace edgetap::pipeline
