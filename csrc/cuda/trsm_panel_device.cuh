// Device routines of the panel triangular solves: one block of W warps per system (and
// group of up to KC right-hand-side columns), real types, any order; built for the
// orders past 128, where the factor's triangle no longer fits in shared memory.
//
// The warp-per-system kernels (trsm_warp_solve.cuh) put one warp on a system: its 32 x 32
// tiles of the matrix are staged one after the other, so at n = 256..2048 a system is a
// chain of dependent loads, and a few systems leave the GPU idle (H200, 2026-11-26: four
// float64 systems of n = 1024, trsm with one column 1.66 ms against torch's 0.30). Here
// the block keeps the right-hand sides in shared memory for the whole solve and its warps
// stream the tiles of the matrix (large batches stay on the warp kernels, which keep
// more loads in flight per SM there: trsm_panel_kernels.cuh, panel_wide_blocks):
//
// - The canonical problem of trsm_device.cuh (M Y = C, M lower, the 16 flag
//   combinations as index maps). Row blocks of 32 rows; block R belongs to warp
//   owner(R), in snake order (0, 1, .., W-1, W-1, .., 0, 0, ..) so that the warps'
//   shares of the triangle's tiles are about equal.
// - Step s of a pass (one __syncthreads after each): the owner of block s applies the
//   tile (s, s-1) to its rows and solves the diagonal tile (s, s), publishing Y_s; every
//   warp applies the tiles (R, s-1) of panel s - 1 to its blocks R > s. So block s+1
//   lags one panel behind and takes panel s first in the next step: the chain from one
//   diagonal block to the next is one tile and one diagonal solve, and the rest of the
//   panel is applied alongside it.
// - Each warp walks its own sequence of tiles (PanelCursor) and copies the next one into
//   its second buffer with cp.async while it computes with the current one, across the
//   steps' barriers (the matrix is only read).
// - Lane r owns row r of the tile being applied: acc[0..KC) = S row - M(r, :) Y, with the
//   rows of Y read from S by 16-byte broadcasts.
//
// S holds the right-hand sides by their physical row p at S[(p + off) * LD]: the passes of
// potrs run in opposite canonical orders over the same rows, and the padding rows of
// the last (partial) row block fall before row 0 (reversed passes) or after row n - 1
// (forward passes), hence off = npad - n rows of slack on each side. Padding rows hold
// zeros and only ever reach other padding rows.
#pragma once

#include "cuda/scalar_ops.cuh"
#include "cuda/trsm_device.cuh"

namespace batchchol {
namespace cuda {

constexpr int kPanelMaxWarps = 8;
constexpr int kPanelBuffers = 2;  // staged tiles per warp: the current one and the next
constexpr int kPanelTileElems = kTrsmTile * kTrsmTileLd;

template <typename T, int KC>
constexpr int panel_ld() {
  return trsm_xs_ld<T, KC>();
}

// Rows of S for order n: the padded order plus the slack on either side (see above).
__host__ __device__ inline int panel_s_rows(int n) {
  const int npad = (n + kTrsmTile - 1) / kTrsmTile * kTrsmTile;
  return npad + (npad - n);
}

struct PanelParams {
  int64_t a_stride;  // elements between consecutive matrices (0: one shared matrix)
  int64_t b_stride;  // elements between consecutive B (and X)
  TrsmView v1, v2;   // the passes' views (v2 only read when passes == 2)
  int passes;        // 1: trsm, 2: potrs (v1 forward, v2 backward)
  int k;             // right-hand sides of the system
  int groups;        // column groups of KC per system
  int s_elems;       // elements of S, rounded up to 16 bytes
};

// Snake order: block R's warp.
__device__ __forceinline__ int panel_owner(int R, int W) {
  const int q = R / W;
  const int r = R - q * W;
  return (q & 1) ? W - 1 - r : r;
}

// The first block after R that warp w owns (each period of W blocks has one).
__device__ __forceinline__ int panel_next_own(int R, int w, int W) {
  int q = (R + 1) / W;
  int cand = q * W + ((q & 1) ? W - 1 - w : w);
  if (cand <= R) {
    ++q;
    cand = q * W + ((q & 1) ? W - 1 - w : w);
  }
  return cand;
}

// A warp's tiles of one pass, in the order it applies them: per step s, (s, s-1) and the
// diagonal (s, s) when it owns block s, then (R, s-1) for its blocks R > s.
struct PanelCursor {
  int step = 0;
  int phase = 0;  // 0: (s, s-1) next, 1: the diagonal, 2: own blocks below s
  int last = 0;   // phase 2: the block returned last
};

struct PanelTile {
  int R, C, step;
};

__device__ __forceinline__ bool panel_next(PanelCursor& c, int w, int W, int nblk, PanelTile& t) {
  while (c.step < nblk) {
    const int s = c.step;
    const bool mine = panel_owner(s, W) == w;
    if (c.phase == 0) {
      c.phase = 1;
      if (mine && s >= 1) {
        t = {s, s - 1, s};
        return true;
      }
    }
    if (c.phase == 1) {
      c.phase = 2;
      c.last = s;
      if (mine) {
        t = {s, s, s};
        return true;
      }
    }
    if (s >= 1) {
      const int R = panel_next_own(c.last, w, W);
      if (R < nblk) {
        c.last = R;
        t = {R, s - 1, s};
        return true;
      }
    }
    c.step = s + 1;
    c.phase = 0;
  }
  return false;
}

// Lane r: S row (R*32 + r) -= M(R*32 + r, C*32 .. C*32+31) Y_C (block C of S).
template <typename T, int KC>
__device__ __forceinline__ void panel_apply_tile(const T* Ms, T* srow, const T* y0, int ystep,
                                                 int lane) {
  T acc[KC];
  trsm_load_row<T, KC>(srow, acc);
  const T* m = Ms + lane * kTrsmTileLd;
#pragma unroll 8
  for (int j = 0; j < kTrsmTile; ++j) {
    const T mj = m[j];
    T y[KC];
    trsm_load_row<T, KC>(y0 + j * ystep, y);
#pragma unroll
    for (int c = 0; c < KC; ++c) acc[c] -= mj * y[c];
  }
  trsm_store_row<T, KC>(srow, acc);
}

// Forward substitution with the diagonal tile (s, s) of rows y0, y0 + ystep, ...: lane r
// owns row r; `steps` rows are real (the rest padding). Afterwards the real rows of S
// hold Y_s.
template <typename T, int KC>
__device__ __forceinline__ void panel_solve_diagonal(const T* Ms, T* y0, int ystep, int steps,
                                                     bool unit, int lane) {
  T* srow = y0 + lane * ystep;
  T acc[KC];
  trsm_load_row<T, KC>(srow, acc);
  const T* m = Ms + lane * kTrsmTileLd;
  const T invd = (lane < steps && !unit) ? T(1) / m[lane] : T(1);
  if constexpr (KC >= 4) {
    // Row jj is published in S by its lane and read back with broadcasts (one shuffle
    // per column otherwise; as in trsm_warp_solve).
#pragma unroll 2
    for (int jj = 0; jj < steps; ++jj) {
      if (lane == jj) {
        T y[KC];
#pragma unroll
        for (int c = 0; c < KC; ++c) y[c] = acc[c] * invd;
        trsm_store_row<T, KC>(srow, y);
      }
      __syncwarp();
      const T mj = m[jj];
      T yr[KC];
      trsm_load_row<T, KC>(y0 + jj * ystep, yr);
      if (lane > jj) {
#pragma unroll
        for (int c = 0; c < KC; ++c) acc[c] -= mj * yr[c];
      }
    }
  } else {
#pragma unroll 4
    for (int jj = 0; jj < steps; ++jj) {
      const T mj = m[jj];
#pragma unroll
      for (int c = 0; c < KC; ++c) {
        const T yj = __shfl_sync(0xffffffffu, acc[c] * invd, jj);
        if (lane > jj) acc[c] -= mj * yj;
      }
    }
    if (lane < steps) {
      T y[KC];
#pragma unroll
      for (int c = 0; c < KC; ++c) y[c] = acc[c] * invd;
      trsm_store_row<T, KC>(srow, y);
    }
  }
}

// One pass (view v) over the system's rows in S by all warps of the block; `bufs` are
// this warp's kPanelBuffers staging tiles. Ends after a __syncthreads.
template <typename T, int KC>
__device__ void panel_pass(const T* __restrict__ A, const TrsmView& v, T* S, int off, T* bufs,
                           int w, int W, int lane) {
  constexpr int LD = panel_ld<T, KC>();
  const int n = v.n;
  const int nblk = (n + kTrsmTile - 1) / kTrsmTile;
  // S row of canonical row i, and the step between consecutive canonical rows.
  auto row_of = [&](int i) { return S + int64_t((v.rev ? n - 1 - i : i) + off) * LD; };
  const int ystep = v.rev ? -LD : LD;

  PanelCursor cursor;
  PanelTile cur;
  bool have = panel_next(cursor, w, W, nblk, cur);
  int buf = 0;
  if (have) trsm_issue_tile(A, v, cur.R * kTrsmTile, cur.C * kTrsmTile, bufs, lane);
  cp_async_commit();
  for (int s = 0; s < nblk; ++s) {
    while (have && cur.step == s) {
      PanelTile nxt;
      const bool have_next = panel_next(cursor, w, W, nblk, nxt);
      if (have_next)
        trsm_issue_tile(A, v, nxt.R * kTrsmTile, nxt.C * kTrsmTile,
                        bufs + (buf ^ 1) * kPanelTileElems, lane);
      cp_async_commit();
      cp_async_wait<1>();  // the current tile has landed (the next may be in flight)
      __syncwarp();
      const T* Ms = bufs + buf * kPanelTileElems;
      if (cur.R == cur.C) {
        panel_solve_diagonal<T, KC>(Ms, row_of(s * kTrsmTile), ystep,
                                    min(kTrsmTile, n - s * kTrsmTile), v.unit, lane);
      } else {
        panel_apply_tile<T, KC>(Ms, row_of(cur.R * kTrsmTile + lane),
                                row_of(cur.C * kTrsmTile), ystep, lane);
      }
      __syncwarp();  // every lane is done with this buffer before it is refilled
      cur = nxt;
      have = have_next;
      buf ^= 1;
    }
    __syncthreads();
  }
}

}  // namespace cuda
}  // namespace batchchol
