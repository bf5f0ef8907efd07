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

// e^x for x <= 0 on 8 lanes: x = n ln2 + r, a degree-6 polynomial for e^r,
// 2^n from the exponent bits. Relative error < 2e-7 down to x = -87; below
// that (and for -infinity) it returns e^-87, about 1.6e-38.
[[gnu::always_inline]] inline float8 exp_nonpositive(float8 x) {
  x = x > -87.f ? x : splat8(-87.f);
  const float8 n = (x * 1.44269504f + 12582912.f) - 12582912.f;  // round to nearest
  const float8 r = x - n * 0.693145752f - n * 1.42860677e-6f;
  float8 p = splat8(1.f / 720.f);
  p = p * r + 1.f / 120.f;
  p = p * r + 1.f / 24.f;
  p = p * r + 1.f / 6.f;
  p = p * r + 0.5f;
  p = p * r + 1.f;
  p = p * r + 1.f;
  const int8 bits = __builtin_convertvector(n + 127.f, int8) << 23;
  return p * floats8(bits);
}

// Sum of the 8 lanes, pairwise.
[[gnu::always_inline]] inline float sum8(float8 s) {
  return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

// Dot product of n floats in four independent 8-wide partial sums, so
// consecutive multiply-adds do not wait on each other.
[[gnu::always_inline]] inline float dot(const float* a, const float* b, int n) {
  float8 s0 = {}, s1 = {}, s2 = {}, s3 = {};
  int c = 0;
  for (; c + 32 <= n; c += 32) {
    s0 += load8(a + c) * load8(b + c);
    s1 += load8(a + c + 8) * load8(b + c + 8);
    s2 += load8(a + c + 16) * load8(b + c + 16);
    s3 += load8(a + c + 24) * load8(b + c + 24);
  }
  for (; c + 8 <= n; c += 8) s0 += load8(a + c) * load8(b + c);
  float r = sum8((s0 + s1) + (s2 + s3));
  for (; c < n; ++c) r += a[c] * b[c];
  return r;
}

}  // namespace edgetap::kernels::cpu::lanes
