// The triangular solves of the tile family's fused posv (tile_posv.cu): A X = B with the
// factor L of the working matrix still in the stage (tile_chol.cuh's packed triangle).
// For an upper factor the stage holds W = A^T = A and its lower factor, so both
// directions solve L L^T x = b.
//
// Why: potrf + potrs writes L (n^2 entries) and reads it back, and its solve is a kernel
// of its own; here B is read once and X written once, and L only when posv returns it.
// The forward solve of tile column k runs on the block's last warp while warp 0 factors
// diagonal tile k + 1 (tile_potrf's segment phase: the other warps only write L there,
// or wait), so only the last tile column's forward solve and the backward solve follow
// the factorization, one warp per right-hand side.
//
// A right-hand side lives in shared memory as a column y of 32 nt entries (zero past n:
// the stage's identity padding keeps them zero). Lane j holds rows j + 32 t. Each
// triangle is a chain of 32 steps of one multiply, one shuffle and one multiply-add
// (column-oriented: x_t is broadcast and subtracted from the rows it feeds at once); the
// rows of the other tiles take their part off the chain.
#pragma once

#include "cuda/scalar_ops.cuh"
#include "cuda/tile_chol.cuh"
#include "cuda/tile_stage.cuh"

namespace batchchol {
namespace cuda {

// Forward solve of tile column kc for the column y, by one warp: y_kc := L_kk^-1 y_kc,
// then y_I -= L_Ik y_kc for the tiles I below. Tile column kc must be final (after the
// panel solve of step kc) and y_kc must hold every earlier tile column's update.
template <typename T>
__device__ __forceinline__ void tile_forward_column(const T* s, T* y, int nt, int kc) {
  using Chunk = TileChunk<T>;
  constexpr int V = Chunk::kLen;
  const int lane = threadIdx.x & 31;
  const T* d = tile_at(s, kc, kc);
  const T rl = T(1) / d[tile_off<T>(lane, lane)];
  T z = y[kTile * kc + lane];
#pragma unroll
  for (int t = 0; t < kTile; ++t) {
    const T w = shfl(z * rl, t);
    if (lane > t) z -= d[tile_off<T>(lane, t)] * w;
  }
  y[kTile * kc + lane] = z * rl;
  __syncwarp();
  using C = typename Chunk::type;
  for (int I = kc + 1; I < nt; ++I) {
    const T* t = tile_at(s, I, kc);
    T acc = T(0);
#pragma unroll
    for (int q = 0; q < kTile / V; ++q) {
      const auto lv = tile_chunk(t, lane, q);
      const auto yv = *reinterpret_cast<const C*>(y + kTile * kc + q * V);  // a broadcast
#pragma unroll
      for (int u = 0; u < V; ++u) acc += Chunk::get(lv, u) * Chunk::get(yv, u);
    }
    y[kTile * I + lane] -= acc;
  }
  __syncwarp();  // the next column's reads of y_kc and this one's writes
}

// Backward solve L^T x = y by one warp (y forward-solved in every tile column), written
// to column c of the row-major n x k block x (NaN when `failed`, as potrf + potrs gives
// with the failed factor's NaN). kMaxNt: the most tile columns the kernel serves, so
// that every tile's rows stay in registers under compile-time indices.
template <typename T, int kMaxNt>
__device__ __forceinline__ void tile_backward(const T* s, const T* y, T* __restrict__ x, int n,
                                              int nt, int k, int c, bool failed) {
  const int lane = threadIdx.x & 31;
  T z[kMaxNt], rl[kMaxNt];
#pragma unroll
  for (int U = 0; U < kMaxNt; ++U) {
    z[U] = U < nt ? y[kTile * U + lane] : T(0);
    rl[U] = U < nt ? T(1) / tile_at(s, U, U)[tile_off<T>(lane, lane)] : T(0);
  }
#pragma unroll
  for (int D = kMaxNt - 1; D >= 0; --D) {
    if (D >= nt) continue;
    const T* d = tile_at(s, D, D);
#pragma unroll
    for (int t = kTile - 1; t >= 0; --t) {
      const T xt = shfl(z[D] * rl[D], t);
      if (lane < t) z[D] -= d[tile_off<T>(t, lane)] * xt;
      // L(32 D + t, 32 U + lane): row t of tile (D, U), the rows above tile D.
#pragma unroll
      for (int U = 0; U < D; ++U) z[U] -= tile_at(s, D, U)[tile_off<T>(t, lane)] * xt;
    }
    z[D] *= rl[D];
  }
#pragma unroll
  for (int U = 0; U < kMaxNt; ++U) {
    const int row = kTile * U + lane;
    if (U < nt && row < n) x[int64_t(row) * k + c] = failed ? quiet_nan<T>() : z[U];
  }
}

// tile_potrf's Out for posv: in the segment phase of step kc + 1 the calling warps write
// tile column kc of L as potrf's do (when it is returned: l non-null), then the last of
// them forward-solves tile column kc for every right-hand side. y: k columns of 32 nt
// entries.
template <typename T>
struct TilePosvOut {
  TileSegmentOut<T> l_out;
  T* y;
  int k;
  __device__ __forceinline__ void segment(int kc, int tid, int nthreads) const {
    if (l_out.out != nullptr) l_out.segment(kc, tid, nthreads);
    if (tid >= nthreads - kTile) {
      const int npad = kTile * l_out.nt;
      for (int c = 0; c < k; ++c) tile_forward_column(l_out.s, y + c * npad, l_out.nt, kc);
    }
  }
};

}  // namespace cuda
}  // namespace batchchol
