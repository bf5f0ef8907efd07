// First come, first served access to the CPU's BLAS threads for the cameras
// running the network there (GPU rungs and klt do not take turns): a ticket
// lock, so a camera with heavy frames takes its turn like the others and cannot starve them.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace edgetap::pipeline {

class ComputeGate {
 public:
  class Turn {
   public:
    explicit Turn(ComputeGate& gate);
    ~Turn();
    Turn(const Turn&) = delete;
    Turn& operator=(const Turn&) = delete;

   private:
    ComputeGate& gate_;
  };

 private:
  std::mutex mutex_;
  std::condition_variable turn_;
  std::uint64_t next_ticket_ = 0;
  std::uint64_t serving_ = 0;
};

}  // namespace edgetap::pipeline
