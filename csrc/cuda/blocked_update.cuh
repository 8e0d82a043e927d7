// The blocked family's trailing update (blocked_update_kernel): L22 -= L21 L21^H over
// 64 x 64 tiles (32 x 32 for 16-byte types), the slices of L21 staged through shared
// memory. The products run on the MMAs in float64 on sm_80 and later (update_dmma.cuh),
// on the FMA pipes from k-major slices in float32 (update_fma.cuh), and on the FMA pipes
// from row-major slices otherwise (complex types; float64 below sm_80).
#pragma once

#include "cuda/batch_layout.cuh"
#include "cuda/blocked_steps.cuh"
#include "cuda/potrf_block.cuh"
#include "cuda/update_dmma.cuh"
#include "cuda/update_fma.cuh"

#include <type_traits>

namespace batchchol {
namespace cuda {

// Tile of the trailing update: 16-byte types use 32 x 32 tiles to stay within the
// 48 KB of static shared memory.
template <typename T>
constexpr int update_tile() {
  return sizeof(T) >= 16 ? 32 : 64;
}

constexpr int kUpdateThreads = 256;

// Thread t's share of the staging of two TILE x 32 slices of L21 (columns p0..p0 + 31,
// rows from i0 and from j0): loads all in flight into registers, stored to shared memory
// later, so that a chunk's loads overlap the previous chunk's products.
template <typename T, int TILE>
struct UpdateSlices {
  static constexpr int kPer = TILE * kPanel / kUpdateThreads;
  T vi[kPer], vj[kPer];

  // This thread's first entry of a slice: row t / 32, column t % 32 (rows step by 8).
  static __device__ __forceinline__ int row() { return threadIdx.x / kPanel; }
  static __device__ __forceinline__ int col() { return threadIdx.x % kPanel; }

  // si, sj: m plus the offsets of this thread's first entry in each slice (row
  // i0 + row() or j0 + row(), column col()); ri, rj: rows left in the matrix below
  // them. Offsets stay 32-bit (n^2 < 2^31 for every order blocked_fits admits), which
  // keeps the unrolled loads from holding a 64-bit address each.
  __device__ __forceinline__ void load(const T* si, const T* sj, int ri, int rj, int n, int p0) {
    constexpr int kRowStep = kUpdateThreads / kPanel;
#pragma unroll
    for (int u = 0; u < kPer; ++u) {
      vi[u] = u * kRowStep < ri ? si[u * kRowStep * n + p0] : T(0);
      vj[u] = u * kRowStep < rj ? sj[u * kRowStep * n + p0] : T(0);
    }
  }
  template <int PITCH>
  __device__ __forceinline__ void store(T* pi, T* pj) const {
#pragma unroll
    for (int u = 0; u < kPer; ++u) {
      const int e = threadIdx.x + u * kUpdateThreads, r = e / kPanel, c = e % kPanel;
      pi[r * PITCH + c] = vi[u];
      pj[r * PITCH + c] = vj[u];
    }
  }
};

// Trailing SYRK after the panel of `step`: L22 -= L21 L21^H over TILE x TILE tiles of
// the lower triangle from row and column t0 = k0 + 32, with L21 the columns of the
// last `rank_panels` panels (those before column 0 left out) and only columns below
// t0 + col_span written. Blocked in two levels (launch_blocked_layout): within a group
// of panels left-looking (blocked_left.cuh) or by a rank-32 update of the next panels'
// columns after each panel (strips), and every few panels one update of the rest with
// all of them, so that the trailing matrix goes through memory once per group of
// panels instead of once per panel. Block l works on matrix
// b_first + l / tiles, slot y = l % tiles (launch_blocked_update; a listed layout's
// blocks take items l, l + gridDim.x, ... of its list the same way): col_tiles = 0: y
// enumerates the tiles of the lower triangle; otherwise (row tile, column tile) of a
// strip col_tiles tiles wide. TS x TS outputs per thread on the FMA path; float64 runs
// the products on the MMAs instead from sm_80 (update_dmma.cuh: 16 x 32 outputs per warp). The
// loads of the next panel's slices are in flight during this panel's products, and the
// tile of L22 is read whole before it is written (a load, a store, the next load:
// float32 n = 512 took 6.8 ms for the first update of 2,000 matrices, 12% of the memory
// bandwidth). Without an init pass (ft) the launch that first touches a tile reads it
// from A.
template <typename T, typename Layout>
__global__ void __launch_bounds__(kUpdateThreads, sizeof(T) == 4 ? 3 : 2)
    blocked_update_kernel(FirstTouch<T> ft, T* __restrict__ L, Layout lay, int step,
                          int rank_panels, int col_span, int col_tiles, int tiles,
                          int64_t b_first) {
  constexpr int TILE = update_tile<T>(), TS = TILE / 16;
  constexpr bool kMma = update_uses_dmma<T>();
  constexpr bool kKm = update_uses_kmajor<T>();
  constexpr int PITCH = kMma ? kDmmaPitch : kPanel + 1;
  static_assert(!kMma || (TILE == 64 && kUpdateThreads == 256),
                "the MMA warp tiles of eight warps cover 64 x 64");
  static_assert(!kKm || (TILE == kKmRows && kUpdateThreads == 256),
                "the k-major staging covers 64 rows with 256 threads");
  constexpr int kSlice = kKm ? kPanel * kKmPitch : TILE * PITCH;
  __shared__ __align__(16) unsigned char pi_raw[sizeof(T) * kSlice];
  __shared__ __align__(16) unsigned char pj_raw[sizeof(T) * kSlice];
  T* const pi = reinterpret_cast<T*>(pi_raw);
  T* const pj = reinterpret_cast<T*>(pj_raw);
  const auto body = [&](int64_t b, int y) {
    int n, k0;
    int ti, tj;
    if (col_tiles == 0) {
      tri_index(y, ti, tj);
    } else {
      ti = y / col_tiles, tj = y % col_tiles;
      if (tj > ti) return;
    }
    if (!panel_of(lay, b, step, n, k0)) return;
    const int t0 = k0 + kPanel;
    const int c_end = min(n, t0 + col_span);
    const int i0 = t0 + ti * TILE, j0 = t0 + tj * TILE;
    if (i0 >= n || j0 >= c_end) return;  // past this matrix or strip (uniform over the block)
    T* m = L + lay.origin(b);
    const int p_begin = max(0, k0 - (rank_panels - 1) * kPanel);
    using Slices =
        std::conditional_t<kKm, KMajorSlices<UpdateSlices<T, TILE>>, UpdateSlices<T, TILE>>;
    const int sr = Slices::row(), sc = Slices::col();
    const T* si = m + (i0 + sr) * n + sc;
    const T* sj = m + (j0 + sr) * n + sc;
    Slices slices;
    slices.load(si, sj, n - i0 - sr, n - j0 - sr, n, p_begin);
    const bool fresh = ft.in_update(step, k0, col_tiles == 0);
    const T* src = (fresh ? ft.a : L) + lay.origin(b);  // the tile's entries before the update
    // Runs product() once per panel p_begin..k0, with that panel's slices in pi / pj and
    // the next panel's loads in flight.
    const auto each_panel = [&](auto&& product) {
      for (int p0 = p_begin; p0 <= k0; p0 += kPanel) {
        if (p0 != p_begin) __syncthreads();  // the previous slices are consumed
        if constexpr (kKm)
          slices.store(pi, pj);
        else
          slices.template store<PITCH>(pi, pj);
        __syncthreads();
        if (p0 < k0) slices.load(si, sj, n - i0 - sr, n - j0 - sr, n, p0 + kPanel);
        product();
      }
    };
    if constexpr (kMma) {
      const DmmaWarpTile wt;
      const bool idle = i0 == j0 && wt.above_diagonal();
      double acc[2][4][2] = {};
      each_panel([&] {
        if (!idle) dmma_panel(acc, wt, pi, pj);
      });
      if (idle) return;
      // Offset of entry (a, c, e) of the warp tile in the matrix, -1 unless it is in the
      // matrix, below c_end and on or below the diagonal.
      const auto at = [&](int a, int c, int e) {
        const int i = i0 + dmma_row(wt, a), j = j0 + dmma_col(wt, c, e);
        return i < n && j < c_end && j <= i ? i * n + j : -1;
      };
      int off[2][4][2];
      double cur[2][4][2];
#pragma unroll
      for (int a = 0; a < 2; ++a)
#pragma unroll
        for (int c = 0; c < 4; ++c)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            off[a][c][e] = at(a, c, e);
            cur[a][c][e] = off[a][c][e] >= 0 ? src[off[a][c][e]] : 0.0;
          }
#pragma unroll
      for (int a = 0; a < 2; ++a)
#pragma unroll
        for (int c = 0; c < 4; ++c)
#pragma unroll
          for (int e = 0; e < 2; ++e)
            if (off[a][c][e] >= 0) m[off[a][c][e]] = cur[a][c][e] - acc[a][c][e];
    } else {
      // Thread (tr, tc) owns TS rows from tr and TS columns from tc, kStride apart: k-major
      // slices give each thread four adjacent rows and columns (one 16-byte load each);
      // row-major ones a stride of 16, which keeps a warp's reads on distinct rows.
      constexpr int kStride = kKm ? 1 : 16;
      const int tr = threadIdx.x / 16 * (kKm ? TS : 1), tc = threadIdx.x % 16 * (kKm ? TS : 1);
      T acc[TS][TS];
#pragma unroll
      for (int a = 0; a < TS; ++a)
#pragma unroll
        for (int c = 0; c < TS; ++c) acc[a][c] = T(0);
      const int ct = (i0 + tr) * n + j0 + tc;  // this thread's first entry of the tile
      const int ci = n - i0 - tr, cj = c_end - j0 - tc, cd = i0 + tr - j0 - tc;
      // Entry (a, c) of the thread is in the matrix, below c_end and on or below the diagonal.
      const auto owned = [&](int a, int c) {
        return kStride * a < ci && kStride * c < cj && kStride * c <= cd + kStride * a;
      };
      if constexpr (kKm) {
        each_panel([&] { fma_kmajor_panel(acc, pi, pj, tr, tc); });
      } else {
        each_panel([&] {
#pragma unroll 8
          for (int p = 0; p < kPanel; ++p) {
            T li[TS], lj[TS];
#pragma unroll
            for (int a = 0; a < TS; ++a) {
              li[a] = pi[(tr + 16 * a) * PITCH + p];
              lj[a] = pj[(tc + 16 * a) * PITCH + p];
            }
#pragma unroll
            for (int a = 0; a < TS; ++a)
#pragma unroll
              for (int c = 0; c < TS; ++c) acc[a][c] += mul_conj(li[a], lj[c]);
          }
        });
      }
      T cur[TS][TS];
#pragma unroll
      for (int a = 0; a < TS; ++a)
#pragma unroll
        for (int c = 0; c < TS; ++c)
          cur[a][c] = owned(a, c) ? src[ct + kStride * (a * n + c)] : T(0);
#pragma unroll
      for (int a = 0; a < TS; ++a)
#pragma unroll
        for (int c = 0; c < TS; ++c)
          if (owned(a, c)) m[ct + kStride * (a * n + c)] = cur[a][c] - acc[a][c];
    }
  };
  if constexpr (Layout::kListed)
    listed_items(lay, blockIdx.x, gridDim.x, tiles, body, [] { __syncthreads(); });
  else
    body(b_first + blockIdx.x / unsigned(tiles), blockIdx.x % unsigned(tiles));
}

}  // namespace cuda
}  // namespace batchchol
