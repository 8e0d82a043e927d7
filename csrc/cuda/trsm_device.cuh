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
// This file: the view (every warp-based solve's), the warp solve's shared-memory layouts
// and the staging of 32 x 32 tiles of M (warp and panel solves). The warp-per-system solve itself
// (one warp per system and CPW right-hand-side columns, lane l owning canonical row
// 32 R + l of every row block R; block R updated by the solved blocks C < R, a 32 x 32 x
// CPW product per block, then solved with shuffles or broadcasts) is in
// trsm_warp_solve.cuh.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "cuda/async_copy.cuh"
#include "cuda/dmma.cuh"  // dmma_available (the MMA layouts' sizes)
#include "cuda/l2_hints.cuh"
#include "cuda/scalar_ops.cuh"

namespace batchchol {
namespace cuda {

constexpr int kTrsmTile = 32;                // rows per block = lanes per warp
constexpr int kTrsmTileLd = kTrsmTile + 1;  // odd pitch: a column read by a warp is conflict-free

// Row pitch of staged solution rows (the warp solve's Ys[32][CPW] outside the MMA path,
// the panel and streaming solves' rows): rows start on 16 bytes (so a row is read with
// 128-bit broadcasts) and consecutive rows are shifted by 16 bytes (so the lanes of a
// quarter warp storing their rows hit distinct banks).
template <typename T, int CPW>
constexpr int trsm_xs_ld() {
  return CPW == 1 ? 1 : CPW + (sizeof(T) >= 16 ? 1 : int(16 / sizeof(T)));
}

// Float64 groups of 8 or 16 columns run the off-diagonal products M[R, C] Y[C] on the
// MMAs (dmma.cuh): NB = CPW / 8 column blocks of 8 x 8 accumulators per 8-row block, 0
// where the FMA loop runs. Why: with one row per lane, every multiply-add of the FMA
// loop came with a share of a 16-byte broadcast of Y, and the loop kept L1 / shared
// memory the busiest unit (ncu, H100, float64 trsm n = 256 with 16 columns: 86.5% of
// L1 throughput, 0.34 instructions issued per cycle and scheduler); an m8n8k4 MMA does
// 256 multiply-adds from one 8-byte A and one 8-byte B load per lane.
template <typename T, int CPW>
__host__ __device__ constexpr int trsm_mma_blocks() {
  return dmma_available() && std::is_same_v<T, double> && (CPW == 8 || CPW == 16) ? CPW / 8
                                                                                   : 0;
}

// The MMA path stages its tiles of M at a pitch of 32 with trsm_swizzle, and the solved
// rows at a pitch of 20 doubles (4 mod 16: a half warp's B fragment, rows k..k + 3 at
// columns c..c + 3, falls in 16 distinct 8-byte banks).
constexpr int kTrsmMmaLdy = 20;

// Whether the warp solve runs its products on the MMAs: asked for (kMma) and available.
template <typename T, int CPW, bool kMma>
__host__ __device__ constexpr bool trsm_uses_mma() {
  return kMma && trsm_mma_blocks<T, CPW>() > 0;
}

// Pitch of the warp solve's staged solved rows Ys (the products' operand and the
// diagonal solve's broadcasts share it): the MMA path's B layout or trsm_xs_ld.
template <typename T, int CPW, bool kMma>
constexpr int trsm_ys_ld() {
  return trsm_uses_mma<T, CPW, kMma>() ? kTrsmMmaLdy : trsm_xs_ld<T, CPW>();
}

// The warp's tile slot: the diagonal tile at pitch kTrsmTileLd, or an off-diagonal tile
// at that pitch (FMA loop) or at 32 with trsm_swizzle (MMA path).
constexpr int kTrsmSlot = kTrsmTile * kTrsmTileLd;

// Shared memory of one warp: the tile slot, then the staged solved rows (32 x trsm_ys_ld).
template <typename T, int CPW, bool kMma>
constexpr size_t trsm_warp_smem_bytes() {
  return (size_t(kTrsmSlot) + size_t(kTrsmTile) * trsm_ys_ld<T, CPW, kMma>()) * sizeof(T);
}

// Column of tile entry (r, c) in the MMA path's staged tile (row r at r * 32): c XOR a
// 4-bit function of r, so that the A fragments (rows r..r + 3 with r % 4 == 0, columns
// c..c + 3) and the staging writes along a row or a column of the tile each hit 16
// distinct 8-byte banks per half warp.
__device__ __forceinline__ int trsm_swizzle(int r, int c) {
  return c ^ (((r & 3) << 2) | ((r >> 2) & 3));
}

struct TrsmView {
  int n;
  bool rev, trans, conj, unit;
  int64_t rs, cs;  // strides (elements) of a canonical row / column of C and Y
  bool async_tiles = false;  // real types: the warp solve's tiles by cp.async (trsm_tile_start)
  bool chunk_rows = true;    // the warp solve's Y rows by 16-byte chunks where they allow
  bool chunk_io = true;      // and its right-hand sides in, solved rows out likewise
  bool l2_first = true;      // the MMA path's tiles of M (trsm_issue_tile) and the chunked
                             // right-hand sides (trsm_load_rhs) evict-first in L2
  bool full_tiles = true;    // full off-diagonal tiles staged without per-entry tests
  bool diag_mma = true;      // the MMA path's diagonal blocks on the MMAs too
  // The products' re-reads of solved row blocks Y[C] from canonical block y_keep on go
  // through L2 evict-first (trsm_stage_column); the warp solves' launchers set it
  // (trsm_y_keep), other users keep every block normal.
  int y_keep = 1 << 30;
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

// How a lane walks the 32x32 tile of M at canonical (r0, c0) in A. Consecutive lanes
// read consecutive addresses of A in both orientations: along a row of A for a plain
// read, along a column index of A (i.e. a row of A again) for a transposed read. The
// lane's fixed canonical coordinate is i (trans) or j (plain); step t moves the other
// one, `step` elements of A past step t - 1's (one row of A up or down), so a single
// pointer walks the tile.
template <typename T>
struct TrsmTileWalk {
  const T* p;     // A's element at t = 0
  int64_t step;   // elements of A between steps
};

template <typename T>
__device__ __forceinline__ TrsmTileWalk<T> trsm_tile_walk(const T* A, const TrsmView& v, int r0,
                                                          int c0, int lane) {
  const int n = v.n;
  const int fixed = (v.trans ? r0 : c0) + lane;
  const int vary0 = v.trans ? c0 : r0;
  const int rf = v.rev ? n - 1 - fixed : fixed;
  const int rv0 = v.rev ? n - 1 - vary0 : vary0;
  TrsmTileWalk<T> w;
  w.step = v.rev ? -int64_t(n) : int64_t(n);
  w.p = A + (int64_t(rv0) * n + rf);
  return w;
}

// Where step t of this lane's walk lands in Ms: at pitch kTrsmTileLd, or (kSwz) in the
// MMA path's layout, row * 32 + trsm_swizzle(row, col), the lane's fixed coordinate being
// the tile row of a transposed read and the tile column of a plain one.
template <bool kSwz>
__device__ __forceinline__ int trsm_ms_index(bool trans, int lane, int t) {
  const int r = trans ? lane : t, c = trans ? t : lane;
  if constexpr (kSwz) {
    return r * kTrsmTile + trsm_swizzle(r, c);
  } else {
    return r * kTrsmTileLd + c;
  }
}

// Calls f(std::bool_constant<trans>): the tile loops below with the orientation known at
// compile time, so that a step's shared-memory index and triangle test fold to a few
// instructions (with trans at run time both orientations' arithmetic ran for every
// element: ~20 instructions an element in the float64 MMA solve's diagonal tiles).
template <typename F>
__device__ __forceinline__ void trsm_with_trans(bool trans, F&& f) {
  if (trans) {
    f(std::true_type{});
  } else {
    f(std::false_type{});
  }
}

// Step t of this lane's walk of the tile at canonical (r0, c0), diag = (r0 == c0): ok =
// the entry lies inside the referenced triangle and the matrix (read it), one = it is on
// the diagonal (1 where it is not read: unit or padding). Bitwise operators: with
// && / || the tests compiled to short-circuit branches, ~25 instructions an element with
// the index products (SASS of the float32 potrs warp kernel). Off the diagonal j < i
// always holds (c0 < r0); only rows past n are out.
struct TrsmTileEntry {
  bool ok, one;
};
__device__ __forceinline__ TrsmTileEntry trsm_tile_entry(const TrsmView& v, bool trans, int r0,
                                                         bool diag, int lane, int t) {
  const int di = trans ? lane : t;  // i - r0
  const int dj = trans ? t : lane;  // j - c0
  const bool on_diag = diag & (di == dj);
  const bool in_tri = !diag | (dj < di) | (on_diag & !v.unit);
  return {bool((r0 + di < v.n) & in_tri), on_diag};
}

// Stages the 32x32 tile of M at canonical (r0, c0) into Ms (pitch kTrsmTileLd).
// Entries outside the referenced triangle are never read from A: they become 0,
// and the diagonal becomes 1 where it is unit or beyond n (so that padding rows
// keep a finite reciprocal and stay 0).
// kSwz: at the MMA path's pitch and swizzle (trsm_swizzle) instead.
template <typename T, bool kSwz = false>
__device__ __forceinline__ void trsm_stage_tile(const T* __restrict__ A, const TrsmView& v,
                                                int r0, int c0, T* Ms, int lane) {
  const int n = v.n;
  const TrsmTileWalk<T> w = trsm_tile_walk(A, v, r0, c0, lane);
  // Larger parts (fewer round trips) measured slower on H100: the extra registers
  // cost more occupancy than they save latency.
  constexpr int kPart = 8;
  // Off the diagonal (c0 < r0, so j < i) with every row inside the matrix, every entry
  // is read (full): no triangle tests. Otherwise (diagonal and partial tiles) the entries
  // inside the triangle and the matrix, tested with bitwise operators (no short-circuit
  // branches). The tests as they were (branches, a 64-bit product per address) took ~25
  // instructions an element, ~840 of the ~990 a float32 potrs warp issued per tile
  // (SASS, ncu). One pointer walks the tile; it steps past the entries it does not read
  // (dereferenced only where read).
  const bool full = v.full_tiles && r0 != c0 && r0 + kTrsmTile <= n;
  const bool diag = r0 == c0;
  const auto stage = [&](auto trans_c, auto full_c) {
    constexpr bool kT = decltype(trans_c)::value, kFull = decltype(full_c)::value;
    const T* p = w.p;
#pragma unroll 1
    for (int h = 0; h < kTrsmTile; h += kPart) {
      T val[kPart];
      // All loads of a part are issued before its stores, for memory-level parallelism.
#pragma unroll
      for (int u = 0; u < kPart; ++u) {
        // Only loaded entries are conjugated (the constants keep a +0 imaginary part).
        if constexpr (kFull) {
          val[u] = v.conj ? conj_(*p) : *p;
        } else {
          const TrsmTileEntry e = trsm_tile_entry(v, kT, r0, diag, lane, h + u);
          val[u] = e.one ? T(1) : T(0);
          if (e.ok) val[u] = v.conj ? conj_(*p) : *p;
        }
        p += w.step;
      }
#pragma unroll
      for (int u = 0; u < kPart; ++u) Ms[trsm_ms_index<kSwz>(kT, lane, h + u)] = val[u];
    }
  };
  trsm_with_trans(v.trans, [&](auto tr) {
    if (full) {
      stage(tr, std::true_type{});
    } else {
      stage(tr, std::false_type{});
    }
  });
}

// trsm_stage_tile's tile by cp.async (real types): every entry of the tile in flight at
// once, no registers held, zero where trsm_stage_tile writes 0 or a unit / padding 1
// (the solves take those diagonal entries as 1 themselves). The copies land after a
// cp_async_commit / cp_async_wait and a __syncwarp.
template <typename T, bool kSwz = false>
__device__ __forceinline__ void trsm_issue_tile(const T* __restrict__ A, const TrsmView& v, int r0,
                                                int c0, T* Ms, int lane) {
  const int n = v.n;
  const TrsmTileWalk<T> w = trsm_tile_walk(A, v, r0, c0, lane);
  const bool diag = r0 == c0;
  // Off the diagonal (C < R) every entry has j <= c0 + 31 < r0 <= i, and with
  // r0 + 32 <= n every row is inside the matrix: all are read, none zero-filled (a
  // partial last row block keeps the tested copies).
  const bool full = !diag && r0 + kTrsmTile <= n;
  trsm_with_trans(v.trans, [&](auto tr) {
    constexpr bool kT = decltype(tr)::value;
    const T* p = w.p;
    // The MMA path's full tiles as evict-first in L2 (l2_hints.cuh): they stream through
    // L2 once, so the solved rows their products re-read stay (H200, float64, 16 columns,
    // results/h200-2026-11-27-l2first-tune_trsm.txt part 4: trsm n = 256 1.382 -> 1.317
    // ms, potrs 3.062 -> 2.454). Only on the swizzled layout: with the unswizzled one
    // ptxas folded the uniform step of the shared addresses into the hinted copies
    // (LDGSTS [R + UR], desc[UR1]), which faulted with an illegal instruction on the
    // H200; the swizzled addresses are computed per lane.
    if constexpr (kSwz) {
      if (v.l2_first && full) {
        const uint64_t pol = l2_evict_first_policy();
#pragma unroll
        for (int t = 0; t < kTrsmTile; ++t) {
          cp_async_elem_l2(Ms + trsm_ms_index<kSwz>(kT, lane, t), p, pol);
          p += w.step;
        }
        return;
      }
    }
    // As in trsm_stage_tile: full tiles without the tests (~34 instructions an element in
    // the float64 potrs warp kernel's SASS with them), the others tested bitwise.
    if (v.full_tiles && full) {
#pragma unroll
      for (int t = 0; t < kTrsmTile; ++t) {
        cp_async_elem(Ms + trsm_ms_index<kSwz>(kT, lane, t), p);
        p += w.step;
      }
      return;
    }
#pragma unroll
    for (int t = 0; t < kTrsmTile; ++t) {
      const bool ok = trsm_tile_entry(v, kT, r0, diag, lane, t).ok;
      cp_async_elem_or_zero(Ms + trsm_ms_index<kSwz>(kT, lane, t), ok ? p : A, ok);
      p += w.step;
    }
  });
}

// The warp solve's tile (r0, c0) into Ms: by cp.async for real types where the launcher
// asks for it (v.async_tiles; landed after trsm_tile_wait), by trsm_stage_tile otherwise.
// H200 A/B, 2026-11-26 (bench_fixed's batches, results/h200-2026-11-26-panel-tune_trsm.txt,
// part 3): float64 potrs 1.700 -> 1.495 ms at n = 256, 1.470 -> 1.227 at 512, 4.080 ->
// 3.640 at 512 with 16 columns; trsm with one column 0.819 -> 0.761 at 256, 0.691 ->
// 0.639 at 512, but with 16 columns 2.304 -> 2.364 and 1.767 -> 1.802 (1.927 in a later
// run: below torch's 1.771), so trsm's 16-column groups keep the register stage. float32
// lost everywhere (potrs n = 64 0.102 -> 0.116 ms, trsm n = 256 with 16 columns 1.208 ->
// 1.324): as many copy instructions for half the bytes, when every copy carried the
// per-entry tests (~34 instructions). With full tiles untested (~3) float32 is open
// again (BATCHCHOL_TRSM_ASYNC32, trsm_kernels.cuh): one round trip per tile instead of
// the register stage's four. Complex types conjugate on the way.
template <typename T, bool kSwz = false>
__device__ __forceinline__ void trsm_tile_start(const T* __restrict__ A, const TrsmView& v, int r0,
                                                int c0, T* Ms, int lane) {
  if constexpr (!IsComplex<T>::value) {
    if (v.async_tiles) {
      trsm_issue_tile<T, kSwz>(A, v, r0, c0, Ms, lane);
      cp_async_commit();
      return;
    }
  }
  trsm_stage_tile<T, kSwz>(A, v, r0, c0, Ms, lane);
}

// Waits for this lane's copies (none pending without async_tiles: returns at once).
template <typename T>
__device__ __forceinline__ void trsm_tile_wait() {
  if constexpr (!IsComplex<T>::value) cp_async_wait<0>();
}

}  // namespace cuda
}  // namespace batchchol
