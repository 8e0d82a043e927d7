// Device routines of the streaming triangular solves (trsm, potrs): one warp walks a
// sequence of 32x32 tiles of the canonical lower matrix M (trsm_device.cuh defines M,
// the TrsmView and the 16 flag combinations) and keeps S - 1 tiles in flight with
// cp.async while it computes on the oldest one.
//
// Why: the warp-per-system kernel (trsm_warp_solve.cuh) loads each tile in dependent parts
// and wastes most lanes on small systems (one system per warp): trsm float32 n = 4 ran
// at 0.5x torch.linalg.solve_triangular. Streaming with packed tiles runs it 5x faster
// than torch; from n = 32 the warp-per-system kernel stays faster (more warps per SM),
// so the dispatch uses this one only for small n (trsm_launch.h).
//
// Tile sequence of one work unit (one system, or one packed group of systems, and one
// group of CPW right-hand-side columns), for each pass (potrs has two):
//   for R in row blocks: (R, 0), (R, 1), ..., (R, R - 1)   update tiles
//                        (R, R)                            diagonal tile
// A warp runs the units u, u + stride, ... back to back, so the pipeline also spans
// units: for n <= 32 the next systems load while this one is solved.
//
// Small orders: NP (4, 8, 16) < 32 packs G = 32 / NP systems block-diagonally in one
// tile (system g in rows and columns [g NP, g NP + NP)); the diagonal solve then runs
// NP steps with width-NP shuffles for G systems at once.
#pragma once

#include "cuda/async_copy.cuh"
#include "cuda/trsm_device.cuh"

namespace batchchol {
namespace cuda {

constexpr int kStreamWarps = 4;  // warps per block; each has its own pipeline

// Pitch of the staged right-hand-side rows Bs[32][CPW]: odd, so that the lanes
// reading entry c of their own rows hit distinct banks.
template <int CPW>
constexpr int stream_bs_ld() {
  return CPW + 1 - (CPW & 1);
}

// Elements of one pipeline slot: a tile of M and the right-hand-side rows of its row
// block (used by the first tile of a row block). Both are multiples of 16 bytes.
template <typename T, int CPW>
constexpr int stream_slot_elems() {
  return kTrsmTile * kTrsmTileLd + kTrsmTile * stream_bs_ld<CPW>();
}

template <typename T, int CPW, int S>
constexpr size_t stream_warp_smem_bytes() {
  return (size_t(S) * stream_slot_elems<T, CPW>() + size_t(kTrsmTile) * trsm_xs_ld<T, CPW>()) *
         sizeof(T);
}

struct StreamParams {
  int64_t batch;     // systems
  int64_t a_stride;  // elements between consecutive systems' matrices (0: shared)
  int64_t b_stride;  // elements between consecutive systems' B (and X)
  int64_t units;     // system groups x column groups
  int groups;        // column groups per system group
  int col_begin, col_end;
  int nblk;          // row blocks per pass (1 when systems are packed)
  int npass;         // 1 (trsm) or 2 (potrs: forward, then backward on X)
};

struct StreamCursor {
  int64_t unit;
  int pass, R, C;
};

__device__ __forceinline__ void stream_advance(StreamCursor& c, const StreamParams& p,
                                               int64_t stride) {
  if (c.C < c.R) {
    ++c.C;
    return;
  }
  c.C = 0;
  if (++c.R < p.nblk) return;
  c.R = 0;
  if (++c.pass < p.npass) return;
  c.pass = 0;
  c.unit += stride;
}

// First system and first column of a unit, and the columns it owns.
template <int NP, int CPW>
__device__ __forceinline__ void stream_unit(const StreamParams& p, int64_t unit, int64_t& sys0,
                                            int& c0, int& ncols) {
  int64_t sg = unit;
  int cg = 0;
  if (p.groups != 1) {  // the common single-group case skips a 64-bit division
    sg = unit / p.groups;
    cg = int(unit - sg * p.groups);
  }
  sys0 = sg * (kTrsmTile / NP);
  c0 = p.col_begin + cg * CPW;
  ncols = min(CPW, p.col_end - c0);
}

// Where this lane's canonical row of a tile lives: its system and row index, whether
// the row exists, and the offset of its entry (row, c0) in B / X.
template <int NP>
struct StreamRow {
  int64_t sys;
  int i;
  bool ok;
  int64_t off;

  __device__ __forceinline__ StreamRow(const StreamParams& p, const TrsmView& v, int64_t sys0,
                                       int c0, int R, int lane) {
    const int g = NP < kTrsmTile ? lane / NP : 0;
    sys = sys0 + g;
    i = NP < kTrsmTile ? lane % NP : R * kTrsmTile + lane;
    ok = sys < p.batch && i < v.n;
    off = sys * p.b_stride + int64_t(c0) * v.cs + int64_t(v.rev ? v.n - 1 - i : i) * v.rs;
  }
};

// Issues the copies of tile (R, C) of a unit into slot Ms, and with stage_b the
// right-hand-side rows of row block R into Bs. Entries outside the referenced
// triangle (including a unit diagonal) and rows past n are never read: they may hold
// NaN in the caller's buffer, and the solve never uses their slots.
template <typename T, int NP, int CPW>
__device__ __forceinline__ void stream_issue(const T* __restrict__ A, const T* __restrict__ B,
                                             const TrsmView& v, const StreamParams& p,
                                             int64_t sys0, int c0, int ncols, int R, int C,
                                             bool stage_b, T* Ms, T* Bs, int lane) {
  const int n = v.n;
  if constexpr (NP == kTrsmTile) {
    if (sys0 >= p.batch) return;
    // One system; consecutive lanes read consecutive addresses of A in both
    // orientations (see trsm_tile_walk), and one pointer walks the tile.
    const int r0 = R * kTrsmTile, c0t = C * kTrsmTile;
    const int fixed = (v.trans ? r0 : c0t) + lane;
    const int vary0 = v.trans ? c0t : r0;
    const int rf = v.rev ? n - 1 - fixed : fixed;
    const int rv0 = v.rev ? n - 1 - vary0 : vary0;
    const int64_t step = v.rev ? -int64_t(n) : int64_t(n);
    const T* src = A + sys0 * p.a_stride + (int64_t(rv0) * n + rf);
    T* dst = Ms + (v.trans ? lane * kTrsmTileLd : lane);
    const int ms_step = v.trans ? 1 : kTrsmTileLd;
    const bool full = C < R && r0 + kTrsmTile <= n;  // every entry exists and is read
#pragma unroll 8
    for (int t = 0; t < kTrsmTile; ++t) {
      const int i = v.trans ? fixed : vary0 + t;
      const int j = v.trans ? vary0 + t : fixed;
      if (full || (i < n && (C < R || j < i || (j == i && !v.unit))))
        cp_async_elem(dst + t * ms_step, src + t * step);
    }
  } else {
    // G systems of order n <= NP; element e of the 32 NP this warp copies is entry
    // (a, b) of system e / NP^2 in row-major order of the accessed storage, so that
    // consecutive lanes read consecutive addresses of each system.
    const int64_t base = sys0 * p.a_stride;
#pragma unroll
    for (int u = 0; u < NP; ++u) {
      const int e = u * kTrsmTile + lane;
      const int g = e / (NP * NP);
      const int a = (e / NP) % NP, b = e % NP;
      const int il = v.trans ? b : a, jl = v.trans ? a : b;
      const bool in = sys0 + g < p.batch && il < n && (jl < il || (jl == il && !v.unit));
      if (in) {
        const int ri = v.rev ? n - 1 - il : il, rj = v.rev ? n - 1 - jl : jl;
        const int64_t off = v.trans ? int64_t(rj) * n + ri : int64_t(ri) * n + rj;
        cp_async_elem(Ms + (g * NP + il) * kTrsmTileLd + g * NP + jl,
                      A + base + g * p.a_stride + off);
      }
    }
  }
  if (stage_b) {
    const StreamRow<NP> row(p, v, sys0, c0, R, lane);
    if (row.ok) {
#pragma unroll
      for (int c = 0; c < CPW; ++c)
        if (c < ncols) cp_async_elem(Bs + lane * stream_bs_ld<CPW>() + c, B + row.off + c * v.cs);
    }
  }
}

// acc -= M(R, C) Y(C) for an update tile (one system per tile). y holds this lane's
// row C * 32 + lane of the solution; Xs broadcasts the 32 rows to the warp.
template <typename T, int CPW>
__device__ __forceinline__ void stream_update(const T* Ms, T* Xs, const T (&y)[CPW],
                                              T (&acc)[CPW], bool conj, int lane) {
  constexpr int LDX = trsm_xs_ld<T, CPW>();
  trsm_store_row<T, CPW>(Xs + lane * LDX, y);
  __syncwarp();
  const T* mrow = Ms + lane * kTrsmTileLd;
#pragma unroll 8
  for (int jj = 0; jj < kTrsmTile; ++jj) {
    const T m = conj ? conj_(mrow[jj]) : mrow[jj];
    T yr[CPW];
    trsm_load_row<T, CPW>(Xs + jj * LDX, yr);
#pragma unroll
    for (int c = 0; c < CPW; ++c) acc[c] -= m * yr[c];
  }
}

// Forward substitution on a diagonal tile: NP steps per packed system (width-NP
// shuffles broadcast the solved entry of step jj from the lane owning row jj), then
// acc holds the solution rows. steps = rows of the block that exist.
template <typename T, int NP, int CPW>
__device__ __forceinline__ void stream_diag(const T* Ms, T (&acc)[CPW], const TrsmView& v,
                                            bool row_ok, int steps, int lane) {
  const int il = lane % NP;
  const T* mrow = Ms + lane * kTrsmTileLd + (lane - il);
  T d = T(1);
  if (row_ok && !v.unit) d = v.conj ? conj_(mrow[il]) : mrow[il];
  const T invd = T(1) / d;
#pragma unroll 4
  for (int jj = 0; jj < steps; ++jj) {
    const T m = v.conj ? conj_(mrow[jj]) : mrow[jj];
#pragma unroll
    for (int c = 0; c < CPW; ++c) {
      const T yj = shfl(acc[c] * invd, jj, NP);
      if (il > jj) acc[c] -= m * yj;
    }
  }
#pragma unroll
  for (int c = 0; c < CPW; ++c) acc[c] *= invd;
}

}  // namespace cuda
}  // namespace batchchol
