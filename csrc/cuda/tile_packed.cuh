// The tile family's packed stage (tile_chol.cuh's loop with two tiles fewer a block),
// for the orders where that lifts the blocks per SM on sm_90 (tile_launch.h's tile_packs):
// float64 four tile columns (97..128 with the MMA update, fixed-size batches and the
// ragged launches of one size group: 3 blocks of 4 warps where the whole triangle fit
// two of 4 or 8), float64 five (129..160: 2 blocks of 8 warps where the whole triangle
// fit one) and float32 seven (193..224: likewise).
//
// The two tiles: (1) the panel solve's operand, L_kk^T, goes into diagonal tile k's
// upper part (scratch until then; no update touches a diagonal tile once it is
// factored) and 1 / L(j, j) stays in the chain buffer, instead of a tile of its own;
// (2) the last diagonal tile is deferred: its slot, the packed triangle's last, is not
// allocated; the block's last warp reads it from memory while warp 0 factors diagonal
// tile 1, and once tile column 0 has been written out of tile (0, 0)'s slot stores it
// there and gives it step 0's update (skipped at step 0). The same operations on every
// entry as tile_potrf, so the same bits. The steps' packed forms are tile_chol.cuh's
// (tile_factor_diag<true>, tile_solve_panel<true>, tile_update_trailing<T, kMma, true>);
// this file holds the deferred tile and the loop.
//
// Why only there: at equal blocks per SM this stage ran 3-40% slower than tile_potrf's
// (H200, four builds of tools/tile_phase_probe.cu, described with their times in
// results/h200-2026-11-28-packed-probe.txt; same bits): its chain compiles to more
// instructions a step, and float64's deferred update sits in a panel phase. Where it
// doubles the blocks per SM it gains: float64 160 2.77 ms (16 warps, one block) -> 2.45
// (two of 8 warps); and from two blocks to three: float64 128 1.287 ms (8 warps unpacked)
// -> 1.122 (4 packed; results/h200-2026-11-28-round48-tile4-packed-probe.txt).
#pragma once

#include "cuda/tile_chol.cuh"

#include <type_traits>

namespace batchchol {
namespace cuda {

// Entry (i, j) of the working matrix W (A for a lower factor, A^T for an upper one) of
// the n x n source a, the identity past n: what the stage holds.
template <typename T>
__device__ __forceinline__ T tile_source(const T* a, int n, bool upper, int i, int j) {
  if (i < n && j < n) return upper ? a[int64_t(j) * n + i] : a[int64_t(i) * n + j];
  return i == j ? T(1) : T(0);
}

// The deferred last diagonal tile, read from memory into one warp's registers (`load`;
// W as tile_source gives it) and stored to a slot (`store`): lane (ri, ci) = (lane % 8,
// lane / 8) holds rows ri + 8 i, columns ci + 4 j; float64 with the MMA update only the
// entries of the 8 x 8 blocks on and below the diagonal that tile_gemm_nt_dmma<true>
// updates (the others are never read): 32 registers (float32), 40 (float64 MMA) or 64
// (float64 FMA) held across the barrier.
template <typename T, bool kMma>
struct TileLastPrep {
  T w[4][8];
  __device__ static int row(int i) { return (threadIdx.x & 7) + 8 * i; }
  __device__ static int col(int j) { return ((threadIdx.x & 31) >> 3) + 4 * j; }
  __device__ __forceinline__ void load(const T* a, int n, bool upper, int nt) {
    const int o = kTile * (nt - 1);
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 8; ++j) w[i][j] = tile_source(a, n, upper, o + row(i), o + col(j));
  }
  __device__ __forceinline__ void store(T* c) const {
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 8; ++j) c[tile_off<T>(row(i), col(j))] = w[i][j];
  }
};

template <>
struct TileLastPrep<double, true> {
  double w[4][4][2];  // entries (8 m + lane / 4, 8 j + 2 (lane % 4) + e), j <= m
  __device__ __forceinline__ void load(const double* a, int n, bool upper, int nt) {
    const int lane = threadIdx.x & 31;
    const int r = lane / 4, kq = lane % 4;
    const int o = kTile * (nt - 1);
#pragma unroll
    for (int m = 0; m < 4; ++m)
#pragma unroll
      for (int j = 0; j <= m; ++j)
#pragma unroll
        for (int e = 0; e < 2; ++e)
          w[m][j][e] = tile_source(a, n, upper, o + 8 * m + r, o + 8 * j + 2 * kq + e);
  }
  __device__ __forceinline__ void store(double* c) const {
    const int lane = threadIdx.x & 31;
    const int r = lane / 4, kq = lane % 4;
#pragma unroll
    for (int m = 0; m < 4; ++m)
#pragma unroll
      for (int j = 0; j <= m; ++j)
        tile_chunk_ref(c, 8 * m + r, 4 * j + kq) = make_double2(w[m][j][0], w[m][j][1]);
  }
};

// The loaded last diagonal tile into tile (0, 0)'s slot, minus L(nt - 1, 0) L(nt - 1, 0)^T
// (the update in place: the same bits).
template <typename T, bool kMma>
__device__ __forceinline__ void tile_last_finish(const TileLastPrep<T, kMma>& last, T* s, int nt) {
  last.store(s);
  // The update's lanes read and write the entries they stored themselves (the layouts
  // match); the barrier keeps correctness from resting on that.
  __syncwarp();
  tile_update_at<T, kMma>(s, s, nt - 1, nt - 1, 0);
}

// tile_potrf over the packed stage (tile_packed_slots tiles and the chain buffer cb;
// nt >= 3 defers the last diagonal tile, read from the n x n source a, upper as staged).
// At step 1 the last warp loads that tile instead of writing segment 0, and in the panel
// phase (where it holds no panel rows: 32 (nt - 2) <= 32 (warps - 1) at the packed
// orders) finishes it.
template <typename T, bool kMma, typename Out>
__device__ int tile_potrf_packed(T* s, T* cb, int nt, int* info_s, const T* a, int n, bool upper,
                                 const Out& out) {
  const int warp = threadIdx.x / 32, warps = blockDim.x / 32;
  const bool defer = nt >= 3;
  if (threadIdx.x == 0) *info_s = 0;
  for (int k = 0; k < nt; ++k) {
    // Declared here: its registers are live from load to finish only.
    TileLastPrep<T, kMma> last;
    const bool prep = defer && k == 1 && warp == warps - 1;
    if (warp == 0) {
      const int inf = tile_factor_diag<true>(tile_home(s, nt, k, k), static_cast<T*>(nullptr), cb);
      // The first failure is kept (a compare-and-swap: tile_potrf says why).
      if (threadIdx.x == 0 && inf != 0) atomicCAS(info_s, 0, kTile * k + inf);
    } else if (prep) {
      last.load(a, n, upper, nt);
    } else if (k > 0) {
      const int writers = blockDim.x - kTile - (defer && k == 1 ? kTile : 0);
      out.segment(k - 1, threadIdx.x - kTile, writers);
    }
    if (k == 0) cp_async_wait<0>();
    __syncthreads();
    if (k + 1 < nt) {
      tile_solve_panel<true>(s, nt, k, static_cast<const T*>(nullptr), cb);
      if (prep) tile_last_finish(last, s, nt);
      __syncthreads();
      tile_update_trailing<T, kMma, true>(s, nt, k);
      __syncthreads();
    }
  }
  return *info_s;
}

}  // namespace cuda
}  // namespace batchchol
