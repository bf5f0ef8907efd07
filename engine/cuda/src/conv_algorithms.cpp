#include "conv_algorithms.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "edgetap/gpu/cudnn_check.hpp"
#include "edgetap/kernels/cuda/check.hpp"

namespace edgetap::gpu {

namespace {

// Never TF32 for FP32 (nor a down-conversion for either precision).
bool acceptable_math(cudnnDataType_t data, cudnnMathType_t math) {
  if (math == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION) return false;
  return data != CUDNN_DATA_FLOAT || math != CUDNN_TENSOR_OP_MATH;
}

cudnnConvolutionFwdAlgoPerf_t rank(cudnnHandle_t handle, cudnnDataType_t data, cudnnTensorDescriptor_t in,
                                   cudnnFilterDescriptor_t filter, cudnnConvolutionDescriptor_t conv,
                                   cudnnTensorDescriptor_t out) {
  int capacity = 0;
  EDGETAP_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithmMaxCount(handle, &capacity));
  std::vector<cudnnConvolutionFwdAlgoPerf_t> ranked(static_cast<std::size_t>(std::max(capacity, 1)));
  int returned = 0;
  EDGETAP_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(handle, in, filter, conv, out, capacity, &returned,
                                                             ranked.data()));
  ranked.resize(static_cast<std::size_t>(std::max(returned, 0)));
  auto runs = [&](const cudnnConvolutionFwdAlgoPerf_t& p) {
    return p.status == CUDNN_STATUS_SUCCESS && acceptable_math(data, p.mathType);
  };
  for (const auto& p : ranked) {
    if (runs(p) && p.determinism == CUDNN_DETERMINISTIC && p.memory <= kConvWorkspaceCap) return p;
  }
  for (const auto& p : ranked) {
    if (runs(p)) return p;
  }
  throw std::runtime_error("CudaEncoder: cuDNN offers no forward algorithm for a convolution");
}

using Key = std::tuple<int, int, int, int, int, int, int, int, int>;  // device, then ConvShape's fields

Key key_of(const ConvShape& s) {
  int device = 0;
  EDGETAP_CUDA_CHECK(cudaGetDevice(&device));
  return {device, static_cast<int>(s.data), s.frames, s.in_channels, s.in_height, s.in_width, s.out_channels,
          s.kernel, s.stride};
}

}  // namespace

cudnnConvolutionFwdAlgoPerf_t forward_algorithm(cudnnHandle_t handle, const ConvShape& shape,
                                                cudnnTensorDescriptor_t in, cudnnFilterDescriptor_t filter,
                                                cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t out) {
  static std::mutex mutex;
  static std::map<Key, cudnnConvolutionFwdAlgoPerf_t> chosen;
  const Key key = key_of(shape);
  {
    const std::lock_guard lock(mutex);
    if (const auto found = chosen.find(key); found != chosen.end()) return found->second;
  }
  // Ranked outside the lock: two sessions asking at once get the same answer.
  const cudnnConvolutionFwdAlgoPerf_t best = rank(handle, shape.data, in, filter, conv, out);
  const std::lock_guard lock(mutex);
  return chosen.emplace(key, best).first->second;
}

}  // namespace edgetap::gpu
