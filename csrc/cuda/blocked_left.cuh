// The blocked family's left-looking update within a group of panels (FirstTouch::left,
// real types): before the diagonal and panel kernels of a step factor and solve their
// 32 columns, they subtract the products with the group's earlier panels,
// L(rows, p) L(k0 .. k0 + 31, p)^T for p from the group's first panel up to k0.
//
// Why: right-looking, every panel of a group but the last was followed by a rank-32
// strip update of the group's later columns (one launch per panel; each block a 64 x 64
// tile for 32 k-steps, the strip read and written whole, half of the tiles of the
// narrowest strips outside it). At float32 n = 512 those launches took about half of
// the update's time. Left-looking, a panel's entries are read and written once per
// group, by the kernels that read and write them anyway, and the earlier panels'
// columns are only read.
#pragma once

#include <type_traits>

#include "cuda/async_copy.cuh"
#include "cuda/dmma.cuh"
#include "cuda/potrf_block.cuh"
#include "cuda/tile_chol.cuh"
#include "cuda/update_dmma.cuh"

namespace batchchol {
namespace cuda {

// Thread t's share of staging a block's ROWS x 32 panel entries through shared memory
// (pitch 33), for the panel kernel's own rows and for each earlier panel of the left
// update: column t % 32 of rows t / 32 + i ROWS / 32, BATCH of them per load() (all in
// flight), zeros past `rows`. src: the block's first row plus column t % 32.
template <typename T, int ROWS, int BATCH>
struct PanelRowStage {
  static constexpr int kStride = ROWS / kPanel;
  T v[BATCH];
  __device__ __forceinline__ void load(const T* src, int rows, int n, int h) {
    const int rr = threadIdx.x / kPanel;
#pragma unroll
    for (int i = 0; i < BATCH; ++i) {
      const int r = rr + (h + i) * kStride;
      v[i] = r < rows ? src[static_cast<int64_t>(r) * n] : T(0);
    }
  }
  __device__ __forceinline__ void store(T* xs, int h) const {
    const int rr = threadIdx.x / kPanel, c = threadIdx.x % kPanel;
#pragma unroll
    for (int i = 0; i < BATCH; ++i) xs[(rr + (h + i) * kStride) * (kPanel + 1) + c] = v[i];
  }
};

// Pitch of the panel kernel's staged W^T (entry (p, j) = L(k0 + j, p0 + p)): a multiple
// of the vector length (16-byte loads of four floats / two doubles along j).
template <typename T>
constexpr int left_w_pitch() {
  return kPanel + (sizeof(T) == 4 ? 4 : 2);
}

// The diagonal block's update, one warp per matrix: a[j] (row `lane` of the block,
// columns j <= lane; nb rows in the matrix, the rest identity rows) minus the products
// of rows k0 + lane and k0 + j over the `prior` panels before k0. s: the warp's buffer
// of 32 x left_w_pitch, free on entry (a[] already read from it) and left holding the
// last panel.
template <typename T>
__device__ __forceinline__ void diag_left_update(T (&a)[kPanel], T* s, const T* m, int n,
                                                 int k0, int nb, int prior) {
  constexpr int WP = left_w_pitch<T>();
  using Chunk = TileChunk<T>;
  constexpr int V = Chunk::kLen;
  const int lane = threadIdx.x & 31;
  for (int c = prior; c > 0; --c) {
    const T* src = m + static_cast<int64_t>(k0) * n + (k0 - c * kPanel) + lane;
    __syncwarp();  // the previous panel (or the block's rows) read
    // Transposed: s[p * WP + j] = L(k0 + j, p0 + p), so that a lane reads four (two)
    // of the broadcast entries per 16-byte load; rows past nb are zero, which leaves
    // the identity rows as they are. Loads in flight in batches of 8 (as many as a[]
    // leaves registers for in float64).
#pragma unroll 8
    for (int r = 0; r < kPanel; ++r) s[lane * WP + r] = r < nb ? src[static_cast<int64_t>(r) * n] : T(0);
    __syncwarp();
#pragma unroll 1
    for (int p = 0; p < kPanel; ++p) {
      const T o = s[p * WP + lane];
#pragma unroll
      for (int q = 0; q < kPanel / V; ++q) {
        const auto ch = *reinterpret_cast<const typename Chunk::type*>(s + p * WP + q * V);
#pragma unroll
        for (int u = 0; u < V; ++u) a[q * V + u] -= o * Chunk::get(ch, u);
      }
    }
  }
  // Above the diagonal the products are not part of the block (the factor reads only
  // columns up to each row's pivot, but keep the staged block lower).
  if (prior > 0) {
#pragma unroll
    for (int j = 0; j < kPanel; ++j)
      if (j > lane) a[j] = T(0);
  }
}

// The panel kernel's rows (thread t: row r0 + t of the matrix, x[] its 32 entries of
// the panel; ROWS threads) minus their products with rows k0..k0 + 31 over the `prior`
// panels before k0. xs: the block's ROWS x 33 row buffer; w: the W^T buffer (32 x
// left_w_pitch). Both free on entry (x[] already read) and in use on exit: the caller
// synchronizes before it reuses them.
template <typename T, int ROWS>
__device__ __forceinline__ void panel_left_update(T (&x)[kPanel], T* xs, T* w, const T* m,
                                                  int n, int r0, int rows, int k0, int prior) {
  static_assert(std::is_floating_point_v<T>, "left-looking groups are for real types");
  constexpr int PITCH = kPanel + 1, WP = left_w_pitch<T>(), kStride = ROWS / kPanel;
  // Loads in flight per batch: all 32 of a thread's entries in float32; in float64
  // batches of 8 keep x[] and the loads within 128 registers (four blocks per SM).
  constexpr int kBatch = sizeof(T) == 4 ? 32 : 8;
  constexpr bool kEarly = sizeof(T) == 4;
  constexpr int kUnroll = sizeof(T) == 4 ? 2 : 1;
  using Chunk = TileChunk<T>;
  constexpr int V = Chunk::kLen;
  const int c = threadIdx.x % kPanel, rr = threadIdx.x / kPanel;
  for (int ch = prior; ch > 0; --ch) {
    const int p0 = k0 - ch * kPanel;
    // Lane c copies column p0 + c of W's rows rr, rr + kStride, ...: rows k0..k0 + 31
    // are all in the matrix, since the panel kernel has rows below them.
    const T* wsrc = m + static_cast<int64_t>(k0) * n + p0 + c;
    const T* src = m + static_cast<int64_t>(r0) * n + p0 + c;
    T wv[kPanel / kStride];
    PanelRowStage<T, ROWS, kBatch> stage;
#pragma unroll
    for (int i = 0; i < kPanel / kStride; ++i)
      wv[i] = wsrc[static_cast<int64_t>(rr + i * kStride) * n];
    // float32: the rows' loads in flight with W's, before the wait for the buffers.
    if constexpr (kEarly) stage.load(src, rows, n, 0);
    __syncthreads();  // xs and w consumed (x[] read, or the previous panel's products)
#pragma unroll
    for (int i = 0; i < kPanel / kStride; ++i) w[c * WP + rr + i * kStride] = wv[i];
    if constexpr (kEarly) stage.store(xs, 0);
#pragma unroll
    for (int h = kEarly ? kBatch : 0; h < kPanel; h += kBatch) {
      stage.load(src, rows, n, h);
      stage.store(xs, h);
    }
    __syncthreads();
    const T* own = xs + threadIdx.x * PITCH;
#pragma unroll kUnroll
    for (int p = 0; p < kPanel; ++p) {
      const T o = own[p];
      const T* wp = w + p * WP;
#pragma unroll
      for (int q = 0; q < kPanel / V; ++q) {
        const auto ch4 = *reinterpret_cast<const typename Chunk::type*>(wp + q * V);
#pragma unroll
        for (int u = 0; u < V; ++u) x[q * V + u] -= o * Chunk::get(ch4, u);
      }
    }
  }
}

// diag_left_update on the float64 MMAs: the diagonal block minus P P^T over the prior
// panels, with P the block's rows in an earlier panel (a warp's 32 x 32 SYRK: the
// lower 4 x 4 of its 8 x 8 tiles, ten accumulators, 80 MMAs a panel against 1,024
// multiply-adds and 544 shared loads per lane; the chain of one warp per matrix is what
// a step of few matrices waits on: ncu had the FMA form's step at 7,400 instructions a
// warp, 24 us, for 50 matrices of order 512). H100, bit for bit as the FMA form: 50
// matrices of order 512 0.676 -> 0.596 ms, 2,000 8.79 -> 8.46
// (results/h100-2026-11-28-diag-mma-ab.txt).
// s: the warp's buffer, the block staged at pitch 33 (rows past nb unset: their
// products are never read) on entry; on exit its ten lower 8 x 8 tiles hold the updated
// block and the rest of it stale panel entries (the caller keeps the lower triangle).
// In between each panel is copied in row by row at kDmmaPitch (rows past nb zero),
// where the A fragment (r, k) and the B fragment (j, k) are the same entries, so four
// loads serve a k-step.
__device__ __forceinline__ void diag_left_update_dmma(double* s, const double* m, int n, int k0,
                                                      int nb, int prior) {
  constexpr int PITCH = kPanel + 1;
  const int lane = threadIdx.x & 31;
  double acc[4][4][2];
  double* const cfrag = s + (lane / 4) * PITCH + 2 * (lane % 4);
#pragma unroll
  for (int rt = 0; rt < 4; ++rt)
#pragma unroll
    for (int ct = 0; ct <= rt; ++ct)
#pragma unroll
      for (int e = 0; e < 2; ++e) acc[rt][ct][e] = cfrag[8 * rt * PITCH + 8 * ct + e];
  for (int c = prior; c > 0; --c) {
    const double* src = m + static_cast<int64_t>(k0) * n + (k0 - c * kPanel) + lane;
    __syncwarp();  // the block (or the previous panel) read
#pragma unroll 8
    for (int r = 0; r < kPanel; ++r)
      cp_async_elem_or_zero(s + r * kDmmaPitch + lane,
                            r < nb ? src + static_cast<int64_t>(r) * n : m, r < nb);
    cp_async_commit();
    cp_async_wait<0>();
    __syncwarp();
    const double* frag = s + (lane / 4) * kDmmaPitch + lane % 4;
#pragma unroll
    for (int k = 0; k < kPanel; k += 4) {
      double v[4];
#pragma unroll
      for (int t = 0; t < 4; ++t) v[t] = frag[8 * t * kDmmaPitch + k];
#pragma unroll
      for (int rt = 0; rt < 4; ++rt)
#pragma unroll
        for (int ct = 0; ct <= rt; ++ct) dmma_m8n8k4(acc[rt][ct], -v[rt], v[ct]);
    }
  }
  __syncwarp();  // the last panel read before the block is written over it
#pragma unroll
  for (int rt = 0; rt < 4; ++rt)
#pragma unroll
    for (int ct = 0; ct <= rt; ++ct)
#pragma unroll
      for (int e = 0; e < 2; ++e) cfrag[8 * rt * PITCH + 8 * ct + e] = acc[rt][ct][e];
  __syncwarp();
}

// Whether the left-looking updates have an MMA form for T (float64:
// panel_left_update_dmma, diag_left_update_dmma). The kernels' kMma instances exist for
// it on every architecture the build targets, since a launched template's arguments must
// not depend on __CUDA_ARCH__; the launcher picks them on sm_80 and later only, where the
// float64 MMA exists (below it dmma_m8n8k4 traps).
template <typename T>
constexpr bool left_update_has_mma() {
  return std::is_same_v<T, double>;
}

// The W buffer of the panel kernel (elements): W^T at left_w_pitch for the FMA update,
// or W row by row at kDmmaPitch for the MMA one.
template <typename T, bool kMma>
constexpr int panel_w_elems() {
  return kPanel * (kMma ? kDmmaPitch : left_w_pitch<T>());
}

// panel_left_update on the float64 MMAs (mma.m8n8k4, dmma.cuh): X -= R W^T, with R the
// rows' entries in an earlier panel and W that panel's entries of rows k0..k0 + 31.
//
// Why: the FMA form issues, per thread and earlier panel, 1,024 multiply-adds and 544
// shared loads for its row; the MMAs cover a warp's 32 rows with 128 instructions
// from 64 fragment loads, at twice the FMA rate (the blocked update's reason,
// update_dmma.cuh). H100: float64 n = 512 9.50 -> 8.77 ms, 384 22.20 -> 20.02, 256
// 8.85 -> 8.40 (results/h100-2026-11-28-panel-mma-ab.txt), and the factors bit for bit
// those of the FMA form; the PTX ISA does not promise that order of the sums, so the
// tests compare the two within the error bound.
//
// Warp w holds rows 32 w .. 32 w + 31 of the block as 4 x 4 accumulators of 8 x 8
// (acc[rt][ct]: rows 8 rt.., columns 8 ct..), read from xs (the block's rows, pitch
// 33) on entry and written back there on exit; in between xs stages each earlier
// panel's rows (the A fragments, element (row, k)) and w holds W row by row at
// kDmmaPitch (the B fragments, element (j, k): a half warp's 16 addresses fall in
// distinct banks). Rows past `rows` are zeros and stay scratch. The caller has
// synchronized after staging xs; on exit xs holds the updated rows and w is free.
template <int ROWS>
__device__ __forceinline__ void panel_left_update_dmma(double* xs, double* w, const double* m,
                                                       int n, int r0, int rows, int k0,
                                                       int prior) {
  constexpr int PITCH = kPanel + 1, kStride = ROWS / kPanel;
  static_assert(ROWS == 4 * kPanel, "a warp per 32 rows, each thread a column of 8 rows of W");
  const int lane = threadIdx.x & 31;
  const int wrow = 32 * (threadIdx.x / 32);
  const int c = threadIdx.x % kPanel, rr = threadIdx.x / kPanel;
  double acc[4][4][2];
  double* const cfrag = xs + (wrow + lane / 4) * PITCH + 2 * (lane % 4);
#pragma unroll
  for (int rt = 0; rt < 4; ++rt)
#pragma unroll
    for (int ct = 0; ct < 4; ++ct)
#pragma unroll
      for (int e = 0; e < 2; ++e) acc[rt][ct][e] = cfrag[8 * rt * PITCH + 8 * ct + e];
  for (int ch = prior; ch > 0; --ch) {
    const int p0 = k0 - ch * kPanel;
    // W's rows k0..k0 + 31 are all in the matrix (the kernel has rows below them).
    const double* wsrc = m + static_cast<int64_t>(k0) * n + p0 + c;
    const double* src = m + static_cast<int64_t>(r0) * n + p0 + c;
    __syncthreads();  // xs and w consumed (the accumulators read, or the last products)
    // By cp.async: all 40 of a thread's copies in flight at once, and no registers
    // beside the accumulators' 64 (staged through registers in batches of 8, the
    // listed instance spilled 272 bytes).
#pragma unroll
    for (int i = 0; i < kPanel / kStride; ++i)
      cp_async_elem(w + (rr + i * kStride) * kDmmaPitch + c,
                    wsrc + static_cast<int64_t>(rr + i * kStride) * n);
#pragma unroll 8
    for (int i = 0; i < kPanel; ++i) {
      const int r = rr + i * kStride;
      cp_async_elem_or_zero(xs + r * PITCH + c, r < rows ? src + static_cast<int64_t>(r) * n : m,
                            r < rows);
    }
    cp_async_commit();
    cp_async_wait<0>();
    __syncthreads();
    dmma_tiles_k32<4, 4, /*kNeg=*/true>(acc, xs + (wrow + lane / 4) * PITCH + lane % 4,
                                        PITCH, w + (lane / 4) * kDmmaPitch + lane % 4,
                                        kDmmaPitch);
  }
  __syncthreads();  // every warp's last fragments read before the rows are overwritten
#pragma unroll
  for (int rt = 0; rt < 4; ++rt)
#pragma unroll
    for (int ct = 0; ct < 4; ++ct)
#pragma unroll
      for (int e = 0; e < 2; ++e) cfrag[8 * rt * PITCH + 8 * ct + e] = acc[rt][ct][e];
}

}  // namespace cuda
}  // namespace batchchol
