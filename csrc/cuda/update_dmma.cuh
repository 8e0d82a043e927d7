// The blocked family's trailing update in float64 on the tensor cores (sm_80 and later):
// a 64 x 64 tile of L22 -= L21 L21^T as double-precision 8 x 8 x 4 MMAs.
//
// Why: the FMA version (blocked_update_kernel) issues 16 multiply-adds per pair of
// element broadcasts from shared memory, and a 64 x 64 tile with rank 128 took ~8,000
// SM clocks of float64 FMA issue against ~5,000 for its memory traffic: the group
// updates at n = 512 were bound by the FMA pipes (KERNEL-NOTES, eleventh round). The
// MMA does 256 multiply-adds per warp instruction from six 8-byte loads per thread and
// k-step, at twice the FMA rate on sm_90.
//
// Fragments: dmma.cuh. With A = rows of L21 for the tile's rows and B = L21^T for its
// columns, both fragments are element (row, k) of a slice staged row by row, so lane l
// reads slice row l / 4 at column l % 4.
#pragma once

#include <type_traits>

#include "cuda/dmma.cuh"
#include "cuda/potrf_block.cuh"

namespace batchchol {
namespace cuda {

// Whether blocked_update_kernel<T> runs on the MMAs: float64 on sm_80 and later (float32
// stays on the FMA pipes: TF32 would round the products).
template <typename T>
constexpr bool update_uses_dmma() {
  return dmma_available() && std::is_same_v<T, double>;
}

// Pitch of a staged 64 x 32 slice: a half warp reads rows r..r + 3 at columns c..c + 3;
// with a pitch of 4 mod 16 doubles their 16 addresses fall in distinct 8-byte banks.
constexpr int kDmmaPitch = kPanel + 4;

// Warp w of the block's eight computes rows 16 (w / 2) .. + 15 and columns 32 (w % 2) ..
// + 31 of the tile: 2 x 4 accumulators of 8 x 8.
struct DmmaWarpTile {
  static constexpr int kM = 2, kN = 4;
  int row0, col0;
  __device__ __forceinline__ DmmaWarpTile() {
    const int w = threadIdx.x / 32;
    row0 = 16 * (w / 2);
    col0 = 32 * (w % 2);
  }
  // Whether every entry lies above the diagonal of a diagonal tile (nothing to compute).
  __device__ __forceinline__ bool above_diagonal() const { return col0 > row0 + 15; }
};

// acc[m][c] (+/-)= A_m B_c^T over 32 k for an M x N grid of 8 x 8 tiles, both operands
// staged row by row (element (row, k)): this lane's fragments of row tile m at
// ai[8 m lda + k] and of column tile c at bj[8 c ldb + k], k = 0, 4, .., 28 (ai, bj:
// the lane's row l / 4 and column l % 4 of the first tiles). kNeg subtracts the products.
template <int M, int N, bool kNeg = false>
__device__ __forceinline__ void dmma_tiles_k32(double (&acc)[M][N][2], const double* ai, int lda,
                                               const double* bj, int ldb) {
#pragma unroll
  for (int k = 0; k < kPanel; k += 4) {
    double a[M], b[N];
#pragma unroll
    for (int m = 0; m < M; ++m) a[m] = kNeg ? -ai[8 * m * lda + k] : ai[8 * m * lda + k];
#pragma unroll
    for (int c = 0; c < N; ++c) b[c] = bj[8 * c * ldb + k];
#pragma unroll
    for (int m = 0; m < M; ++m)
#pragma unroll
      for (int c = 0; c < N; ++c) dmma_m8n8k4(acc[m][c], a[m], b[c]);
  }
}

// acc += (rows of pi) (rows of pj)^T over the 32 columns of the staged slices.
__device__ __forceinline__ void dmma_panel(double (&acc)[2][4][2], const DmmaWarpTile& wt,
                                           const double* pi, const double* pj) {
  const int lane = threadIdx.x & 31;
  dmma_tiles_k32(acc, pi + (wt.row0 + lane / 4) * kDmmaPitch + lane % 4, kDmmaPitch,
                 pj + (wt.col0 + lane / 4) * kDmmaPitch + lane % 4, kDmmaPitch);
}

// Tile entry (r, c) of accumulator element (m, c4, e) of this lane.
__device__ __forceinline__ int dmma_row(const DmmaWarpTile& wt, int m) {
  return wt.row0 + 8 * m + (threadIdx.x & 31) / 4;
}
__device__ __forceinline__ int dmma_col(const DmmaWarpTile& wt, int c4, int e) {
  return wt.col0 + 8 * c4 + 2 * ((threadIdx.x & 31) % 4) + e;
}

}  // namespace cuda
}  // namespace batchchol
