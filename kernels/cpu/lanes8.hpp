// 8 floats (or 8 int32) as one vector, GCC/Clang vector extension: one AVX
// register in a kernel's AVX2 build (target_clones "arch=x86-64-v3"), two SSE
// registers in the baseline build. Alignment 4 so it loads from any float
// address; vectors may alias floats. Private to kernels/cpu.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>

// Vectors pass by value only between always-inline helpers of one file, so the
// note that a 32-byte vector argument's ABI differs without AVX does not apply.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace edgetap::kernels::cpu::lanes {

using float8 = float __attribute__((vector_size(32), aligned(4)));
using int8 = std::int32_t __attribute__((vector_size(32), aligned(4)));

[[gnu::always_inline]] inline float8 load8(const float* p) {
  float8 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

[[gnu::always_inline]] inline void store8(float* p, float8 v) { std::memcpy(p, &v, sizeof v); }

[[gnu::always_inline]] inline float8 splat8(float x) { return float8{} + x; }

// The same 32 bytes seen as the other lane type.
[[gnu::always_inline]] inline int8 bits8(float8 v) { return std::bit_cast<int8>(v); }
[[gnu::always_inline]] inline float8 floats8(int8 v) { return std::bit_cast<float8>(v); }

}  // namespace edgetap::kernels::cpu::lanes
