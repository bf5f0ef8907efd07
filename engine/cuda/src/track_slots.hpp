// A CUDA session's track handles: the slots of its per-track buffers, handed
// out as engine::StreamingSession hands out its handles (the last one freed
// first, then the next never used), and which of them are alive.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace edgetap::gpu {

class TrackSlots {
 public:
  // Room for `capacity` slots; the alive ones stay alive.
  void resize(int capacity) { alive_.resize(static_cast<std::size_t>(capacity), false); }
  int capacity() const noexcept { return static_cast<int>(alive_.size()); }
  int alive_count() const noexcept { return alive_count_; }
  bool alive(int slot) const { return slot >= 0 && slot < capacity() && alive_[static_cast<std::size_t>(slot)]; }

  // A free slot, now alive (resize first where none is free).
  int take() {
    int slot;
    if (!free_.empty()) {
      slot = free_.back();
      free_.pop_back();
    } else {
      slot = next_++;
    }
    alive_[static_cast<std::size_t>(slot)] = true;
    ++alive_count_;
    return slot;
  }
  void release(int slot) {
    if (!alive(slot)) return;
    alive_[static_cast<std::size_t>(slot)] = false;
    free_.push_back(slot);
    --alive_count_;
  }
  // Every slot free again, handed out from 0 as a new session's.
  void clear() {
    std::fill(alive_.begin(), alive_.end(), false);
    free_.clear();
    next_ = 0;
    alive_count_ = 0;
  }
  // The alive slots in order into `out`; returns how many.
  int list(int* out) const {
    int n = 0;
    for (int s = 0; s < capacity(); ++s) {
      if (alive_[static_cast<std::size_t>(s)]) out[n++] = s;
    }
    return n;
  }

 private:
  std::vector<bool> alive_;
  std::vector<int> free_;
  int next_ = 0;
  int alive_count_ = 0;
};

}  // namespace edgetap::gpu
