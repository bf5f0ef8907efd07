// FP16 tensor-core products for the tracker's fused kernels (cross_attention.cu,
// tile_products.cu): mma.sync m16n8k8, which Turing (sm_75) has and later chips keep.
// Fragment layouts (PTX ISA, .f16 inputs, float accumulators): lane = 4 g + t;
// A (16 x 8, row-major) holds rows g and g + 8, columns 2t and 2t + 1; B (8 x 8,
// column-major) rows 2t and 2t + 1 of column g; C (16 x 8) as A.
// Private to kernels/cuda.
#pragma once

#include <cuda_fp16.h>

namespace edgetap::kernels::cuda::detail {

constexpr int kMmaRows = 16;  // an mma tile's rows
constexpr int kMmaK = 8;      // its depth, and the width of B and C

// d += a b: a 16 x 8 half (two registers), b 8 x 8 half (one), d 16 x 8 float.
__device__ __forceinline__ void mma_16x8x8(float (&d)[4], const unsigned (&a)[2], unsigned b) {
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(b));
}

// Two values as one fragment register, the first in the low half.
__device__ __forceinline__ unsigned pack_half2(float lo, float hi) {
  const __half2 h = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<const unsigned*>(&h);
}

// The register of two consecutive halves at a 4-byte aligned address.
__device__ __forceinline__ unsigned half_pair(const __half* p) { return *reinterpret_cast<const unsigned*>(p); }

// 8 consecutive halves (16-byte aligned) through the read-only cache.
__device__ __forceinline__ uint4 ldg16(const __half* p) { return __ldg(reinterpret_cast<const uint4*>(p)); }

// Word s (0-3, known at compile time) of a 16-byte load: its half pair s, a fragment register.
__device__ __forceinline__ unsigned word(const uint4& v, int s) { return s == 0 ? v.x : s == 1 ? v.y : s == 2 ? v.z : v.w; }

}  // namespace edgetap::kernels::cuda::detail
