// 8 floats (or 8 int32) as one vector, GCC/Clang vector extension: one AVX
// register in a kernel's AVX2 build (target_clones "arch=x86-64-v3"), two SSE
// registers in the baseline build. Alignment 4 so it loads from any float
// address; vectors may alias floats. Private to kernels/cpu.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

// Vectors pass by value only between always-inline helpers (no lambdas, no
// out-of-line functions), so the note that a 32-byte vector argument's ABI
// differs without AVX does not apply.
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

// The last n < 8 floats of a row: lanes past n hold `fill`; only n are stored.
[[gnu::always_inline]] inline float8 load8_partial(const float* p, int n, float fill) {
  float8 v = float8{} + fill;
  std::memcpy(&v, p, sizeof(float) * static_cast<std::size_t>(n));
  return v;
}
[[gnu::always_inline]] inline void store8_partial(float* p, float8 v, int n) {
  std::memcpy(p, &v, sizeof(float) * static_cast<std::size_t>(n));
}

[[gnu::always_inline]] inline float8 splat8(float x) { return float8{} + x; }

// The same 32 bytes seen as the other lane type (memcpy: std::bit_cast of
// vector types trips GCC 12's UBSan with a false null-pointer load).
[[gnu::always_inline]] inline int8 bits8(float8 v) {
  int8 r;
  std::memcpy(&r, &v, sizeof r);
  return r;
}
[[gnu::always_inline]] inline float8 floats8(int8 v) {
  float8 r;
  std::memcpy(&r, &v, sizeof r);
  return r;
}

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

// x's pair sums in the even lanes, y's in the odd ones.
[[gnu::always_inline]] inline float8 pair_sums(float8 x, float8 y) {
  return __builtin_shufflevector(x, y, 0, 8, 2, 10, 4, 12, 6, 14) + __builtin_shufflevector(x, y, 1, 9, 3, 11, 5, 13, 7, 15);
}

// From two pair_sums results: lanes 0-1 x's, 2-3 y's, 4-5 x's, 6-7 y's.
[[gnu::always_inline]] inline float8 quad_sums(float8 x, float8 y) {
  return __builtin_shufflevector(x, y, 0, 1, 8, 9, 4, 5, 12, 13) + __builtin_shufflevector(x, y, 2, 3, 10, 11, 6, 7, 14, 15);
}

// Lane j of the result: the sum of the 8 lanes of a[j]. A transposing tree
// (pairs, quads, halves) rather than eight separate lane sums. Every helper
// is always-inline: vectors must not cross a call between a kernel's AVX2
// clone and baseline code (the -Wpsabi note), which unoptimized builds make.
[[gnu::always_inline]] inline float8 sum8x8(const float8 a[8]) {
  const float8 low = quad_sums(pair_sums(a[0], a[1]), pair_sums(a[2], a[3]));
  const float8 high = quad_sums(pair_sums(a[4], a[5]), pair_sums(a[6], a[7]));
  return __builtin_shufflevector(low, high, 0, 1, 2, 3, 8, 9, 10, 11) +
         __builtin_shufflevector(low, high, 4, 5, 6, 7, 12, 13, 14, 15);
}

// Dot products of 8 consecutive vectors of n floats (`rows`, contiguous) with
// one vector `b`: lane j of the result is rows[j] . b. Eight independent
// accumulators and one transposing sum, instead of a lane sum per row.
[[gnu::always_inline]] inline float8 dot8(const float* rows, const float* b, int n) {
  float8 acc[8] = {};
  int c = 0;
  for (; c + 8 <= n; c += 8) {
    const float8 bc = load8(b + c);
#pragma GCC unroll 8
    for (int j = 0; j < 8; ++j) acc[j] += load8(rows + static_cast<std::size_t>(j) * n + c) * bc;
  }
  float8 r = sum8x8(acc);
  for (; c < n; ++c) {
    for (int j = 0; j < 8; ++j) r[j] += rows[static_cast<std::size_t>(j) * n + c] * b[c];
  }
  return r;
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
