#include <algorithm>
#include <exception>
#include <stdexcept>
#include <thread>

#include "edgetap/engine/template_aligner.hpp"

namespace edgetap::engine {

namespace {

int thread_count(int requested) {
  if (requested > 0) return requested;
  const unsigned hardware = std::thread::hardware_concurrency();
  return std::clamp(static_cast<int>(hardware), 1, CpuTemplateAligner::kMaxThreads);
}

}  // namespace

CpuTemplateAligner::CpuTemplateAligner(const TemplateAlignmentConfig& config, int threads)
    : config_(config), threads_(thread_count(threads)) {}

std::vector<bool> CpuTemplateAligner::capture(std::span<const int> handles, std::span<const Point2> points) {
  if (handles.size() != points.size()) throw std::invalid_argument("capture: one point per handle");
  std::vector<bool> has_template(handles.size());
  for (std::size_t i = 0; i < handles.size(); ++i) {
    const auto h = static_cast<std::size_t>(handles[i]);
    if (h >= templates_.size()) templates_.resize(h + 1);
    templates_[h] = capture_template(frame_, points[i].x, points[i].y, config_);
    has_template[i] = !templates_[h].empty();
  }
  return has_template;
}

void CpuTemplateAligner::align(std::span<const AlignmentJob> jobs, std::vector<AlignmentResult>& results) {
  const std::size_t n = jobs.size();
  results.assign(n, AlignmentResult{});
  const auto align_range = [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      const AlignmentJob& j = jobs[i];
      results[i] = align_template(frame_, templates_.at(static_cast<std::size_t>(j.handle)), j.x, j.y, j.warp, config_);
    }
  };
  const std::size_t workers = std::min<std::size_t>(static_cast<std::size_t>(threads_), n / kJobsPerThread);
  if (workers <= 1) {
    align_range(0, n);
    return;
  }
  // Contiguous shares; the calling thread takes the first. A failure in a helper (an allocation)
  // is carried back and rethrown here.
  std::vector<std::thread> helpers;
  std::vector<std::exception_ptr> failures(workers);
  for (std::size_t w = 1; w < workers; ++w) {
    helpers.emplace_back([&, w] {
      try {
        align_range(n * w / workers, n * (w + 1) / workers);
      } catch (...) {
        failures[w] = std::current_exception();
      }
    });
  }
  try {
    align_range(0, n / workers);
  } catch (...) {
    failures[0] = std::current_exception();
  }
  for (std::thread& helper : helpers) helper.join();
  for (const std::exception_ptr& failure : failures) {
    if (failure) std::rethrow_exception(failure);
  }
}

}  // namespace edgetap::engine
