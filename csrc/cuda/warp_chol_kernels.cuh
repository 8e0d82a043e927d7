// Kernel templates of the warp family (warp_chol_device.cuh): each thread block stages
// a contiguous chunk of the batch in shared memory with wide coalesced copies
// (stage_copy.cuh), each group of P lanes factors one matrix in registers (posv then
// solves on the staged factor), and the block writes the chunk back with the same copies.
#pragma once

#include <cstdint>

#include "cuda/stage_copy.cuh"
#include "cuda/warp_chol_device.cuh"

namespace batchchol {
namespace cuda {

// The lane's rows of the lower working matrix W from a staged matrix mat (W(i, j) at
// mat[at(i, j)]: stage_copy.cuh); rows past n (all rows when n_eff = 0) are the
// identity padding.
template <typename T, int NP, int P, typename Index>
__device__ __forceinline__ void load_group_rows(T (&a)[GroupShape<NP, P>::kRows][NP],
                                                const T* mat, Index at, int n_eff, int q) {
  using S = GroupShape<NP, P>;
#pragma unroll
  for (int t = 0; t < S::kRows; ++t) {
    const int i = q + P * t;
#pragma unroll
    for (int j = 0; j < S::width(t); ++j) {
      T v = T(0);
      if (i < n_eff) {
        if (j <= i) v = mat[at(i, j)];
      } else if (j == i) {
        v = T(1);
      }
      a[t][j] = v;
    }
  }
}

// The square layout's rows: A's rows for lower, its columns for upper.
template <typename T, int NP, int P>
__device__ __forceinline__ void load_group_rows(T (&a)[GroupShape<NP, P>::kRows][NP],
                                                const T* mat, int pitch, int n_eff, int q,
                                                bool upper) {
  with_square_index(pitch, upper,
                    [&](auto at) { load_group_rows<T, NP, P>(a, mat, at, n_eff, q); });
}

// Writes the lane's factor rows back where load_group_rows read them (j <= i only).
template <typename T, int NP, int P, typename Index>
__device__ __forceinline__ void store_group_rows(const T (&a)[GroupShape<NP, P>::kRows][NP],
                                                 T* mat, Index at, int n_eff, int q) {
  using S = GroupShape<NP, P>;
#pragma unroll
  for (int t = 0; t < S::kRows; ++t) {
    const int i = q + P * t;
    if (i < n_eff) {
#pragma unroll
      for (int j = 0; j < S::width(t); ++j)
        if (j <= i) mat[at(i, j)] = a[t][j];
    }
  }
}

// The lane's columns of the staged factor: col[t][j] = L(j, q + P t) for j >= P t.
template <typename T, int NP, int P, typename Index>
__device__ __forceinline__ void load_group_cols(T (&col)[GroupShape<NP, P>::kRows][NP],
                                                const T* mat, Index at, int n_eff, int q) {
  using S = GroupShape<NP, P>;
#pragma unroll
  for (int t = 0; t < S::kRows; ++t) {
    const int i = q + P * t;
#pragma unroll
    for (int j = P * t; j < NP; ++j) {
      T v = T(0);
      if (i < n_eff) {
        if (j >= i && j < n_eff) v = mat[at(j, i)];
      } else if (j == i) {
        v = T(1);
      }
      col[t][j] = v;
    }
  }
}

template <typename T, int NP, int P>
__device__ __forceinline__ void load_group_cols(T (&col)[GroupShape<NP, P>::kRows][NP],
                                                const T* mat, int pitch, int n_eff, int q,
                                                bool upper) {
  with_square_index(pitch, upper,
                    [&](auto at) { load_group_cols<T, NP, P>(col, mat, at, n_eff, q); });
}

// The two sweeps of a solve with the factor staged (W(i, j) = L(i, j) at mat[at(i, j)],
// j <= i < n_eff) instead of in registers: each step reads the R entries of L it needs,
// so no lane holds a whole row or column of L, whose register copies set the posv
// kernel's register count and so its warps per SM (KERNEL-NOTES, twenty-second round).
// b[t] holds entry q + P t of the right-hand side. Rows past n_eff, which the stage does
// not hold, are the identity padding: they take no update and give none.
template <typename T, int NP, int P, typename Index>
__device__ __forceinline__ void group_forward_staged(
    const T* mat, Index at, int n_eff, const real_t<T> (&rdiag)[GroupShape<NP, P>::kRows],
    T (&b)[GroupShape<NP, P>::kRows], int q) {
  group_forward_by<T, NP, P>([&](int t, int j) { return mat[at(q + P * t, j)]; },
                             [&](int t, int) { return q + P * t < n_eff; }, rdiag, b, q);
}

template <typename T, int NP, int P, typename Index>
__device__ __forceinline__ void group_backward_staged(
    const T* mat, Index at, int n_eff, const real_t<T> (&rdiag)[GroupShape<NP, P>::kRows],
    T (&b)[GroupShape<NP, P>::kRows], int q) {
  group_backward_by<T, NP, P>([&](int t, int j) { return mat[at(j, q + P * t)]; },
                              [&](int, int j) { return j < n_eff; }, rdiag, b, q);
}

// Factors the staged matrix `mat` (order n_eff, identity-padded to NP; n_eff = 0: an
// identity) in place on the P lanes of its group, q being the lane's index in it: the
// factor's triangle is written back, the other one is left as it was. Returns the info
// (the same on every lane of the group) and leaves the reciprocals of the factor's
// diagonal in rdiag. kRhs: b (entry q + P t on the lane) leaves as L^{-1} b, the
// forward substitution riding along with the steps (group_potrf_impl).
template <typename T, int NP, int P, bool kRhs, typename Index>
__device__ __forceinline__ int group_factor_staged_impl(
    T* mat, Index at, int n_eff, int q, real_t<T> (&rdiag)[GroupShape<NP, P>::kRows],
    T (&b)[GroupShape<NP, P>::kRows]) {
  T a[GroupShape<NP, P>::kRows][NP];
  load_group_rows<T, NP, P>(a, mat, at, n_eff, q);
  const int inf = group_potrf_impl<T, NP, P, kRhs>(a, rdiag, b, q);
  store_group_rows<T, NP, P>(a, mat, at, n_eff, q);
  return inf;
}

template <typename T, int NP, int P, typename Index>
__device__ __forceinline__ int group_factor_staged(T* mat, Index at, int n_eff, int q,
                                                   real_t<T> (&rdiag)[GroupShape<NP, P>::kRows]) {
  T none[GroupShape<NP, P>::kRows];
  return group_factor_staged_impl<T, NP, P, false>(mat, at, n_eff, q, rdiag, none);
}

template <typename T, int NP, int P, typename Index>
__device__ __forceinline__ int group_factor_staged_rhs(
    T* mat, Index at, int n_eff, int q, real_t<T> (&rdiag)[GroupShape<NP, P>::kRows],
    T (&b)[GroupShape<NP, P>::kRows]) {
  return group_factor_staged_impl<T, NP, P, true>(mat, at, n_eff, q, rdiag, b);
}

template <typename T, int NP, int P>
__device__ __forceinline__ int group_factor_staged(T* mat, int pitch, int n_eff, int q, bool upper,
                                                   real_t<T> (&rdiag)[GroupShape<NP, P>::kRows]) {
  T a[GroupShape<NP, P>::kRows][NP];
  load_group_rows<T, NP, P>(a, mat, pitch, n_eff, q, upper);
  const int inf = group_potrf<T, NP, P>(a, rdiag, q);
  with_square_index(pitch, upper,
                    [&](auto at) { store_group_rows<T, NP, P>(a, mat, at, n_eff, q); });
  return inf;
}

// Matrices (groups of P lanes) per block and the staged chunk's first matrix and size.
template <int P>
__device__ __forceinline__ void chunk_of_block(int64_t batch, int64_t& first, int& count) {
  const int per_block = blockDim.x / P;
  first = int64_t(blockIdx.x) * per_block;
  count = int(batch - first < per_block ? batch - first : per_block);
}

// kPacked: the chunk in the packed layout (stage_copy.cuh; 16-byte copies, vec is
// true), half the shared memory of the square one. Then registers set the occupancy: the bound (2 x 256 threads: 128
// registers) keeps float64 NP = 32 at 16 warps per SM (134 registers unbounded, 15).
template <typename T, int NP, int P, bool kPacked = false>
__global__ void __launch_bounds__(256, kPacked ? 2 : 0)
    potrf_warp_kernel(const T* __restrict__ A, T* __restrict__ L, int* __restrict__ info,
                      int64_t batch, StageLayout lay, bool upper, bool vec) {
  using S = GroupShape<NP, P>;
  extern __shared__ __align__(16) unsigned char warp_smem_raw[];
  T* s = reinterpret_cast<T*>(warp_smem_raw);
  int64_t first;
  int count;
  chunk_of_block<P>(batch, first, count);
  const int nn = lay.n * lay.n;
  if constexpr (kPacked) {
    stage_in_packed_exact<T, 4, NP>(s, A + first * nn, count * nn, lay, upper);
  } else {
    stage_in_exact<T, 4, NP, true>(s, A + first * nn, count * nn, lay, vec, upper);
  }
  __syncthreads();

  const int g = threadIdx.x / P, q = threadIdx.x % P;
  const int n_eff = g < count ? lay.n : 0;  // groups past the batch factor an identity
  real_t<T> rdiag[S::kRows];
  T* mat = s + g * lay.ms;
  int inf;
  if constexpr (kPacked) {
    inf = group_factor_staged<T, NP, P>(mat, PackedIndex{}, n_eff, q, rdiag);
  } else {
    inf = group_factor_staged<T, NP, P>(mat, lay.pitch, n_eff, q, upper, rdiag);
  }
  if (n_eff > 0 && q == 0) info[first + g] = inf;
  __syncthreads();
  if constexpr (kPacked) {
    stage_out_packed_exact<T, NP>(L + first * nn, s, count * nn, lay, upper);
  } else {
    stage_out_exact<T, NP>(L + first * nn, s, count * nn, lay, vec, upper);
  }
}

// Factor and solve: B, X are [batch, n, k]. Upper factors solve L' L'^H conj(x) =
// conj(b) with L' the lower factor of A^T (posv_kernels.cuh). L may be null: then the
// factor stays on chip (the solve-only entry point writes X and info alone). The first
// column's forward substitution rides along with the factorization (group_factor_staged_rhs);
// the other sweeps read the staged factor. k >= 1 (posv_cuda.cu runs potrf alone for no
// columns). kLoadU: 16-byte vectors in flight per thread while the chunk is staged.
template <typename T, int NP, int P, int kLoadU>
__device__ __forceinline__ void posv_warp_body(const T* __restrict__ A, const T* __restrict__ B,
                                               T* __restrict__ X, T* __restrict__ L,
                                               int* __restrict__ info, int64_t batch, int k,
                                               StageLayout lay, bool upper, bool vec) {
  using S = GroupShape<NP, P>;
  extern __shared__ __align__(16) unsigned char warp_smem_raw[];
  T* s = reinterpret_cast<T*>(warp_smem_raw);
  int64_t first;
  int count;
  chunk_of_block<P>(batch, first, count);
  const int n = lay.n, nn = n * n;
  stage_in_exact<T, kLoadU, NP>(s, A + first * nn, count * nn, lay, vec, upper);
  __syncthreads();

  const int g = threadIdx.x / P, q = threadIdx.x % P;
  const int n_eff = g < count ? n : 0;
  const bool conj_rhs = upper && IsComplex<T>::value;
  T* mat = s + g * lay.ms;
  const int64_t sys = (first + g) * int64_t(n) * k;
  const auto load_rhs = [&](T(&b)[S::kRows], int c) {
#pragma unroll
    for (int t = 0; t < S::kRows; ++t) {
      const int i = q + P * t;
      b[t] = i < n_eff ? B[sys + int64_t(i) * k + c] : T(0);
      if (conj_rhs) b[t] = conj_(b[t]);
    }
  };
  const auto store_x = [&](const T(&b)[S::kRows], int c) {
#pragma unroll
    for (int t = 0; t < S::kRows; ++t) {
      const int i = q + P * t;
      if (i < n_eff) X[sys + int64_t(i) * k + c] = conj_rhs ? conj_(b[t]) : b[t];
    }
  };
  const auto factor_solve = [&](auto at) {
    real_t<T> rdiag[S::kRows];
    T b[S::kRows];
    load_rhs(b, 0);
    const int inf = group_factor_staged_rhs<T, NP, P>(mat, at, n_eff, q, rdiag, b);
    if (n_eff > 0 && q == 0) info[first + g] = inf;
    __syncwarp();  // a group's lanes share one warp: its factor is now visible to them
    group_backward_staged<T, NP, P>(mat, at, n_eff, rdiag, b, q);
    store_x(b, 0);
    for (int c = 1; c < k; ++c) {
      load_rhs(b, c);
      group_forward_staged<T, NP, P>(mat, at, n_eff, rdiag, b, q);
      group_backward_staged<T, NP, P>(mat, at, n_eff, rdiag, b, q);
      store_x(b, c);
    }
  };
  with_square_index(lay.pitch, upper, factor_solve);
  if (L == nullptr) return;
  __syncthreads();
  stage_out_exact<T, NP>(L + first * nn, s, count * nn, lay, vec, upper);
}

// The kernels: ptxas takes the register budget from __launch_bounds__ or from
// __maxnreg__, and CUDA allows one of them per kernel, so one entry point for each;
// posv_warp_max_regs (warp_chol_launch.cuh) picks. (A minimum of 1 block is not the same
// to ptxas as none: without it ptxas gave the float64 kernels 22 registers fewer to 2
// more, another schedule, none of it measured.)
template <typename T, int NP, int P, int kLoadU = 4>
__global__ void __launch_bounds__(256, 1)
    posv_warp_kernel(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ X,
                     T* __restrict__ L, int* __restrict__ info, int64_t batch, int k,
                     StageLayout lay, bool upper, bool vec) {
  posv_warp_body<T, NP, P, kLoadU>(A, B, X, L, info, batch, k, lay, upper, vec);
}

template <typename T, int NP, int P, int kMaxRegs, int kLoadU = 4>
__global__ void __maxnreg__(kMaxRegs)
    posv_warp_kernel_capped(const T* __restrict__ A, const T* __restrict__ B,
                            T* __restrict__ X, T* __restrict__ L, int* __restrict__ info,
                            int64_t batch, int k, StageLayout lay, bool upper, bool vec) {
  posv_warp_body<T, NP, P, kLoadU>(A, B, X, L, info, batch, k, lay, upper, vec);
}

}  // namespace cuda
}  // namespace batchchol
