// One-right-hand-side triangular solves of several systems in lockstep (real types).
//
// Substitution with one column is a chain of dependent steps: x_i needs the update that
// the step before it wrote. One system alone leaves the core waiting on that chain
// (about 20 cycles a step against a few cycles of arithmetic for n <= 64), and the
// out-of-order window cannot reach the next system of the batch. Running M independent
// systems step by step gives the core M chains to overlap; the per-system loops are the
// same as trsm_left_impl's one-column loops.
#pragma once

#include <algorithm>
#include <cstdint>

#include "cpu/vec_ops.h"

namespace batchchol::cpu {

// Solves op(A_s) x_s = b_s in place for s < M (x[s] holds b_s on entry), A_s = a[s]
// n x n row-major; op and the triangle as in trsm_left_impl (no conjugation: real T).
// The loops over s have a compile-time trip count; the compiler unrolls them.
template <int M, typename T>
void trsv_lockstep(const T* const (&a)[M], int64_t n, T* const (&x)[M], bool lower, bool trans,
                   bool unit) {
  static_assert(!is_complex_v<T>, "trsv_lockstep serves the real types");
  auto inv = [&](int s, int64_t i) { return unit ? T(1) : T(1) / a[s][i * n + i]; };
  if (!trans && lower) {
    for (int64_t i = 0; i < n; ++i) {
      for (int s = 0; s < M; ++s)
        x[s][i] = (x[s][i] - dot_cj<false>(a[s] + i * n, x[s], i)) * inv(s, i);
    }
  } else if (!trans) {
    for (int64_t i = n - 1; i >= 0; --i) {
      for (int s = 0; s < M; ++s)
        x[s][i] = (x[s][i] - dot_cj<false>(a[s] + i * n + i + 1, x[s] + i + 1, n - i - 1)) *
                  inv(s, i);
    }
  } else if (lower) {
    for (int64_t i = n - 1; i >= 0; --i) {
      for (int s = 0; s < M; ++s) {
        x[s][i] *= inv(s, i);
        axpy_sub(x[s], a[s] + i * n, x[s][i], i);
      }
    }
  } else {
    for (int64_t i = 0; i < n; ++i) {
      for (int s = 0; s < M; ++s) {
        x[s][i] *= inv(s, i);
        axpy_sub(x[s] + i + 1, a[s] + i * n + i + 1, x[s][i], n - i - 1);
      }
    }
  }
}

template <int M, typename T>
int64_t trsv_groups(const T* a, int64_t a_stride, const T* b, T* x, int64_t n, int64_t b0,
                    int64_t b1, bool lower, bool trans, bool unit) {
  int64_t i = b0;
  for (; i + M <= b1; i += M) {
    const T* as[M];
    T* xs[M];
    for (int s = 0; s < M; ++s) {
      as[s] = a + (i + s) * a_stride;
      xs[s] = x + (i + s) * n;
      std::copy(b + (i + s) * n, b + (i + s + 1) * n, xs[s]);
    }
    trsv_lockstep<M>(as, n, xs, lower, trans, unit);
  }
  return i;
}

// Solves the one-column systems [b0, b1) of a batch (a: matrices a_stride apart; b, x:
// n-vectors) four at a time where that pays, and returns the first system left to the
// caller (b0 when it does not pay, or for complex types).
//
// Measured on a 2-core AMD EPYC VM (10,000 systems, column-major factors, min of 40
// calls, candidates alternating): four in lockstep take 0.5x the time of one at a time
// at n <= 16 and 0.65-0.9x at n >= 64, where one system at a time was slower than
// torch's serial loop (float32 n = 64: 8.2 vs 6.7 ms; lockstep 5.5 ms); at n = 24..56
// lockstep was 1.0-1.5x slower, so those sizes keep one system at a time.
template <typename T>
int64_t trsv_batch_lockstep(const T* a, int64_t a_stride, const T* b, T* x, int64_t n,
                            int64_t b0, int64_t b1, bool lower, bool trans, bool unit) {
  if constexpr (is_complex_v<T>) {
    return b0;
  } else {
    if (n > 16 && n < 64) return b0;
    return trsv_groups<4>(a, a_stride, b, x, n, b0, b1, lower, trans, unit);
  }
}

}  // namespace batchchol::cpu
