#include "edgetap/camera/compute_gate.hpp"

namespace edgetap::pipeline {

ComputeGate::Turn::Turn(ComputeGate& gate) : gate_(gate) {
  std::unique_lock lock(gate_.mutex_);
  const std::uint64_t ticket = gate_.next_ticket_++;
  gate_.turn_.wait(lock, [&] { return gate_.serving_ == ticket; });
}

ComputeGate::Turn::~Turn() {
  {
    std::lock_guard lock(gate_.mutex_);
    ++gate_.serving_;
  }
  gate_.turn_.notify_all();
}

}  // namespace edgetap::pipeline
