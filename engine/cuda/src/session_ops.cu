#include "session_ops.hpp"

#include "edgetap/kernels/cuda/check.hpp"

namespace edgetap::gpu {

namespace {

// One thread per new track.
__global__ void start_tracks_kernel(const int* slots, const float2* points, int n, std::int64_t t, float2* query,
                                    float2* position, float2* previous, std::int64_t* query_frame) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int s = slots[i];
  query[s] = position[s] = previous[s] = points[i];
  query_frame[s] = t;
}

}  // namespace

void start_tracks(const int* slots, const float2* points, int n, std::int64_t t, float2* query, float2* position,
                  float2* previous, std::int64_t* query_frame, cudaStream_t stream) {
  if (n == 0) return;
  constexpr int kThreads = 128;
  start_tracks_kernel<<<(n + kThreads - 1) / kThreads, kThreads, 0, stream>>>(slots, points, n, t, query, position,
                                                                               previous, query_frame);
  EDGETAP_CUDA_LAUNCH_CHECK();
}

}  // namespace edgetap::gpu
