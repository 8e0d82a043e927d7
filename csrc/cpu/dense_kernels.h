// Per-matrix kernels of the CPU backend: Cholesky factorization and triangular solves on
// one contiguous row-major matrix. Every inner loop runs along a row, so it is unit-stride
// for the vectorizer; the batch drivers in *_cpu.cpp call these once per system.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "cpu/vec_ops.h"

namespace batchchol::cpu {

// dst (n x n) = the lower triangle of src with the strict upper triangle zeroed. With
// from_upper, the lower triangle of src^T (no conjugation) instead, so only src's upper
// triangle is read: factoring that Hermitian matrix and transposing the factor gives U.
template <typename T>
void load_lower(T* __restrict dst, const T* __restrict src, int64_t n, bool from_upper) {
  for (int64_t i = 0; i < n; ++i) {
    T* d = dst + i * n;
    if (from_upper) {
      for (int64_t j = 0; j <= i; ++j) d[j] = src[j * n + i];
    } else {
      std::copy(src + i * n, src + i * n + i + 1, d);
    }
    std::fill(d + i + 1, d + n, T(0));
  }
}

// In-place transpose (no conjugation) of an n x n matrix.
template <typename T>
void transpose_square(T* a, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < i; ++j) std::swap(a[i * n + j], a[j * n + i]);
}

// Row-oriented (Crout) Cholesky of the lower triangle of a, in place:
//   L[i][j] = (A[i][j] - sum_{p<j} L[i][p] conj(L[j][p])) / L[j][j].
// Rows are processed four at a time so that each row j of the finished part is loaded
// once per four rows (four independent dot products also hide the FMA latency).
// Returns the LAPACK info; after a failure it keeps going (NaN/Inf spread through the
// rest of this matrix only). inv_diag: scratch of n reals.
template <typename T>
int32_t potrf_lower(T* a, int64_t n, real_t<T>* inv_diag) {
  using R = real_t<T>;
  int32_t info = 0;
  for (int64_t i0 = 0; i0 < n; i0 += 4) {
    const int64_t rows = std::min<int64_t>(4, n - i0);
    T* blk = a + i0 * n;
    for (int64_t j = 0; j < i0; ++j) {
      const T* lj = a + j * n;
      T s[4];
      if (rows == 4) {
        dot_cj4(lj, blk, blk + n, blk + 2 * n, blk + 3 * n, j, s);
      } else {
        for (int64_t r = 0; r < rows; ++r) s[r] = dot_cj<true>(lj, blk + r * n, j);
      }
      for (int64_t r = 0; r < rows; ++r) blk[r * n + j] = (blk[r * n + j] - s[r]) * inv_diag[j];
    }
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t i = i0 + r;
      T* li = a + i * n;
      for (int64_t j = i0; j < i; ++j) li[j] = (li[j] - dot_cj<true>(a + j * n, li, j)) * inv_diag[j];
      const R d = real_part(li[i]) - real_part(dot_cj<true>(li, li, i));
      if (!(d > R(0) && std::isfinite(d)) && info == 0) info = static_cast<int32_t>(i + 1);
      const R l = std::sqrt(d);
      li[i] = T(l);
      inv_diag[i] = R(1) / l;
    }
  }
  return info;
}

// dst = the factor of the Hermitian matrix whose lower (upper) triangle src holds, with
// the other triangle zeroed; returns its info. scratch: n reals.
template <typename T>
int32_t factor_into(const T* src, T* dst, int64_t n, bool upper, real_t<T>* scratch) {
  load_lower(dst, src, n, upper);
  const int32_t info = potrf_lower(dst, n, scratch);
  if (upper) transpose_square(dst, n);
  return info;
}

// Solves M X = B in place (x holds B on entry), X n x k with row stride ldx, where M is
// cj(A) (Trans false) or cj(A)^T (Trans true) and A is the lower or upper triangle of a.
// The four combinations of lower/Trans are the four loops below; the non-transposed ones
// take dot products along rows of A, the transposed ones scatter a solved row with
// updates along rows of A, so A is always read by rows. prefetch: see prefetch_ahead.
template <bool Conj, typename T>
void trsm_left_impl(const T* a, int64_t n, T* x, int64_t k, int64_t ldx, bool lower, bool trans,
                    bool unit, bool prefetch = false) {
  auto inv = [&](int64_t i) { return unit ? T(1) : T(1) / cj<Conj>(a[i * n + i]); };
  if (k == 1 && ldx == 1) {
    // The forward loops read A row by row in address order, and a batch's systems follow
    // each other: with `prefetch` they keep that stream a fixed distance ahead.
    if (!trans && lower) {
      for (int64_t i = 0; i < n; ++i) {
        if (prefetch) prefetch_ahead(a + i * n, n);
        x[i] = (x[i] - dot_cj<Conj>(a + i * n, x, i)) * inv(i);
      }
    } else if (!trans) {
      for (int64_t i = n - 1; i >= 0; --i) {
        const T* ai = a + i * n + i + 1;
        x[i] = (x[i] - dot_cj<Conj>(ai, x + i + 1, n - i - 1)) * inv(i);
      }
    } else if (lower) {
      for (int64_t i = n - 1; i >= 0; --i) {
        x[i] *= inv(i);
        axpy_sub_cj<Conj>(x, a + i * n, x[i], i);
      }
    } else {
      for (int64_t i = 0; i < n; ++i) {
        if (prefetch) prefetch_ahead(a + i * n, n);
        x[i] *= inv(i);
        axpy_sub_cj<Conj>(x + i + 1, a + i * n + i + 1, x[i], n - i - 1);
      }
    }
    return;
  }
  auto row = [&](int64_t i) { return x + i * ldx; };
  // xi -= sum_{p in [p0, p1)} cj(A[i][p]) x_p, four rows x_p per pass over xi.
  auto gather = [&](int64_t i, int64_t p0, int64_t p1) {
    T* xi = row(i);
    const T* ai = a + i * n;
    int64_t p = p0;
    for (; p + 4 <= p1; p += 4)
      axpy4_sub(xi, row(p), row(p + 1), row(p + 2), row(p + 3), cj<Conj>(ai[p]),
                cj<Conj>(ai[p + 1]), cj<Conj>(ai[p + 2]), cj<Conj>(ai[p + 3]), k);
    for (; p < p1; ++p) axpy_sub(xi, row(p), cj<Conj>(ai[p]), k);
  };
  if (!trans) {
    if (lower) {
      for (int64_t i = 0; i < n; ++i) {
        gather(i, 0, i);
        if (!unit) scale(row(i), inv(i), k);
      }
    } else {
      for (int64_t i = n - 1; i >= 0; --i) {
        gather(i, i + 1, n);
        if (!unit) scale(row(i), inv(i), k);
      }
    }
    return;
  }
  // Transposed: solved rows are scattered into the remaining ones. Rows are solved in
  // blocks of four (a small triangle first), then each remaining row takes the four
  // updates in one pass.
  if (lower) {
    for (int64_t i1 = n; i1 > 0; i1 -= 4) {
      const int64_t i0 = std::max<int64_t>(0, i1 - 4);
      for (int64_t i = i1 - 1; i >= i0; --i) {
        if (!unit) scale(row(i), inv(i), k);
        for (int64_t p = i0; p < i; ++p) axpy_sub(row(p), row(i), cj<Conj>(a[i * n + p]), k);
      }
      if (i1 - i0 == 4) {
        const T *r0 = a + i0 * n, *r1 = r0 + n, *r2 = r1 + n, *r3 = r2 + n;
        for (int64_t p = 0; p < i0; ++p)
          axpy4_sub(row(p), row(i0), row(i0 + 1), row(i0 + 2), row(i0 + 3), cj<Conj>(r0[p]),
                    cj<Conj>(r1[p]), cj<Conj>(r2[p]), cj<Conj>(r3[p]), k);
      } else {
        for (int64_t i = i0; i < i1; ++i)
          for (int64_t p = 0; p < i0; ++p) axpy_sub(row(p), row(i), cj<Conj>(a[i * n + p]), k);
      }
    }
  } else {
    for (int64_t i0 = 0; i0 < n; i0 += 4) {
      const int64_t i1 = std::min<int64_t>(n, i0 + 4);
      for (int64_t i = i0; i < i1; ++i) {
        if (!unit) scale(row(i), inv(i), k);
        for (int64_t p = i + 1; p < i1; ++p) axpy_sub(row(p), row(i), cj<Conj>(a[i * n + p]), k);
      }
      if (i1 - i0 == 4) {
        const T *r0 = a + i0 * n, *r1 = r0 + n, *r2 = r1 + n, *r3 = r2 + n;
        for (int64_t p = i1; p < n; ++p)
          axpy4_sub(row(p), row(i0), row(i0 + 1), row(i0 + 2), row(i0 + 3), cj<Conj>(r0[p]),
                    cj<Conj>(r1[p]), cj<Conj>(r2[p]), cj<Conj>(r3[p]), k);
      } else {
        for (int64_t i = i0; i < i1; ++i)
          for (int64_t p = i1; p < n; ++p) axpy_sub(row(p), row(i), cj<Conj>(a[i * n + p]), k);
      }
    }
  }
}

// Column-block width of the right-hand sides, so that the n x kc slice being solved
// stays in L2 when n and k are large (the columns are independent).
template <typename T>
int64_t rhs_block(int64_t n) {
  const int64_t kc = (int64_t(128) << 10) / (std::max<int64_t>(n, 1) * int64_t(sizeof(T)));
  return std::max<int64_t>(16, kc / 16 * 16);
}

// Solves cj(A) X = B or cj(A)^T X = B in place for B, X n x k contiguous.
template <typename T>
void trsm_left_block(const T* a, int64_t n, T* x, int64_t w, int64_t ldx, bool lower, bool trans,
                     bool conj, bool unit, bool prefetch = false) {
  if (conj && is_complex_v<T>) {
    trsm_left_impl<true>(a, n, x, w, ldx, lower, trans, unit, prefetch);
  } else {
    trsm_left_impl<false>(a, n, x, w, ldx, lower, trans, unit, prefetch);
  }
}

template <typename T>
void trsm_left(const T* a, int64_t n, T* x, int64_t k, bool lower, bool trans, bool conj,
               bool unit, bool prefetch = false) {
  const int64_t kc = rhs_block<T>(n);
  for (int64_t c0 = 0; c0 < k; c0 += kc)
    trsm_left_block(a, n, x + c0, std::min(kc, k - c0), k, lower, trans, conj, unit, prefetch);
}

// (L L^H) X = B (upper: U^H U X = B) in place for X n x k contiguous; both solves run on
// one column block before the next, while it is in cache. transposed: l holds the factor
// transposed (column-major), which swaps the triangle and the access direction.
template <typename T>
void potrs_inplace(const T* l, int64_t n, T* x, int64_t k, bool upper, bool transposed = false) {
  const int64_t kc = rhs_block<T>(n);
  const bool lower = upper == transposed;
  for (int64_t c0 = 0; c0 < k; c0 += kc) {
    const int64_t w = std::min(kc, k - c0);
    T* xb = x + c0;
    // First solve with L (U^H), then with L^H (U); conj goes with the ^H.
    trsm_left_block(l, n, xb, w, k, lower, /*trans=*/upper != transposed, /*conj=*/upper, false);
    trsm_left_block(l, n, xb, w, k, lower, /*trans=*/upper == transposed, /*conj=*/!upper, false);
  }
}

}  // namespace batchchol::cpu
