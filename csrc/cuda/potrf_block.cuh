// Block-level routines on a matrix staged in shared memory (one thread block per
// matrix): the blocked right-looking Cholesky of potrf_shared_kernel.
#pragma once

#include "cuda/potrf_device.cuh"

namespace batchchol {
namespace cuda {

constexpr int kPanel = 32;  // panel width: one warp factors a 32 x 32 diagonal block

// Maps a linear index over the lower triangle of a T x T grid of tiles to (ti, tj).
__device__ __forceinline__ void tri_index(int l, int& ti, int& tj) {
  int i = static_cast<int>((sqrtf(8.0f * l + 1.0f) - 1.0f) * 0.5f);
  while ((i + 1) * (i + 2) / 2 <= l) ++i;
  while (i * (i + 1) / 2 > l) --i;
  ti = i;
  tj = l - i * (i + 1) / 2;
}

// Factors the 32-wide diagonal block at (k0, k0) of s with warp 0, in registers.
template <typename T>
__device__ __forceinline__ int factor_diag_block(T* s, int pitch, int k0, int nb) {
  const int lane = threadIdx.x;
  T a[kPanel];
  const T* row = s + static_cast<long>(k0 + lane) * pitch + k0;
#pragma unroll
  for (int j = 0; j < kPanel; ++j) a[j] = (lane < nb && j <= lane) ? row[j] : T(0);
  const int info = potrf_rows_in_registers<T, kPanel>(a, lane, nb);
  if (lane < nb) {
    T* out = s + static_cast<long>(k0 + lane) * pitch + k0;
#pragma unroll
    for (int j = 0; j < kPanel; ++j)
      if (j <= lane) out[j] = a[j];
  }
  return info;
}

// Rows below a factored diagonal block: x L11^H = a for each row (one row per
// thread, the row in registers, L11 read as broadcasts from shared memory).
template <typename T>
__device__ __forceinline__ void solve_panel_rows(T* s, int pitch, int k0, int row_begin,
                                                 int row_end) {
  for (int i = row_begin + threadIdx.x; i < row_end; i += blockDim.x) {
    T* row = s + static_cast<long>(i) * pitch + k0;
    T x[kPanel];
#pragma unroll
    for (int j = 0; j < kPanel; ++j) x[j] = row[j];
#pragma unroll
    for (int j = 0; j < kPanel; ++j) {
      const T* lj = s + static_cast<long>(k0 + j) * pitch + k0;
      T acc = x[j];
#pragma unroll
      for (int p = 0; p < j; ++p) acc -= mul_conj(x[p], lj[p]);
      x[j] = acc / real_(lj[j]);
    }
#pragma unroll
    for (int j = 0; j < kPanel; ++j) row[j] = x[j];
  }
}

// Trailing update of the lower triangle: S22 -= L21 L21^H over the panel columns
// [k0, k0 + 32), rows/cols from t0 to n. Each thread owns 4 x 4 output tiles.
template <typename T>
__device__ __forceinline__ void update_trailing(T* s, int pitch, int k0, int t0, int n) {
  constexpr int TS = 4;
  const int m = n - t0;
  const int nt = (m + TS - 1) / TS;
  const int tiles = nt * (nt + 1) / 2;
  for (int l = threadIdx.x; l < tiles; l += blockDim.x) {
    int ti, tj;
    tri_index(l, ti, tj);
    const int i0 = t0 + ti * TS, j0 = t0 + tj * TS;
    T acc[TS][TS];
#pragma unroll
    for (int a = 0; a < TS; ++a)
#pragma unroll
      for (int b = 0; b < TS; ++b) acc[a][b] = T(0);
#pragma unroll 4
    for (int p = 0; p < kPanel; ++p) {
      T li[TS], lj[TS];
#pragma unroll
      for (int a = 0; a < TS; ++a) {
        li[a] = (i0 + a < n) ? s[static_cast<long>(i0 + a) * pitch + k0 + p] : T(0);
        lj[a] = (j0 + a < n) ? s[static_cast<long>(j0 + a) * pitch + k0 + p] : T(0);
      }
#pragma unroll
      for (int a = 0; a < TS; ++a)
#pragma unroll
        for (int b = 0; b < TS; ++b) acc[a][b] += mul_conj(li[a], lj[b]);
    }
#pragma unroll
    for (int a = 0; a < TS; ++a)
#pragma unroll
      for (int b = 0; b < TS; ++b) {
        const int i = i0 + a, j = j0 + b;
        if (i < n && j <= i) s[static_cast<long>(i) * pitch + j] -= acc[a][b];
      }
  }
}

// Blocked right-looking Cholesky of the n x n lower triangle in shared memory.
// Returns info (LAPACK convention) on every thread. `info_s` is a shared int.
template <typename T>
__device__ int potrf_in_shared(T* s, int n, int pitch, int* info_s) {
  if (threadIdx.x == 0) *info_s = 0;
  __syncthreads();
  for (int k0 = 0; k0 < n; k0 += kPanel) {
    const int nb = min(kPanel, n - k0);
    if (threadIdx.x < 32) {
      const int info = factor_diag_block(s, pitch, k0, nb);
      if (threadIdx.x == 0 && info != 0 && *info_s == 0) *info_s = k0 + info;
    }
    __syncthreads();
    if (k0 + nb < n) {
      solve_panel_rows(s, pitch, k0, k0 + nb, n);
      __syncthreads();
      update_trailing(s, pitch, k0, k0 + nb, n);
      __syncthreads();
    }
  }
  return *info_s;
}

}  // namespace cuda
}  // namespace batchchol
