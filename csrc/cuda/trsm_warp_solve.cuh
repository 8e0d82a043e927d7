// The warp-per-system solve (one warp owns one system and CPW right-hand-side columns)
// and its two loops for the off-diagonal products: one row per lane on the FMA pipes, or
// 8 x 8 fragments on the float64 MMAs. Views, tile staging and the shared-memory layouts
// are in trsm_device.cuh. Lane l owns canonical row 32 R + l of every row block R; a lane
// loading its own solved rows back only re-reads what it wrote itself within one pass,
// while the chunked loads of Y[C] (trsm_issue_rows, either loop) take other lanes' rows,
// ordered after their stores by the __syncwarp that opens each block C.
#pragma once

#include <cstdint>

#include "cuda/async_copy.cuh"
#include "cuda/dmma.cuh"
#include "cuda/trsm_device.cuh"

namespace batchchol {
namespace cuda {

// Whether rows C * 32 .. + 31 of Y, this group's CPW columns, go to shared memory as
// 16-byte chunks by cp.async (trsm_issue_rows): the group's columns contiguous, full and
// 16-byte aligned. A lane loading its own row of CPW entries issued loads that each
// touched the lines of 32 rows (ncu, H100, float64 trsm n = 256 with 16 columns: L1 the
// busiest unit at 86.5% of its throughput).
template <typename T, int CPW, int LD>
constexpr bool trsm_rows_chunkable() {
  return CPW % int(16 / sizeof(T)) == 0 && (LD * sizeof(T)) % 16 == 0;
}
template <typename T, int CPW, int LD>
__device__ __forceinline__ bool trsm_rows_chunked(const TrsmView& v, const T* dst, int ncols) {
  constexpr int E = int(16 / sizeof(T));
  return trsm_rows_chunkable<T, CPW, LD>() && v.chunk_rows && v.cs == 1 && ncols == CPW &&
         v.rs % E == 0 && reinterpret_cast<uintptr_t>(dst) % 16 == 0;
}

// Issues and commits those copies into Ys (pitch LD, rows on 16 bytes), CPW / E chunks
// per row in lane order, so that consecutive lanes read consecutive 16 bytes of a row.
template <typename T, int CPW, int LD>
__device__ __forceinline__ void trsm_issue_rows(const T* dst, const TrsmView& v, int C, T* Ys,
                                                int lane) {
  if constexpr (trsm_rows_chunkable<T, CPW, LD>()) {
    constexpr int E = int(16 / sizeof(T)), RC = CPW / E;
    const int n = v.n;
#pragma unroll
    for (int u = 0; u < RC; ++u) {
      const int e = lane + 32 * u, row = e / RC, cc = E * (e % RC);
      const int ic = C * kTrsmTile + row;
      const T* g = dst + int64_t(v.rev ? n - 1 - ic : ic) * v.rs + cc;
      cp_async_elem(reinterpret_cast<uint4*>(Ys + row * LD + cc),
                    reinterpret_cast<const uint4*>(g));
    }
    cp_async_commit();
  }
}

// The lane's own row C * 32 + lane of Y (this group's columns, zero past ncols) into Ys
// at pitch LD: the loads that trsm_issue_rows replaces where the group allows. The lane
// wrote that row itself in this pass.
template <typename T, int CPW, int LD>
__device__ __forceinline__ void trsm_stage_own_row(const T* dst, const TrsmView& v, int ncols,
                                                   int C, T* Ys, int lane) {
  const int n = v.n;
  const int ic = C * kTrsmTile + lane;
  const int64_t pc = int64_t(v.rev ? n - 1 - ic : ic) * v.rs;
  T y[CPW];
#pragma unroll
  for (int c = 0; c < CPW; ++c) y[c] = c < ncols ? dst[pc + c * v.cs] : T(0);
  trsm_store_row<T, CPW>(Ys + lane * LD, y);
}

// acc -= M[R, C] Y[C] over the solved row blocks C < R, one row per lane (row 32 R +
// lane): tile C of M staged, the lane's solved rows of block C staged in Xs for broadcast
// reads, CPW multiply-adds per entry of M.
template <typename T, int CPW>
__device__ __forceinline__ void trsm_fma_update(const T* __restrict__ A, const T* dst,
                                                const TrsmView& v, int ncols, int R, T* Ms,
                                                T* Xs, int lane, T (&acc)[CPW]) {
  constexpr int LDX = trsm_xs_ld<T, CPW>();
  const int r0 = R * kTrsmTile;
  const bool chunks = trsm_rows_chunked<T, CPW, LDX>(v, dst, ncols);
  for (int C = 0; C < R; ++C) {
    __syncwarp();  // the previous readers of Ms / Xs are done, Y[C]'s rows are stored
    if (chunks) trsm_issue_rows<T, CPW, LDX>(dst, v, C, Xs, lane);
    // The tile's copies fly while this lane's solved rows are read back.
    trsm_tile_start(A, v, r0, C * kTrsmTile, Ms, lane);
    if (!chunks) trsm_stage_own_row<T, CPW, LDX>(dst, v, ncols, C, Xs, lane);
    if (chunks) {
      cp_async_wait<0>();
    } else {
      trsm_tile_wait<T>();
    }
    __syncwarp();
#pragma unroll 8
    for (int jj = 0; jj < kTrsmTile; ++jj) {
      const T m = Ms[lane * kTrsmTileLd + jj];
      T y[CPW];
      trsm_load_row<T, CPW>(Xs + jj * LDX, y);
#pragma unroll
      for (int c = 0; c < CPW; ++c) acc[c] -= m * y[c];
    }
  }
}

// The products of trsm_fma_update on the MMAs (trsm_mma_blocks): G = sum_C M[R, C] Y[C]
// accumulates in 4 x NB fragments of 8 x 8 (rows 8 i + l / 4, columns 8 j + 2 (l % 4) +
// e of the 32 x CPW block), is staged once per row block at the Y pitch, and each lane
// reads its row into gr. A = the staged tile (swizzled), B = the staged rows of Y[C].
// The caller loads its right-hand side only afterwards: live across the loop it had
// taken ptxas to 202 registers at 16 columns.
template <int CPW>
__device__ __forceinline__ void trsm_mma_update(const double* __restrict__ A, const double* dst,
                                                const TrsmView& v, int ncols, int R, double* Ms,
                                                int lane, double (&gr)[CPW]) {
  constexpr int NB = CPW / 8;
  const int r0 = R * kTrsmTile;
  double* Ys = Ms + kTrsmTile * kTrsmTile;
  const int q = lane >> 2, kk = lane & 3;
  double g[4][NB][2];
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < NB; ++j) g[i][j][0] = g[i][j][1] = 0.0;
  const bool chunks = trsm_rows_chunked<double, CPW, kTrsmMmaLdy>(v, dst, ncols);
  for (int C = 0; C < R; ++C) {
    __syncwarp();  // the previous readers of Ms / Ys are done, Y[C]'s rows are stored
    if (chunks) trsm_issue_rows<double, CPW, kTrsmMmaLdy>(dst, v, C, Ys, lane);
    trsm_tile_start<double, true>(A, v, r0, C * kTrsmTile, Ms, lane);
    if (!chunks) trsm_stage_own_row<double, CPW, kTrsmMmaLdy>(dst, v, ncols, C, Ys, lane);
    cp_async_wait<0>();
    __syncwarp();
#pragma unroll 2
    for (int ks = 0; ks < kTrsmTile; ks += 4) {
      const int k = ks + kk;
      double a[4], b[NB];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int r = 8 * i + q;
        a[i] = Ms[r * kTrsmTile + trsm_swizzle(r, k)];
      }
#pragma unroll
      for (int j = 0; j < NB; ++j) b[j] = Ys[k * kTrsmMmaLdy + 8 * j + q];
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < NB; ++j) dmma_m8n8k4(g[i][j], a[i], b[j]);
    }
  }
  __syncwarp();  // every B fragment of the last block is read
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < NB; ++j)
      *reinterpret_cast<double2*>(Ys + (8 * i + q) * kTrsmMmaLdy + 8 * j + 2 * kk) =
          make_double2(g[i][j][0], g[i][j][1]);
  __syncwarp();
  trsm_load_row<double, CPW>(Ys + lane * kTrsmMmaLdy, gr);
}

// Solves M Y = C for the CPW columns [c_first, c_first + ncols) of one system.
// src (C) and dst (Y) point at column c_first of the system; they may alias
// (in-place): every element of C is read by the lane that later writes it, before
// it writes it. Must be called by all 32 lanes of a warp.
// kMma: the products on the MMAs (trsm_mma_blocks; a template switch, not a run-time
// one: both loops in one kernel spilled at 16 columns).
template <typename T, int CPW, bool kMma = (trsm_mma_blocks<T, CPW>() > 0)>
__device__ void trsm_warp_solve(const T* __restrict__ A, const T* src, T* dst, const TrsmView& v,
                                int ncols, T* Ms, T* Xs, int lane) {
  constexpr int LDX = trsm_xs_ld<T, CPW>();
  const int n = v.n;
  const int nblk = (n + kTrsmTile - 1) / kTrsmTile;
  for (int R = 0; R < nblk; ++R) {
    const int r0 = R * kTrsmTile;
    const int i = r0 + lane;
    const bool row_ok = i < n;
    const int64_t prow = int64_t(v.rev ? n - 1 - i : i) * v.rs;

    T acc[CPW];
    const auto load_rhs = [&] {
#pragma unroll
      for (int c = 0; c < CPW; ++c)
        acc[c] = (row_ok && c < ncols) ? src[prow + c * v.cs] : T(0);
    };

    // acc -= M[R, C] * Y[C] for the solved blocks C < R (left-looking).
    if constexpr (kMma && trsm_mma_blocks<T, CPW>() > 0) {
      T g[CPW];
      if (R > 0) trsm_mma_update<CPW>(A, dst, v, ncols, R, Ms, lane, g);
      load_rhs();
      if (R > 0) {
#pragma unroll
        for (int c = 0; c < CPW; ++c) acc[c] -= g[c];
      }
    } else {
      load_rhs();
      trsm_fma_update<T, CPW>(A, dst, v, ncols, R, Ms, Xs, lane, acc);
    }

    // Diagonal block: forward substitution, the solved entry of step jj broadcast
    // from lane jj (whose row is final at that point).
    __syncwarp();
    trsm_tile_start(A, v, r0, r0, Ms, lane);
    trsm_tile_wait<T>();
    __syncwarp();
    // Unit and padding rows divide by 1 (the staged diagonal holds 1 or 0 there).
    const T invd = (row_ok && !v.unit) ? T(1) / Ms[lane * kTrsmTileLd + lane] : T(1);
    const int steps = min(kTrsmTile, n - r0);
    if constexpr (CPW >= 4) {
      // Many columns: lane jj publishes its solved row in Xs and the warp reads it back
      // with 16-byte broadcasts, instead of one shuffle per column (two per float64);
      // with 16 columns the shuffles were the busiest pipe. Row jj is written once per
      // diagonal block, so only the write -> read order needs the barrier.
#pragma unroll 2
      for (int jj = 0; jj < steps; ++jj) {
        if (lane == jj) {
          T y[CPW];
#pragma unroll
          for (int c = 0; c < CPW; ++c) y[c] = acc[c] * invd;
          trsm_store_row<T, CPW>(Xs + jj * LDX, y);
        }
        __syncwarp();
        const T m = Ms[lane * kTrsmTileLd + jj];
        T yr[CPW];
        trsm_load_row<T, CPW>(Xs + jj * LDX, yr);
        if (lane > jj) {
#pragma unroll
          for (int c = 0; c < CPW; ++c) acc[c] -= m * yr[c];
        }
      }
    } else {
#pragma unroll 4
      for (int jj = 0; jj < steps; ++jj) {
        const T m = Ms[lane * kTrsmTileLd + jj];
#pragma unroll
        for (int c = 0; c < CPW; ++c) {
          const T yj = shfl(acc[c] * invd, jj);
          if (lane > jj) acc[c] -= m * yj;
        }
      }
    }
    if (row_ok) {
#pragma unroll
      for (int c = 0; c < CPW; ++c)
        if (c < ncols) dst[prow + c * v.cs] = acc[c] * invd;
    }
  }
  // Later passes may read rows that other lanes wrote.
  __syncwarp();
}

}  // namespace cuda
}  // namespace batchchol
