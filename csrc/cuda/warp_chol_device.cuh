// Device routines of the warp family: Cholesky factorization of one matrix held in the
// registers of a group of P lanes, and the two triangular sweeps with L read through an
// accessor (from those registers, or from the staged factor: warp_chol_kernels.cuh).
//
// The matrix is padded to a compile-time order NP (rows and columns past the real
// order n form an identity block, which factors to itself and never fails), so every
// loop below unrolls completely and every register index is a constant (paper 002:
// loops with run-time bounds keep the panel out of registers).
//
// Lane q of the group holds the R = ceil(NP / P) rows q, q + P, ..., q + P (R - 1):
// a[t][j] = W(q + P t, j) for j <= q + P t, where W is the lower working matrix
// (A for a lower factor, A^T for an upper one). Row t of any lane has at most
// width(t) = min(NP, P (t + 1)) entries, so a[t][j] is only ever touched for
// j < width(t) and the rest of the array costs no registers.
//
// Why several rows per lane: step k of the right-looking factorization broadcasts
// column k to the lanes that hold later rows, one shuffle per entry. A shuffle serves
// every group of the warp at once, so with P lanes per matrix a warp factors 32 / P
// matrices for the shuffles of one: N^2 / 2 * P / 32 shuffles per matrix, which keeps
// the shuffle unit off the critical path for P <= 16 (DESIGN-NOTES 3, tiny n).
#pragma once

#include "cuda/scalar_ops.cuh"

namespace batchchol {
namespace cuda {

template <int NP, int P>
struct GroupShape {
  static_assert(P >= 1 && P <= 32 && (32 % P) == 0, "P must divide the warp");
  static constexpr int kRows = (NP + P - 1) / P;  // R: rows per lane
  static constexpr int kGroups = 32 / P;          // matrices per warp
  __host__ __device__ static constexpr int width(int t) {
    return P * (t + 1) < NP ? P * (t + 1) : NP;
  }
};

// Value v of lane `src` of this lane's group (all 32 lanes of the warp must call).
template <int P, typename T>
__device__ __forceinline__ T group_bcast(T v, int src) {
  if constexpr (P == 1) {
    return v;
  } else {
    return shfl(v, src, P);
  }
}

// Factors the lower working matrix in place: afterwards a[t][j] = L(q + P t, j) for
// j <= q + P t and rdiag[t] = 1 / L(q + P t, q + P t) (the sweeps below multiply by
// it). Returns the LAPACK info (0, or k + 1 for the first pivot k that is not positive
// and finite), the same on every lane of the group. Scaling multiplies by the
// reciprocal of the pivot's square root (xPOTF2), taken by rsqrt_ (scalar_ops.cuh: no
// square root or division with its slow-path branch between one pivot and the next).
//
// Entries above a row's diagonal (j > q + P t) are scratch: they are updated along with
// the others, without a per-row predicate, and never feed an entry of L (an entry (i, j)
// of L is built from entries (i, k) and (j, k) with k < j <= i only). That keeps the
// unrolled code at one shuffle and R multiply-adds per (k, j).
//
// kRhs: b[t] holds entry q + P t of a right-hand side and leaves as y = L^{-1} b. The
// forward substitution rides along with the steps (step k forms y_k from the b_k that
// steps < k left and updates the rows below with column k's entries, one shuffle and R
// multiply-adds more per step), so its chain overlaps the factorization's instead of
// running after it.
template <typename T, int NP, int P, bool kRhs>
__device__ __forceinline__ int group_potrf_impl(T (&a)[GroupShape<NP, P>::kRows][NP],
                                                real_t<T> (&rdiag)[GroupShape<NP, P>::kRows],
                                                T (&b)[GroupShape<NP, P>::kRows], int q) {
  using S = GroupShape<NP, P>;
  using R = real_t<T>;
  int info = 0;
#pragma unroll
  for (int k = 0; k < NP; ++k) {
    const R d = real_(group_bcast<P>(a[k / P][k], k % P));
    if (!pivot_ok(d) && info == 0) info = k + 1;
    const R inv = rsqrt_(d);
#pragma unroll
    for (int t = 0; t < S::kRows; ++t) {
      if (k < S::width(t)) {
        const bool pivot_row = q + P * t == k;
        a[t][k] = scale_pivot_column(a[t][k], pivot_row, d, inv);
        if (pivot_row) rdiag[t] = inv;
      }
    }
    if constexpr (kRhs) {
      const T yk = group_bcast<P>(b[k / P], k % P) * inv;
#pragma unroll
      for (int t = 0; t < S::kRows; ++t) {
        if (k < S::width(t)) {
          const int i = q + P * t;
          if (i == k) b[t] = yk;
          if (i > k) b[t] -= a[t][k] * yk;
        }
      }
    }
#pragma unroll
    for (int j = k + 1; j < NP; ++j) {
      // L(j, k) lives on lane j % P, in its row j / P (entry k < j: always stored).
      const T ljk = group_bcast<P>(a[j / P][k], j % P);
#pragma unroll
      for (int t = 0; t < S::kRows; ++t)
        if (j < S::width(t)) a[t][j] -= mul_conj(a[t][k], ljk);
    }
  }
  return info;
}

template <typename T, int NP, int P>
__device__ __forceinline__ int group_potrf(T (&a)[GroupShape<NP, P>::kRows][NP],
                                           real_t<T> (&rdiag)[GroupShape<NP, P>::kRows], int q) {
  T none[GroupShape<NP, P>::kRows];
  return group_potrf_impl<T, NP, P, false>(a, rdiag, none, q);
}

// Forward substitution L y = b for one right-hand-side column: b[t] holds entry
// q + P t and is overwritten with y. l(t, j) is L(q + P t, j) (j < q + P t), wherever L
// lives (registers, or the staged matrix: warp_chol_kernels.cuh); live(t, j) whether that
// entry takes part (rows past a staged matrix's order do not). rdiag[] are the
// reciprocals of L's diagonal (group_potrf): a multiplication instead of a division on
// each step's chain.
template <typename T, int NP, int P, typename Entry, typename Live>
__device__ __forceinline__ void group_forward_by(Entry&& l, Live&& live,
                                                 const real_t<T> (&rdiag)[GroupShape<NP, P>::kRows],
                                                 T (&b)[GroupShape<NP, P>::kRows], int q) {
  using S = GroupShape<NP, P>;
#pragma unroll
  for (int j = 0; j < NP; ++j) {
    const int tj = j / P, qj = j % P;
    // Every lane scales its own row's entry; only the owner's product is kept.
    const T yj = group_bcast<P>(b[tj] * rdiag[tj], qj);
    if (q == qj) b[tj] = yj;
#pragma unroll
    for (int t = 0; t < S::kRows; ++t) {
      if (j < S::width(t) && q + P * t > j && live(t, j)) b[t] -= l(t, j) * yj;
    }
  }
}

// Backward substitution L^H x = y: l(t, j) is L(j, q + P t) (j > q + P t), live and
// rdiag as above; b[t] holds y and is overwritten with x.
template <typename T, int NP, int P, typename Entry, typename Live>
__device__ __forceinline__ void group_backward_by(
    Entry&& l, Live&& live, const real_t<T> (&rdiag)[GroupShape<NP, P>::kRows],
    T (&b)[GroupShape<NP, P>::kRows], int q) {
  using S = GroupShape<NP, P>;
#pragma unroll
  for (int j = NP - 1; j >= 0; --j) {
    const int tj = j / P, qj = j % P;
    const T xj = group_bcast<P>(b[tj] * rdiag[tj], qj);
    if (q == qj) b[tj] = xj;
#pragma unroll
    for (int t = 0; t < S::kRows; ++t) {
      if (j >= P * t && q + P * t < j && live(t, j)) b[t] -= conj_(l(t, j)) * xj;
    }
  }
}

// The sweeps with L in registers: a[][] its rows (as group_potrf leaves them), col[t][j]
// = L(j, q + P t) for j >= P t (the lane's columns of L).
template <typename T, int NP, int P>
__device__ __forceinline__ void group_forward(const T (&a)[GroupShape<NP, P>::kRows][NP],
                                              const real_t<T> (&rdiag)[GroupShape<NP, P>::kRows],
                                              T (&b)[GroupShape<NP, P>::kRows], int q) {
  group_forward_by<T, NP, P>([&](int t, int j) { return a[t][j]; },
                             [](int, int) { return true; }, rdiag, b, q);
}

template <typename T, int NP, int P>
__device__ __forceinline__ void group_backward(const T (&col)[GroupShape<NP, P>::kRows][NP],
                                               const real_t<T> (&rdiag)[GroupShape<NP, P>::kRows],
                                               T (&b)[GroupShape<NP, P>::kRows], int q) {
  group_backward_by<T, NP, P>([&](int t, int j) { return col[t][j]; },
                              [](int, int) { return true; }, rdiag, b, q);
}

}  // namespace cuda
}  // namespace batchchol
