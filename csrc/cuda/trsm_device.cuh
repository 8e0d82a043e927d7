// Device routines of the triangular solves, for one system (one warp) at a time.
//
// Every variant of trsm / potrs is reduced to ONE canonical problem, a forward
// substitution M Y = C with M lower triangular:
//   M(i, j) = cj(A[ar][ac]),  (ar, ac) = trans ? (rj, ri) : (ri, rj),
//   ri = rev ? n-1-i : i,     rj = rev ? n-1-j : j,     cj = conj_ if conj,
//   C(i, c) = B[(rev ? n-1-i : i) * rs + c * cs]      (same map for Y and X).
// An upper solve is a lower one with reversed indices, A^H is a transposed and
// conjugated read, and a right-side solve is a left solve on B^T (rs/cs swapped).
// The flags only change address arithmetic in the loaders; the arithmetic loops
// are the same for all 16 variants, so they are runtime values, not templates.
//
// Work split: one warp owns one system and CPW right-hand-side columns. Lane l owns
// canonical row 32R + l of every row block R (so a lane only ever re-reads solution
// rows that it wrote itself within one pass). Row block R is updated by the solved
// blocks C < R (a 32x32xCPW GEMM per block, tiles of M staged in shared memory
// with coalesced loads in either orientation) and then solved with shuffles.
#pragma once

#include <cstring>

#include "cuda/async_copy.cuh"
#include "cuda/scalar_ops.cuh"

namespace batchchol {
namespace cuda {

constexpr int kTrsmTile = 32;                // rows per block = lanes per warp
constexpr int kTrsmTileLd = kTrsmTile + 1;  // odd pitch: a column read by a warp is conflict-free

// Row pitch of the staged solution rows Xs[32][CPW]: rows start on 16 bytes (so a
// row is read with 128-bit broadcasts) and consecutive rows are shifted by 16 bytes
// (so the lanes of a quarter warp storing their rows hit distinct banks).
template <typename T, int CPW>
constexpr int trsm_xs_ld() {
  return CPW == 1 ? 1 : CPW + (sizeof(T) >= 16 ? 1 : int(16 / sizeof(T)));
}

// Shared memory of one warp: a tile of M and the staged solution rows.
template <typename T, int CPW>
constexpr size_t trsm_warp_smem_bytes() {
  return size_t(kTrsmTile) * (kTrsmTileLd + trsm_xs_ld<T, CPW>()) * sizeof(T);
}

struct TrsmView {
  int n;
  bool rev, trans, conj, unit;
  int64_t rs, cs;  // strides (elements) of a canonical row / column of C and Y
  bool async_tiles = false;  // float64: the warp solve's tiles by cp.async (trsm_tile_start)
};

template <typename T, int CPW>
__device__ __forceinline__ void trsm_load_row(const T* src, T (&dst)[CPW]) {
  if constexpr ((CPW * sizeof(T)) % 16 == 0) {
    constexpr int Q = CPW * sizeof(T) / 16;
    uint4 tmp[Q];
#pragma unroll
    for (int q = 0; q < Q; ++q) tmp[q] = reinterpret_cast<const uint4*>(src)[q];
    memcpy(dst, tmp, sizeof(tmp));
  } else {
#pragma unroll
    for (int c = 0; c < CPW; ++c) dst[c] = src[c];
  }
}

template <typename T, int CPW>
__device__ __forceinline__ void trsm_store_row(T* dst, const T (&src)[CPW]) {
  if constexpr ((CPW * sizeof(T)) % 16 == 0) {
    constexpr int Q = CPW * sizeof(T) / 16;
    uint4 tmp[Q];
    memcpy(tmp, src, sizeof(tmp));
#pragma unroll
    for (int q = 0; q < Q; ++q) reinterpret_cast<uint4*>(dst)[q] = tmp[q];
  } else {
#pragma unroll
    for (int c = 0; c < CPW; ++c) dst[c] = src[c];
  }
}

// How a lane walks the 32x32 tile of M at canonical (r0, c0) in A and in Ms (pitch
// kTrsmTileLd). Consecutive lanes read consecutive addresses of A in both orientations:
// along a row of A for a plain read, along a column index of A (i.e. a row of A again)
// for a transposed read. Step t's element lies `step` elements past step t - 1's (one
// row of A up or down), so a single pointer walks the tile.
template <typename T>
struct TrsmTileWalk {
  const T* p;     // A's element at t = 0
  int64_t step;   // elements of A between steps
  int fixed;      // lane-fixed canonical coordinate: i (trans) or j (plain)
  int vary0;      // t-varying one at t = 0: j (trans) or i (plain)
  int ms_fixed;   // Ms offset at t = 0
  int ms_step;    // Ms elements between steps
};

template <typename T>
__device__ __forceinline__ TrsmTileWalk<T> trsm_tile_walk(const T* A, const TrsmView& v, int r0,
                                                          int c0, int lane) {
  const int n = v.n;
  TrsmTileWalk<T> w;
  w.fixed = (v.trans ? r0 : c0) + lane;
  w.vary0 = v.trans ? c0 : r0;
  const int rf = v.rev ? n - 1 - w.fixed : w.fixed;
  const int rv0 = v.rev ? n - 1 - w.vary0 : w.vary0;
  w.step = v.rev ? -int64_t(n) : int64_t(n);
  w.p = A + (int64_t(rv0) * n + rf);
  w.ms_fixed = v.trans ? lane * kTrsmTileLd : lane;
  w.ms_step = v.trans ? 1 : kTrsmTileLd;
  return w;
}

// Stages the 32x32 tile of M at canonical (r0, c0) into Ms (pitch kTrsmTileLd).
// Entries outside the referenced triangle are never read from A: they become 0,
// and the diagonal becomes 1 where it is unit or beyond n (so that padding rows
// keep a finite reciprocal and stay 0).
template <typename T>
__device__ __forceinline__ void trsm_stage_tile(const T* __restrict__ A, const TrsmView& v,
                                                int r0, int c0, T* Ms, int lane) {
  const int n = v.n;
  const TrsmTileWalk<T> w = trsm_tile_walk(A, v, r0, c0, lane);
  // Larger parts (fewer round trips) measured slower on H100: the extra registers
  // cost more occupancy than they save latency.
  constexpr int kPart = 8;
#pragma unroll 1
  for (int h = 0; h < kTrsmTile; h += kPart) {
    T val[kPart];
    // All loads of a part are issued before its stores, for memory-level parallelism.
#pragma unroll
    for (int u = 0; u < kPart; ++u) {
      const int t = h + u;
      const int i = v.trans ? w.fixed : w.vary0 + t;
      const int j = v.trans ? w.vary0 + t : w.fixed;
      const bool in_tri = i < n && (j < i || (j == i && !v.unit));
      T x = i == j ? T(1) : T(0);
      if (in_tri) {
        x = w.p[t * w.step];
        if (v.conj) x = conj_(x);
      }
      val[u] = x;
    }
#pragma unroll
    for (int u = 0; u < kPart; ++u) Ms[w.ms_fixed + (h + u) * w.ms_step] = val[u];
  }
}

// trsm_stage_tile's tile by cp.async (real types): every entry of the tile in flight at
// once, no registers held, zero where trsm_stage_tile writes 0 or a unit / padding 1
// (the solves take those diagonal entries as 1 themselves). The copies land after a
// cp_async_commit / cp_async_wait and a __syncwarp.
template <typename T>
__device__ __forceinline__ void trsm_issue_tile(const T* __restrict__ A, const TrsmView& v, int r0,
                                                int c0, T* Ms, int lane) {
  const int n = v.n;
  const TrsmTileWalk<T> w = trsm_tile_walk(A, v, r0, c0, lane);
  const bool diag = r0 == c0;
#pragma unroll 8
  for (int t = 0; t < kTrsmTile; ++t) {
    const int i = v.trans ? w.fixed : w.vary0 + t;
    const int j = v.trans ? w.vary0 + t : w.fixed;
    // Off the diagonal j < i always holds (c0 < r0); only rows past n are out.
    const bool ok = i < n && (!diag || j < i || (j == i && !v.unit));
    cp_async_elem_or_zero(Ms + w.ms_fixed + t * w.ms_step, ok ? w.p + t * w.step : A, ok);
  }
}

// The warp solve's tile (r0, c0) into Ms: by cp.async for float64 where the launcher
// asks for it (v.async_tiles; landed after trsm_tile_wait), by trsm_stage_tile otherwise.
// H200 A/B, 2026-11-26 (bench_fixed's batches, results/h200-2026-11-26-panel-tune_trsm.txt,
// part 3): float64 potrs 1.700 -> 1.495 ms at n = 256, 1.470 -> 1.227 at 512, 4.080 ->
// 3.640 at 512 with 16 columns; trsm with one column 0.819 -> 0.761 at 256, 0.691 ->
// 0.639 at 512, but with 16 columns 2.304 -> 2.364 and 1.767 -> 1.802 (1.927 in a later
// run: below torch's 1.771), so trsm's 16-column groups keep the register stage. float32
// lost everywhere (potrs n = 64 0.102 -> 0.116 ms, trsm n = 256 with 16 columns 1.208 ->
// 1.324): as many copy instructions for half the bytes. Complex types conjugate on the
// way.
template <typename T>
__device__ __forceinline__ void trsm_tile_start(const T* __restrict__ A, const TrsmView& v, int r0,
                                                int c0, T* Ms, int lane) {
  if constexpr (!IsComplex<T>::value && sizeof(T) == 8) {
    if (v.async_tiles) {
      trsm_issue_tile(A, v, r0, c0, Ms, lane);
      cp_async_commit();
      return;
    }
  }
  trsm_stage_tile(A, v, r0, c0, Ms, lane);
}

// Waits for this lane's copies (none pending without async_tiles: returns at once).
template <typename T>
__device__ __forceinline__ void trsm_tile_wait() {
  if constexpr (!IsComplex<T>::value && sizeof(T) == 8) cp_async_wait<0>();
}

// Solves M Y = C for the CPW columns [c_first, c_first + ncols) of one system.
// src (C) and dst (Y) point at column c_first of the system; they may alias
// (in-place): every element of C is read by the lane that later writes it, before
// it writes it. Must be called by all 32 lanes of a warp.
template <typename T, int CPW>
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
#pragma unroll
    for (int c = 0; c < CPW; ++c)
      acc[c] = (row_ok && c < ncols) ? src[prow + c * v.cs] : T(0);

    // acc -= M[R, C] * Y[C] for the solved blocks C < R (left-looking).
    for (int C = 0; C < R; ++C) {
      __syncwarp();  // the previous readers of Ms / Xs are done
      // The tile's copies fly while this lane's solved rows are read back.
      trsm_tile_start(A, v, r0, C * kTrsmTile, Ms, lane);
      {
        // Row C*32+lane of Y was written by this lane in this pass.
        const int ic = C * kTrsmTile + lane;
        const int64_t pc = int64_t(v.rev ? n - 1 - ic : ic) * v.rs;
        T y[CPW];
#pragma unroll
        for (int c = 0; c < CPW; ++c) y[c] = c < ncols ? dst[pc + c * v.cs] : T(0);
        trsm_store_row<T, CPW>(Xs + lane * LDX, y);
      }
      trsm_tile_wait<T>();
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
