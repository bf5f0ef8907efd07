// Kernels of the CUDA session's own bookkeeping (not network arithmetic).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace edgetap::gpu {

// Starts tracks: for row i, slot s = slots[i]: query[s] = position[s] =
// previous[s] = points[i], query_frame[s] = t.
void start_tracks(const int* slots, const float2* points, int n, std::int64_t t, float2* query, float2* position,
                  float2* previous, std::int64_t* query_frame, cudaStream_t stream);

}  // namespace edgetap::gpu
