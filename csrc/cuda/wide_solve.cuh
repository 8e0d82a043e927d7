// Fused posv for the wide family's two-warp orders (float64 33..64; float32 there only
// when the wide potrf is forced): one block factors its matrix with wide_potrf and
// solves with the factor still in shared memory, so A and B are read once and X written
// once (L only for posv, which returns it). potrf + potrs instead writes L and reads it
// back. The routines take any NW; three and four warps are not built (wide_launch.h).
//
// wide_potrf leaves the raw entries a_rj of the working matrix in the stage with the
// pivots d_j on the diagonal, i.e. A = Lt D Lt^T with Lt(r, j) = a_rj / d_j. So
//   forward:  z_r = b_r - sum_{j<r} a_rj w_j,     w_j = z_j / d_j,
//   backward: x_r = (z_r - sum_{j>r} a_jr x_j) / d_r,
// with each division by d_r taken as two multiplications by rsqrt_(d_r) (wide_over_pivot;
// as the steps do). Row r stays on lane r. The first column's forward
// substitution runs inside the factorization's steps (WideRhs, wide_chol.cuh). Otherwise
// each warp sweeps its own 32 rows with shuffles (per row a chain of one multiply, one
// shuffle and one multiply-add), then the warps after it (forward) or before it
// (backward) take its 32 finished values from shared memory in one pass.
#pragma once

#include "cuda/scalar_ops.cuh"
#include "cuda/wide_kernels.cuh"

namespace batchchol {
namespace cuda {

// z / d_r as (z rinv) rinv with rinv = rsqrt_(d_r): 1 / d_r itself overflows for a
// subnormal pivot (scalar_ops.cuh).
template <typename T>
__device__ __forceinline__ T wide_over_pivot(T z, T rinv) {
  return (z * rinv) * rinv;
}

// Sweep of the warp whose rows start at j0 (lane q holds row r = j0 + q, rinv = 1 / sqrt(d_r)):
// forward, z_r -= a_rj w_j (w_j = z_j / d_j) for the warp's rows j < r; backward, z_r -=
// a_jr x_j (x_j = z_j / d_j) for its rows j > r. Lane j forms w_j or x_j and shuffles it
// (forming a_rj / d_j off the chain instead cost 2-7%, KERNEL-NOTES). Returns the updated
// z (w_r or x_r is z / d_r). Rows past n have no stage row: in the forward sweep their
// lanes read row n - 1 (a clamped index kept ptxas from spilling where a branch did) into
// a z that nothing uses; in the backward sweep they read nothing (q < t puts r below n).
template <typename T, bool kForward>
__device__ __forceinline__ T wide_sweep(T z, T rinv, const T* mat, int pitch, bool upper,
                                        int n, int j0, int q) {
  const int r = j0 + q;
  const int rr = r < n ? r : n - 1;  // rows past n read row n - 1 into their unused z
  if constexpr (kForward) {
#pragma unroll
    for (int t = 0; t < 32; ++t) {
      if (j0 + t < n) {
        const T wj = shfl(wide_over_pivot(z, rinv), t);
        if (q > t) z -= staged_at(const_cast<T*>(mat), pitch, upper, rr, j0 + t) * wj;
      }
    }
  } else {
#pragma unroll
    for (int t = 31; t >= 0; --t) {
      if (j0 + t < n) {
        const T xj = shfl(wide_over_pivot(z, rinv), t);
        if (q < t) z -= staged_at(const_cast<T*>(mat), pitch, upper, j0 + t, r) * xj;
      }
    }
  }
  return z;
}

// The rows of the other warps take the 32 values val[j0 ..] of the warp that swept:
// forward z_r -= a_rj w_j, backward z_r -= a_jr x_j.
template <typename T, bool kForward>
__device__ __forceinline__ T wide_take_block(T z, const T* val, const T* mat, int pitch,
                                             bool upper, int n, int j0, int r) {
  const int rr = r < n ? r : n - 1;  // as in wide_sweep
#pragma unroll 8
  for (int t = 0; t < 32; ++t) {
    const int j = j0 + t;
    if (j < n) {
      const T a = kForward ? staged_at(const_cast<T*>(mat), pitch, upper, rr, j)
                           : staged_at(const_cast<T*>(mat), pitch, upper, j, r);
      z -= a * val[j];
    }
  }
  return z;
}

// Solves the k columns of b (n x k, row-major) into x after wide_potrf and a block
// barrier, from the raw stage; z0: the first column already forward-substituted (lane r's
// z_r, by WideRhs in the steps); inf: the factorization's info (known on the last warp's
// lanes). A failed factorization gives NaN columns, as the unfused path (whose L holds
// the NaN square root) would. scratch: the column buffer, free after the steps: the
// finished w_j or x_j of the warp that just swept (32 NW elements), then the info.
template <typename T, int NW>
__device__ __forceinline__ void wide_solve(T* scratch, const T* mat, int pitch, int n, bool upper,
                                           const T* __restrict__ b, T* __restrict__ x, int k,
                                           int inf, T z0) {
  static_assert(!IsComplex<T>::value, "the wide family is real");
  static_assert(wide_colbuf<NW>() >= 32 * NW + 1, "the solve's buffers live in the column buffer");
  T* const val = scratch;
  int* const info = reinterpret_cast<int*>(scratch + 32 * NW);
  const int r = threadIdx.x, w = r / 32, q = r % 32;
  if (r == 32 * (NW - 1)) *info = inf;
  const bool live = r < n;
  const T rinv = live ? rsqrt_(staged_at(const_cast<T*>(mat), pitch, upper, r, r)) : T(0);
  __syncthreads();
  const bool failed = *info != 0;
  for (int c = 0; c < k; ++c) {
    T z = z0;  // column 0: forward-substituted in the steps (WideRhs)
    // Each warp's writes of val[its rows] follow a barrier that every reader of the
    // previous values there has passed (the forward readers are later warps, the
    // backward ones earlier warps, and the sweeps alternate direction).
    if (c > 0) {
      z = live ? b[int64_t(r) * k + c] : T(0);
#pragma unroll
      for (int wb = 0; wb < NW; ++wb) {
        if (w == wb) {
          z = wide_sweep<T, true>(z, rinv, mat, pitch, upper, n, 32 * wb, q);
          val[r] = wide_over_pivot(z, rinv);
        }
        if (wb < NW - 1) {
          __syncthreads();
          if (w > wb) z = wide_take_block<T, true>(z, val, mat, pitch, upper, n, 32 * wb, r);
        }
      }
    }
#pragma unroll
    for (int wb = NW - 1; wb >= 0; --wb) {
      if (w == wb) {
        const T xr =
            wide_over_pivot(wide_sweep<T, false>(z, rinv, mat, pitch, upper, n, 32 * wb, q), rinv);
        val[r] = xr;
        if (live) x[int64_t(r) * k + c] = failed ? quiet_nan<T>() : xr;
      }
      if (wb > 0) {
        __syncthreads();
        if (w < wb) z = wide_take_block<T, false>(z, val, mat, pitch, upper, n, 32 * wb, r);
      }
    }
  }
}

// One system per block of 32 NW threads: B, X are [batch, n, k]; L may be null
// (posv_solve), then the factor never leaves the chip.
template <typename T, int NW>
__global__ void __launch_bounds__(32 * NW, (wide_min_blocks<NW>()))
    posv_wide_kernel(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ X,
                     T* __restrict__ L, int* __restrict__ info, int k, StageLayout lay,
                     bool upper, bool vec) {
  extern __shared__ __align__(16) unsigned char wide_smem_raw[];
  T* const scratch = reinterpret_cast<T*>(wide_smem_raw);
  T* const mat = scratch + wide_scratch<NW>();
  const int64_t s = blockIdx.x;
  const int n = lay.n, nn = n * n;
  wide_stage_in_exact<T, 16, 32 * NW>(mat, A + s * nn, nn, lay, vec, upper);
  __syncthreads();
  const int64_t sys = s * int64_t(n) * k;
  const int r = threadIdx.x;
  // The first column's forward substitution rides along with the steps (one multiply-add
  // and one broadcast read per step, off the pivot chain); its buffer is the copy-out's
  // space, free until wide_store_factor.
  const WideRhs<T> rhs{r < n ? B[sys + int64_t(r) * k] : T(0), scratch + wide_colbuf<NW>()};
  T z0;
  const int inf = wide_potrf<T, NW, true>(scratch, mat, lay.pitch, n, upper, rhs, &z0);
  __syncthreads();  // every step is done: the pivots are staged
  if (r == 32 * (NW - 1)) info[s] = inf;
  wide_solve<T, NW>(scratch, mat, lay.pitch, n, upper, B + sys, X + sys, k, inf, z0);
  if (L != nullptr) wide_store_factor<T, NW, true>(scratch, mat, L + s * nn, lay, upper, vec);
}

}  // namespace cuda
}  // namespace batchchol
