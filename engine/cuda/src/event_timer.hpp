// Per-stage GPU time of one frame from CUDA events: begin(stage) closes the
// stage before it and opens this one. Off (and free) unless reset(true).
#pragma once

#include <cuda_runtime_api.h>

#include <vector>

#include "edgetap/engine/streaming_session.hpp"
#include "edgetap/kernels/cuda/check.hpp"

namespace edgetap::gpu {

enum class Stage { encoder, correlation, token, transformer, head };

class EventTimer {
 public:
  explicit EventTimer(cudaStream_t stream) : stream_(stream) {}
  ~EventTimer() {
    for (cudaEvent_t e : pool_) cudaEventDestroy(e);
  }
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;

  void reset(bool on) {
    on_ = on;
    marks_.clear();
    open_ = false;
    used_ = 0;
  }
  void begin(Stage stage) {
    if (!on_) return;
    end();
    marks_.push_back({stage, record(), nullptr});
    open_ = true;
  }
  void end() {
    if (!on_ || !open_) return;
    marks_.back().stop = record();
    open_ = false;
  }
  // Milliseconds per stage; the stream must have reached the last event.
  engine::StepProfile profile() const {
    engine::StepProfile p;
    for (const Mark& m : marks_) {
      if (m.stop == nullptr) continue;
      float ms = 0.f;
      EDGETAP_CUDA_CHECK(cudaEventElapsedTime(&ms, m.start, m.stop));
      slot(p, m.stage) += ms;
    }
    return p;
  }

 private:
  struct Mark {
    Stage stage;
    cudaEvent_t start, stop;
  };
  static double& slot(engine::StepProfile& p, Stage s) {
    switch (s) {
      case Stage::encoder: return p.encoder;
      case Stage::correlation: return p.correlation;
      case Stage::token: return p.token;
      case Stage::transformer: return p.transformer;
      case Stage::head: break;
    }
    return p.head;
  }
  // Events are made the first time a frame needs that many, then reused.
  cudaEvent_t record() {
    if (used_ == pool_.size()) {
      cudaEvent_t e = nullptr;
      EDGETAP_CUDA_CHECK(cudaEventCreate(&e));
      pool_.push_back(e);
    }
    cudaEvent_t e = pool_[used_++];
    EDGETAP_CUDA_CHECK(cudaEventRecord(e, stream_));
    return e;
  }

  cudaStream_t stream_;
  bool on_ = false, open_ = false;
  std::vector<Mark> marks_;
  std::vector<cudaEvent_t> pool_;
  std::size_t used_ = 0;
};

}  // namespace edgetap::gpu
