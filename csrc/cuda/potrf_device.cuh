// Device routines of the Cholesky factorization, for one matrix at a time.
//
// Layout convention: every routine factors a LOWER factor of a row-major matrix.
// An upper factor (A = U^H U) is the transpose (without conjugation) of the lower
// factor of A^T, so the kernels only change how they load and store.
#pragma once

#include "cuda/scalar_ops.cuh"

namespace batchchol {
namespace cuda {

// Row pitch (in elements) of a matrix staged in shared memory: odd, so that the
// lanes of a warp reading one column (rows r, r+1, ...) hit distinct banks.
__host__ __device__ __forceinline__ int smem_pitch(int n) { return n | 1; }

// Cholesky of an n x n matrix (n <= NP) held by NP consecutive lanes, lane r
// holding row r in registers a[0..NP-1] (only a[j], j <= r, are meaningful).
// Right-looking: after step k, column k is final and the trailing rows updated.
// Returns the LAPACK info of the matrix (same value on every lane of the group).
// Register arrays are indexed with compile-time indices only (fully unrolled).
template <typename T, int NP>
__device__ __forceinline__ int potrf_rows_in_registers(T (&a)[NP], int r, int n) {
  using R = real_t<T>;
  int info = 0;
#pragma unroll
  for (int k = 0; k < NP; ++k) {
    if (k < n) {
      const R d = real_(shfl(a[k], k, NP));
      if (!pivot_ok(d) && info == 0) info = k + 1;
      const R s = sqrt(d);
      const R inv = R(1) / s;
      if (r == k) a[k] = T(s);
      if (r > k) a[k] = a[k] * inv;
#pragma unroll
      for (int j = k + 1; j < NP; ++j) {
        if (j < n) {
          const T ljk = shfl(a[k], j, NP);  // L[j][k], held by lane j
          if (r >= j) a[j] -= mul_conj(a[k], ljk);
        }
      }
    }
  }
  return info;
}

// Forward then backward substitution for one right-hand side column held by the
// same NP lanes (lane r holds b_r), with L's rows in a[] (as left by
// potrf_rows_in_registers) and L's columns in col[] (col[i] = L[i][r] on lane r).
// Solves L L^H x = b; x is left in b.
template <typename T, int NP>
__device__ __forceinline__ void potrs_rows_in_registers(const T (&a)[NP], const T (&col)[NP],
                                                        T& b, int r, int n) {
  using R = real_t<T>;
  // L y = b: y_j becomes final on lane j, then is broadcast to the rows below.
#pragma unroll
  for (int j = 0; j < NP; ++j) {
    if (j < n) {
      if (r == j) b = b / real_(a[j]);
      const T yj = shfl(b, j, NP);
      if (r > j) b -= a[j] * yj;
    }
  }
  // L^H x = y: x_i final on lane i, then rows above subtract conj(L[i][r]) x_i.
#pragma unroll
  for (int i = NP - 1; i >= 0; --i) {
    if (i < n) {
      if (r == i) b = b / R(real_(col[i]));
      const T xi = shfl(b, i, NP);
      if (r < i) b -= conj_(col[i]) * xi;
    }
  }
}

}  // namespace cuda
}  // namespace batchchol
