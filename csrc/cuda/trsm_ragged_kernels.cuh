// Ragged-batch kernel of trsm and potrs: the warp-per-(system, column group) kernels
// of trsm_kernels.cuh with each system's n, offsets and column count read per system.
#pragma once

#include "cuda/trsm_kernels.cuh"

namespace batchchol {
namespace cuda {

struct RaggedSolveParams {
  int64_t count;
  const int64_t* a_offsets;
  const int64_t* b_offsets;  // also X's: X has B's layout
  const int* sizes;
  const int* status;      // null when validated on the host
  const int* rhs_status;  // the right-hand-side block's own status (with status)
  int k;                  // columns per system; -1: n_i
  int col_begin, col_end; // columns of this launch (of the widest system)
  int groups;             // column groups per system in this launch
  bool left;
};

// Potrs: a second, backward pass (v2) on the forward pass's result. kMma: the products
// and diagonal blocks on the float64 MMAs (trsm_mma_blocks).
template <typename T, int CPW, bool Potrs, bool kMma>
__device__ __forceinline__ void solve_ragged_body(const T* __restrict__ A, const T* B, T* X,
                                                  TrsmView& v1, TrsmView& v2,
                                                  const RaggedSolveParams& p) {
  const int64_t work = int64_t(blockIdx.x) * kTrsmWarps + (threadIdx.x >> 5);
  if (work >= p.count * p.groups) return;  // whole warps: no block barriers below
  const int64_t sys = work / p.groups;
  const int g = int(work - sys * p.groups);
  const int n = p.sizes[sys];
  const int k = p.k < 0 ? n : p.k;
  const int c0 = p.col_begin + g * CPW;
  const int ncols = min(CPW, min(p.col_end, k) - c0);
  if (ncols <= 0 || n == 0) return;
  const int lane = threadIdx.x & 31;
  const int64_t rs = p.left ? k : 1, cs = p.left ? 1 : n;
  T* x = X + p.b_offsets[sys] + c0 * cs;
  if (p.status && p.status[sys] != 0) {
    // Invalid metadata: a NaN result says so, where the result block is ours to write.
    if (p.rhs_status[sys] == 0) {
      for (int r = lane; r < n; r += 32)
        for (int c = 0; c < ncols; ++c) x[r * rs + c * cs] = quiet_nan<T>();
    }
    return;
  }
  v1.n = v2.n = n;
  v1.rs = v2.rs = rs;
  v1.cs = v2.cs = cs;
  T* Ms = trsm_warp_smem<T, CPW, kMma>();
  const T* a = A + p.a_offsets[sys];
  trsm_warp_solve<T, CPW, kMma>(a, B + p.b_offsets[sys] + c0 * cs, x, v1, ncols, Ms, lane);
  if constexpr (Potrs) trsm_warp_solve<T, CPW, kMma>(a, x, x, v2, ncols, Ms, lane);
}

template <typename T, int CPW, bool Potrs>
__global__ void __launch_bounds__(kTrsmWarps * 32)
    solve_ragged_kernel(const T* __restrict__ A, const T* B, T* X, TrsmView v1, TrsmView v2,
                        RaggedSolveParams p) {
  solve_ragged_body<T, CPW, Potrs, false>(A, B, X, v1, v2, p);
}

// On the MMAs: held to three blocks per SM, as the fixed-size potrs_warp_mma_kernel is
// (ptxas took 210 registers without the bound; 168 with it, no spill). A kernel of its
// own: a minimum-blocks bound of 1 on the FMA instances moved their registers (56 -> 72
// with one column, 102 -> 170 with 16).
template <typename T, int CPW, bool Potrs>
__global__ void __launch_bounds__(kTrsmWarps * 32, 3)
    solve_ragged_mma_kernel(const T* __restrict__ A, const T* B, T* X, TrsmView v1,
                            TrsmView v2, RaggedSolveParams p) {
  solve_ragged_body<T, CPW, Potrs, true>(A, B, X, v1, v2, p);
}

}  // namespace cuda
}  // namespace batchchol
