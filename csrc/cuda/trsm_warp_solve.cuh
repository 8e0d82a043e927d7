// The warp-per-system solve (one warp owns one system and CPW right-hand-side columns)
// and its two loops for the off-diagonal products: one row per lane on the FMA pipes, or
// 8 x 8 fragments on the float64 MMAs. Views, tile staging and the shared-memory layouts
// are in trsm_device.cuh. Lane l owns canonical row 32 R + l of every row block R. With 4
// or more columns a block's right-hand sides come in and its solved rows go out by
// 16-byte chunks through Ys (trsm_load_rhs, trsm_store_rows) where the group allows
// (trsm_rows_chunked), and the loads of Y[C] for the products then take the same chunks
// (trsm_issue_rows, either loop): rows other lanes stored, ordered after those stores by
// the __syncwarp that opens each block C. Where the group does not allow chunks, a lane
// stores its own rows and loads only those back.
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

// Element offset of canonical row i, column c of C or Y.
__device__ __forceinline__ int64_t trsm_row_offset(const TrsmView& v, int i, int c) {
  return int64_t(v.rev ? v.n - 1 - i : i) * v.rs + c;
}

// Calls f(row, col, off) for this lane's 16-byte chunks of rows C * 32 .. + 31 (the
// group's CPW columns): CPW / E chunks per row in lane order, so that consecutive lanes
// take consecutive 16 bytes of a row; off = the chunk's element offset (trsm_row_offset).
// A lane's chunks share their column and lie 32 / (CPW / E) rows apart, so one 64-bit
// offset steps through them (a product per chunk, with the rows' reversal, took ~35
// instructions a chunk in the float64 MMA solve's SASS).
template <typename T, int CPW, typename F>
__device__ __forceinline__ void trsm_row_chunks(const TrsmView& v, int C, int lane, F&& f) {
  constexpr int E = int(16 / sizeof(T)), RC = CPW / E, DR = kTrsmTile / RC;
  static_assert(kTrsmTile % RC == 0, "a lane's chunks must lie a whole number of rows apart");
  const int row0 = lane / RC, cc = E * (lane % RC);
  int64_t off = trsm_row_offset(v, C * kTrsmTile + row0, cc);
  const int64_t step = (v.rev ? -v.rs : v.rs) * DR;
#pragma unroll
  for (int u = 0; u < RC; ++u) {
    f(row0 + DR * u, cc, off);
    off += step;
  }
}

// Issues and commits those copies into Ys (pitch LD, rows on 16 bytes); rows from `rows`
// on (past n) become zero. evict_first: rows read this once (right-hand sides) go
// through L2 evict-first (l2_hints.cuh) and leave it to the re-read solved rows (H100,
// 16 columns, one process, results/h100-2026-11-27-rhs-first-tune_trsm.txt: float64 trsm
// n = 256 1.552 -> 1.527 / 1.524 ms, potrs 2.984 -> 2.924 / 2.924; float32 potrs n = 512
// 1.776 -> 1.725 / 1.727; elsewhere within 1%).
template <typename T, int CPW, int LD>
__device__ __forceinline__ void trsm_issue_rows(const T* dst, const TrsmView& v, int C, T* Ys,
                                                int lane, int rows = kTrsmTile,
                                                bool evict_first = false) {
  if constexpr (trsm_rows_chunkable<T, CPW, LD>()) {
    // The policy chosen once for the block, not per chunk (both copies were issued,
    // predicated, for every chunk).
    if (evict_first) {
      const uint64_t pol = l2_evict_first_policy();
      trsm_row_chunks<T, CPW>(v, C, lane, [&](int row, int cc, int64_t off) {
        T* s = Ys + row * LD + cc;
        if (row < rows) {
          cp_async_16_l2(s, dst + off, pol);
        } else {
          cp_async_elem_or_zero(reinterpret_cast<uint4*>(s), reinterpret_cast<const uint4*>(dst),
                                false);
        }
      });
    } else {
      trsm_row_chunks<T, CPW>(v, C, lane, [&](int row, int cc, int64_t off) {
        const bool ok = row < rows;
        cp_async_elem_or_zero(reinterpret_cast<uint4*>(Ys + row * LD + cc),
                              reinterpret_cast<const uint4*>(ok ? dst + off : dst), ok);
      });
    }
    cp_async_commit();
  }
}

// The other direction: rows 0 .. rows - 1 of Ys (block C's solved rows) to dst by the
// same chunks. A lane storing its own row issued CPW stores that each wrote a piece of 32
// rows' sectors: four (float64) or eight (float32) partial writes per sector reached L2,
// the busiest unit of the 16-column solves (ncu, H100, float64 trsm n = 256: L2 86.7%
// against DRAM 74.5%).
template <typename T, int CPW, int LD>
__device__ __forceinline__ void trsm_store_rows(T* dst, const TrsmView& v, int C, const T* Ys,
                                                int lane, int rows) {
  if constexpr (trsm_rows_chunkable<T, CPW, LD>()) {
    trsm_row_chunks<T, CPW>(v, C, lane, [&](int row, int cc, int64_t off) {
      if (row < rows)
        *reinterpret_cast<uint4*>(dst + off) = *reinterpret_cast<const uint4*>(Ys + row * LD + cc);
    });
  }
}

// The lane's own row C * 32 + lane of Y (this group's columns, zero past ncols) into Ys
// at pitch LD: the loads that trsm_issue_rows replaces where the group allows. The lane
// wrote that row itself in this pass.
template <typename T, int CPW, int LD>
__device__ __forceinline__ void trsm_stage_own_row(const T* dst, const TrsmView& v, int ncols,
                                                   int C, T* Ys, int lane) {
  const int64_t pc = trsm_row_offset(v, C * kTrsmTile + lane, 0);
  T y[CPW];
#pragma unroll
  for (int c = 0; c < CPW; ++c) y[c] = c < ncols ? dst[pc + c * v.cs] : T(0);
  trsm_store_row<T, CPW>(Ys + lane * LD, y);
}

// Stages block column C of row block R: the tile M[R, C] into Ms (swizzled for the
// MMAs: kSwz) and Y[C] into Ys, by 16-byte chunks where trsm_rows_chunked allows (the
// tile's copies fly while a lane's own row is read back otherwise), and waits for them.
// Y[C] is re-read by every later row block (nb - 1 - C of them), in the same order each
// time: a cyclic walk that, where a wave's Y outgrows the L2, misses it nearly always
// (ncu, H100, potrs float64 n = 512 with 16 columns: L2 hit rate 7%). Blocks from
// v.y_keep on are read evict-first, so that the first ones, read most, can stay.
template <typename T, int CPW, int LDY, bool kSwz>
__device__ __forceinline__ void trsm_stage_column(const T* __restrict__ A, const T* dst,
                                                  const TrsmView& v, int ncols, int R, int C,
                                                  bool chunks, T* Ms, T* Ys, int lane) {
  __syncwarp();  // the previous readers of Ms / Ys are done, Y[C]'s rows are stored
  if (chunks) trsm_issue_rows<T, CPW, LDY>(dst, v, C, Ys, lane, kTrsmTile, C >= v.y_keep);
  trsm_tile_start<T, kSwz>(A, v, R * kTrsmTile, C * kTrsmTile, Ms, lane);
  if (!chunks) trsm_stage_own_row<T, CPW, LDY>(dst, v, ncols, C, Ys, lane);
  if (chunks) {
    cp_async_wait<0>();
  } else {
    trsm_tile_wait<T>();
  }
  __syncwarp();
}

// acc -= M[R, C] Y[C] over the solved row blocks C < R, one row per lane (row 32 R +
// lane): tile C of M staged, Y[C] staged for broadcast reads, CPW multiply-adds per
// entry of M.
template <typename T, int CPW>
__device__ __forceinline__ void trsm_fma_products(const T* __restrict__ A, const T* dst,
                                                  const TrsmView& v, int ncols, int R, T* Ms,
                                                  T* Ys, int lane, T (&acc)[CPW]) {
  constexpr int LDY = trsm_xs_ld<T, CPW>();
  const bool chunks = trsm_rows_chunked<T, CPW, LDY>(v, dst, ncols);
  for (int C = 0; C < R; ++C) {
    trsm_stage_column<T, CPW, LDY, false>(A, dst, v, ncols, R, C, chunks, Ms, Ys, lane);
#pragma unroll 8
    for (int jj = 0; jj < kTrsmTile; ++jj) {
      const T m = Ms[lane * kTrsmTileLd + jj];
      T y[CPW];
      trsm_load_row<T, CPW>(Ys + jj * LDY, y);
#pragma unroll
      for (int c = 0; c < CPW; ++c) acc[c] -= m * y[c];
    }
  }
}

// The products of trsm_fma_products on the MMAs (trsm_mma_blocks): G = sum_C M[R, C] Y[C]
// accumulates in 4 x NB fragments of 8 x 8 (rows 8 i + l / 4, columns 8 j + 2 (l % 4) +
// e of the 32 x CPW block), is staged once per row block at the Y pitch, and each lane
// reads its row into gr. A = the staged tile (swizzled), B = the staged rows of Y[C].
// The caller loads its right-hand side only afterwards: live across the loop it had
// taken ptxas to 202 registers at 16 columns.
template <int CPW>
__device__ __forceinline__ void trsm_mma_products(const double* __restrict__ A, const double* dst,
                                                  const TrsmView& v, int ncols, int R,
                                                  double* Ms, double* Ys, int lane,
                                                  double (&gr)[CPW]) {
  constexpr int NB = CPW / 8;
  const int q = lane >> 2, kk = lane & 3;
  double g[4][NB][2];
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < NB; ++j) g[i][j][0] = g[i][j][1] = 0.0;
  const bool chunks = trsm_rows_chunked<double, CPW, kTrsmMmaLdy>(v, dst, ncols);
  for (int C = 0; C < R; ++C) {
    trsm_stage_column<double, CPW, kTrsmMmaLdy, true>(A, dst, v, ncols, R, C, chunks, Ms, Ys,
                                                      lane);
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

// Stages the diagonal tile at canonical (r0, r0) into Ms once the previous readers of Ms
// / Ys are done, landed for the whole warp on return.
template <typename T>
__device__ __forceinline__ void trsm_stage_diag_tile(const T* __restrict__ A, const TrsmView& v,
                                                     int r0, T* Ms, int lane) {
  __syncwarp();
  trsm_tile_start(A, v, r0, r0, Ms, lane);
  trsm_tile_wait<T>();
  __syncwarp();
}

// Row block R's diagonal solve: acc (the lane's right-hand-side row minus the products)
// becomes the solved row 32 R + lane, stored to dst (with CPW >= 4 from Ys, where every
// solved row of the block is published, by 16-byte chunks where the group allows).
template <typename T, int CPW, int LDY>
__device__ __forceinline__ void trsm_diag_block(const T* __restrict__ A, T* dst, const TrsmView& v,
                                                int ncols, int R, T* Ms, T* Ys, int lane,
                                                T (&acc)[CPW]) {
  const int n = v.n;
  const int r0 = R * kTrsmTile;
  const bool row_ok = r0 + lane < n;
  trsm_stage_diag_tile(A, v, r0, Ms, lane);
  // Unit and padding rows divide by 1 (the staged diagonal holds 1 or 0 there).
  const T invd = (row_ok && !v.unit) ? T(1) / Ms[lane * kTrsmTileLd + lane] : T(1);
  const int steps = min(kTrsmTile, n - r0);
  if constexpr (CPW >= 4) {
    // Many columns: lane jj publishes its row in Ys and the warp reads it back with
    // 16-byte broadcasts, instead of one shuffle per column (two per float64); with 16
    // columns the shuffles were the busiest pipe. Row jj is final at step jj and written
    // once per diagonal block, so only the write -> read order needs the barrier. It goes
    // out unscaled: every lane scales its multiplier by row jj's reciprocal (published
    // once, in the tile slot's padding column) instead of lane jj scaling its CPW entries
    // on a one-lane branch (16 multiplies a step at 16 columns in the float64 SASS).
    Ms[lane * kTrsmTileLd + kTrsmTile] = invd;
    __syncwarp();
#pragma unroll 2
    for (int jj = 0; jj < steps; ++jj) {
      if (lane == jj) trsm_store_row<T, CPW>(Ys + jj * LDY, acc);
      __syncwarp();
      const T m = Ms[lane * kTrsmTileLd + jj] * Ms[jj * kTrsmTileLd + kTrsmTile];
      T yr[CPW];
      trsm_load_row<T, CPW>(Ys + jj * LDY, yr);
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
#pragma unroll
  for (int c = 0; c < CPW; ++c) acc[c] *= invd;  // the solved row
  if (CPW >= 4 && v.chunk_io && trsm_rows_chunked<T, CPW, LDY>(v, dst, ncols)) {
    // The solved rows out from Ys by chunks: each lane republishes its row scaled.
    __syncwarp();  // every read of the unscaled rows is done
    trsm_store_row<T, CPW>(Ys + lane * LDY, acc);
    __syncwarp();
    trsm_store_rows<T, CPW, LDY>(dst, v, R, Ys, lane, steps);
  } else if (row_ok) {
    const int64_t prow = trsm_row_offset(v, r0 + lane, 0);
#pragma unroll
    for (int c = 0; c < CPW; ++c)
      if (c < ncols) dst[prow + c * v.cs] = acc[c];
  }
}

// trsm_diag_block on the MMAs (float64, CPW = 8 or 16; BATCHCHOL_TRSM_DIAGMMA): the block
// of right-hand sides goes to Ys, and for each 8-row sub-block s the lanes c < CPW solve
// column c of its 8 x 8 triangle by forward substitution (row b + r's reciprocal from
// the tile slot's padding column), then the rows below take -= L[rows, s] X_s as m8n8k4
// products (A = -L from the staged tile, B = X_s and C from Ys: the lanes' own
// fragments, read and written back). Against the one-row-per-lane loop (~46
// instructions a step, 32 steps) this is ~450 instructions a block at 16 columns, by
// count. The solved rows end in Ys and go out as trsm_diag_block's do.
template <int CPW>
__device__ __forceinline__ void trsm_diag_block_mma(const double* __restrict__ A, double* dst,
                                                    const TrsmView& v, int ncols, int R,
                                                    double* Ms, double* Ys, int lane,
                                                    const double (&acc)[CPW]) {
  constexpr int LDY = kTrsmMmaLdy, NB = CPW / 8;
  const int n = v.n;
  const int r0 = R * kTrsmTile;
  const bool row_ok = r0 + lane < n;
  trsm_stage_diag_tile(A, v, r0, Ms, lane);
  // Unit and padding rows divide by 1 (the staged diagonal holds 1 or 0 there).
  const double invd = (row_ok && !v.unit) ? 1.0 / Ms[lane * kTrsmTileLd + lane] : 1.0;
  Ms[lane * kTrsmTileLd + kTrsmTile] = invd;
  trsm_store_row<double, CPW>(Ys + lane * LDY, acc);
  __syncwarp();
  const int steps = min(kTrsmTile, n - r0);
  const int q = lane >> 2, kk = lane & 3;
#pragma unroll
  for (int s = 0; s < kTrsmTile / 8; ++s) {
    const int b = 8 * s;
    if (b >= steps) break;
    if (lane < CPW) {
      double y[8];
#pragma unroll
      for (int r = 0; r < 8; ++r) y[r] = Ys[(b + r) * LDY + lane];
#pragma unroll
      for (int r = 0; r < 8; ++r) {
        y[r] *= Ms[(b + r) * kTrsmTileLd + kTrsmTile];
#pragma unroll
        for (int r2 = r + 1; r2 < 8; ++r2) y[r2] -= Ms[(b + r2) * kTrsmTileLd + b + r] * y[r];
      }
#pragma unroll
      for (int r = 0; r < 8; ++r) Ys[(b + r) * LDY + lane] = y[r];
    }
    __syncwarp();  // X_s published
#pragma unroll
    for (int i = s + 1; i < kTrsmTile / 8; ++i) {
      if (8 * i >= steps) break;
      const double a0 = -Ms[(8 * i + q) * kTrsmTileLd + b + kk];
      const double a1 = -Ms[(8 * i + q) * kTrsmTileLd + b + 4 + kk];
#pragma unroll
      for (int j = 0; j < NB; ++j) {
        double* cp = Ys + (8 * i + q) * LDY + 8 * j + 2 * kk;
        const double2 c2 = *reinterpret_cast<const double2*>(cp);
        double d[2] = {c2.x, c2.y};
        dmma_m8n8k4(d, a0, Ys[(b + kk) * LDY + 8 * j + q]);
        dmma_m8n8k4(d, a1, Ys[(b + 4 + kk) * LDY + 8 * j + q]);
        *reinterpret_cast<double2*>(cp) = make_double2(d[0], d[1]);
      }
    }
    __syncwarp();  // the rows below updated before the next sub-block reads them
  }
  if (v.chunk_io && trsm_rows_chunked<double, CPW, LDY>(v, dst, ncols)) {
    trsm_store_rows<double, CPW, LDY>(dst, v, R, Ys, lane, steps);
  } else if (row_ok) {
    double x[CPW];
    trsm_load_row<double, CPW>(Ys + lane * LDY, x);
    const int64_t prow = trsm_row_offset(v, r0 + lane, 0);
#pragma unroll
    for (int c = 0; c < CPW; ++c)
      if (c < ncols) dst[prow + c * v.cs] = x[c];
  }
}

// The lane's right-hand-side row 32 R + lane (zero past n and ncols): through Ys by
// 16-byte chunks where the group allows, else by the lane, whose CPW loads each touch
// 32 rows' sectors (as trsm_rows_chunked says of the solved rows' loads).
template <typename T, int CPW, int LDY>
__device__ __forceinline__ void trsm_load_rhs(const T* src, const TrsmView& v, int ncols, int R,
                                              T* Ys, int lane, T (&acc)[CPW]) {
  const int n = v.n;
  if (CPW >= 4 && v.chunk_io && trsm_rows_chunked<T, CPW, LDY>(v, src, ncols)) {
    __syncwarp();  // the previous readers of Ys are done
    trsm_issue_rows<T, CPW, LDY>(src, v, R, Ys, lane, min(kTrsmTile, n - R * kTrsmTile),
                                 v.l2_first);
    cp_async_wait<0>();
    __syncwarp();
    trsm_load_row<T, CPW>(Ys + lane * LDY, acc);
    return;
  }
  const int i = R * kTrsmTile + lane;
  const int64_t prow = trsm_row_offset(v, i, 0);
#pragma unroll
  for (int c = 0; c < CPW; ++c) acc[c] = (i < n && c < ncols) ? src[prow + c * v.cs] : T(0);
}

// Solves M Y = C for the CPW columns [c_first, c_first + ncols) of one system (Ms: the
// warp's tile slot, then Ys: trsm_warp_smem_bytes). Row block R is updated by the solved
// blocks C < R (left-looking), then solved on its diagonal tile.
// src (C) and dst (Y) point at column c_first of the system; they may alias
// (in-place): every row of C is read (by its lane, or by chunks behind a __syncwarp)
// before its block's solved rows are written. Must be called by all 32 lanes of a warp.
// kMma: the products on the MMAs (trsm_mma_blocks; a template switch, not a run-time
// one: both loops in one kernel spilled at 16 columns).
template <typename T, int CPW, bool kMma = (trsm_mma_blocks<T, CPW>() > 0)>
__device__ void trsm_warp_solve(const T* __restrict__ A, const T* src, T* dst, const TrsmView& v,
                                int ncols, T* Ms, int lane) {
  constexpr int LDY = trsm_ys_ld<T, CPW, kMma>();
  T* Ys = Ms + kTrsmSlot;
  const int nblk = (v.n + kTrsmTile - 1) / kTrsmTile;
  for (int R = 0; R < nblk; ++R) {
    T acc[CPW];
    if constexpr (trsm_uses_mma<T, CPW, kMma>()) {
      if (R > 0) {
        double gr[CPW];
        trsm_mma_products<CPW>(A, dst, v, ncols, R, Ms, Ys, lane, gr);
        trsm_load_rhs<T, CPW, LDY>(src, v, ncols, R, Ys, lane, acc);
#pragma unroll
        for (int c = 0; c < CPW; ++c) acc[c] -= gr[c];
      } else {
        trsm_load_rhs<T, CPW, LDY>(src, v, ncols, R, Ys, lane, acc);
      }
    } else {
      trsm_load_rhs<T, CPW, LDY>(src, v, ncols, R, Ys, lane, acc);
      trsm_fma_products<T, CPW>(A, dst, v, ncols, R, Ms, Ys, lane, acc);
    }
    if constexpr (trsm_uses_mma<T, CPW, kMma>()) {
      if (v.diag_mma) {
        trsm_diag_block_mma<CPW>(A, dst, v, ncols, R, Ms, Ys, lane, acc);
        continue;
      }
    }
    trsm_diag_block<T, CPW, LDY>(A, dst, v, ncols, R, Ms, Ys, lane, acc);
  }
  // Later passes may read rows that other lanes wrote.
  __syncwarp();
}

}  // namespace cuda
}  // namespace batchchol
