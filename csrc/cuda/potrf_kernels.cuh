// Batched Cholesky kernel templates (the batch index comes from the grid).
//
//   potrf_registers_kernel  n <= 32: NP lanes per matrix, rows in registers,
//                           several matrices per block staged through shared memory
//   potrf_shared_kernel     n fits in shared memory: one block per matrix
//   blocked_*               larger n: one launch per 32-wide panel step on the
//                           output buffer (diagonal factor, panel solve; the SYRK
//                           update in blocked_update.cuh)
#pragma once

#include "cuda/batch_layout.cuh"
#include "cuda/blocked_left.cuh"
#include "cuda/potrf_block.cuh"
#include "cuda/tile_chol.cuh"
#include "cuda/blocked_update.cuh"

#include <type_traits>

namespace batchchol {
namespace cuda {

// Coalesced copy of `count` consecutive matrices between global memory (dense n x n)
// and shared memory (rows of `pitch`); with `transpose` the shared copy is A^T.
template <typename T>
__device__ __forceinline__ void load_matrices(T* s, const T* g, int count, int n, int pitch,
                                              bool transpose) {
  const int nn = n * n;
  const int total = count * nn;
  for (int e = threadIdx.x; e < total; e += blockDim.x) {
    const int m = e / nn, rem = e - m * nn;
    const int i = rem / n, j = rem - i * n;
    const int si = transpose ? j : i, sj = transpose ? i : j;
    s[m * n * pitch + si * pitch + sj] = g[e];
  }
}

template <typename T>
__device__ __forceinline__ void store_matrices(T* g, const T* s, int count, int n, int pitch,
                                               bool transpose) {
  const int nn = n * n;
  const int total = count * nn;
  for (int e = threadIdx.x; e < total; e += blockDim.x) {
    const int m = e / nn, rem = e - m * nn;
    const int i = rem / n, j = rem - i * n;
    const int si = transpose ? j : i, sj = transpose ? i : j;
    g[e] = s[m * n * pitch + si * pitch + sj];
  }
}

// Zeroes the strict upper triangle of each staged (lower) factor.
template <typename T>
__device__ __forceinline__ void zero_upper(T* s, int count, int n, int pitch) {
  const int nn = n * n;
  for (int e = threadIdx.x; e < count * nn; e += blockDim.x) {
    const int m = e / nn, rem = e - m * nn;
    const int i = rem / n, j = rem - i * n;
    if (j > i) s[m * n * pitch + i * pitch + j] = T(0);
  }
}

// One group of NP lanes factors the staged matrix m (lane r holds row r in a[]) and
// writes the factor back with the strict upper triangle zeroed. Every group computes
// (the shuffles use the full warp mask); a group past the end of the batch (!valid)
// works on zeros and writes nothing. Returns the matrix's info.
template <typename T, int NP>
__device__ __forceinline__ int factor_staged_rows(T* m, int pitch, int n, int r, bool valid,
                                                  T (&a)[NP]) {
#pragma unroll
  for (int j = 0; j < NP; ++j) a[j] = (valid && r < n && j <= r) ? m[r * pitch + j] : T(0);
  const int inf = potrf_rows_in_registers<T, NP>(a, r, n);
  if (valid && r < n) {
#pragma unroll
    for (int j = 0; j < NP; ++j)
      if (j < n) m[r * pitch + j] = j <= r ? a[j] : T(0);
  }
  return inf;
}

template <typename T, int NP>
__global__ void potrf_registers_kernel(const T* __restrict__ A, T* __restrict__ L,
                                       int* __restrict__ info, int64_t batch, int n, bool upper) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* s = reinterpret_cast<T*>(smem_raw);
  constexpr int kPerBlock = 128 / NP;
  const int pitch = smem_pitch(n);
  const int64_t first = static_cast<int64_t>(blockIdx.x) * kPerBlock;
  const int count = static_cast<int>(batch - first < kPerBlock ? batch - first : kPerBlock);
  const int64_t offset = first * n * n;

  load_matrices(s, A + offset, count, n, pitch, upper);
  __syncthreads();

  const int group = threadIdx.x / NP, r = threadIdx.x % NP;
  const bool valid = group < count;
  T a[NP];
  const int inf = factor_staged_rows<T, NP>(s + group * n * pitch, pitch, n, r, valid, a);
  if (valid && r == 0) info[first + group] = inf;
  __syncthreads();
  store_matrices(L + offset, s, count, n, pitch, upper);
}

// One block per matrix (Layout: batch_layout.cuh); `pitch` fits the largest matrix.
template <typename T, typename Layout>
__global__ void potrf_shared_kernel(const T* __restrict__ A, T* __restrict__ L,
                                    int* __restrict__ info, Layout lay, int pitch, bool upper) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  __shared__ int info_s;
  T* s = reinterpret_cast<T*>(smem_raw);
  const int64_t b = blockIdx.x;
  if (!lay.mine(b)) return;
  if (!lay.valid(b)) {  // uniform over the block: no barrier is skipped by some threads only
    if (threadIdx.x == 0) info[b] = lay.initial_info(b);
    return;
  }
  const int n = lay.size(b);
  const int64_t offset = lay.origin(b);
  load_matrices(s, A + offset, 1, n, pitch, upper);
  __syncthreads();
  const int inf = potrf_in_shared(s, n, pitch, &info_s);
  zero_upper(s, 1, n, pitch);
  __syncthreads();
  store_matrices(L + offset, s, 1, n, pitch, upper);
  if (threadIdx.x == 0) info[b] = inf;
}

// ---- blocked path: L holds the working lower factor (ld = n) -------------------

// L = lower triangle of A (or of A^T for upper), zeros above; info = 0.
// One block per matrix (grid.x = batch, which may exceed grid.y's 65535 limit; a listed
// layout's blocks loop over its list).
template <typename T, typename Layout>
__global__ void blocked_init_kernel(const T* __restrict__ A, T* __restrict__ L,
                                    int* __restrict__ info, Layout lay, bool upper) {
  const auto body = [&](int64_t b, int) {
    if (!lay.mine(b)) return;
    if (threadIdx.x == 0) info[b] = lay.initial_info(b);
    if (!lay.valid(b)) return;
    const int n = lay.size(b);
    const int64_t base = lay.origin(b);
    const int64_t nn = static_cast<int64_t>(n) * n;
    for (int64_t e = threadIdx.x; e < nn; e += blockDim.x) {
      const int i = static_cast<int>(e / n), j = static_cast<int>(e - static_cast<int64_t>(i) * n);
      T v = T(0);
      if (j <= i) v = upper ? A[base + static_cast<int64_t>(j) * n + i] : A[base + e];
      L[base + e] = v;
    }
  };
  if constexpr (Layout::kListed)
    listed_items(lay, blockIdx.x, gridDim.x, 1, body, [] {});
  else
    body(blockIdx.x, 0);
}

// Matrices (one warp each) per block of the diagonal factorization: each warp stages its
// 32 x 32 block in shared memory (16-byte types: two warps, within the 48 KB of static
// shared memory).
template <typename T>
constexpr int diag_warps() {
  return sizeof(T) >= 16 ? 2 : 4;
}

// Factors the diagonal block at (k0, k0): one warp per matrix, rows in registers. The
// block goes through shared memory so that each load and store of the warp covers one
// row segment (lane c: column c); reading its own row, a lane touched 32 rows per load.
// The strict upper triangle of the block is written as zeros. At a matrix's first step
// without an init pass (ft) the block is read from A (in left mode at every step of
// its first group, FirstTouch::panel_fresh) and info starts there; matrices that no
// panel reaches (invalid metadata, order 0) get their info at step 0. In left mode the
// block first takes the products with the group's earlier panels (diag_left_update,
// or with kMma on the float64 MMAs: diag_left_update_dmma).
template <typename T, typename Layout, bool kMma = false>
__global__ void __launch_bounds__(32 * diag_warps<T>())
    blocked_diag_kernel(FirstTouch<T> ft, T* __restrict__ L, int* __restrict__ info,
                        int64_t batch, Layout lay, int step) {
  static_assert(!kMma || left_update_has_mma<T>(), "the MMA left update is float64's");
  constexpr int PITCH = kPanel + 1;
  // A warp's buffer: the block at pitch 33, or the left-looking update's panel (real
  // types: transposed at left_w_pitch, or with kMma row by row at kDmmaPitch).
  constexpr int kWarpBuf =
      kPanel * (kMma ? kDmmaPitch : std::is_floating_point_v<T> ? left_w_pitch<T>() : PITCH);
  __shared__ __align__(16) unsigned char raw[sizeof(T) * diag_warps<T>() * kWarpBuf];
  const int lane = threadIdx.x & 31;
  T* s = reinterpret_cast<T*>(raw) + (threadIdx.x / 32) * kWarpBuf;
  const auto body = [&](int64_t b, int) {
    int n, k0;
    if (!panel_of(lay, b, step, n, k0)) {
      if (ft.a && step == 0 && lane == 0 && lay.mine(b) && (!lay.valid(b) || lay.size(b) == 0))
        info[b] = lay.initial_info(b);
      return;
    }
    const bool fresh = ft.at_start(k0);  // info starts here
    const int nb = min(kPanel, n - k0);
    const int64_t off = lay.origin(b) + static_cast<int64_t>(k0) * n + k0;
    const T* in = (ft.panel_fresh(step, k0) ? ft.a : L) + off;
    for (int r = 0; r < nb; ++r) s[r * PITCH + lane] = lane <= r ? in[int64_t(r) * n + lane] : T(0);
    __syncwarp();
    int mma_prior = 0;
    if constexpr (kMma) {
      mma_prior = ft.prior_panels(step, k0);
      if (mma_prior > 0) diag_left_update_dmma(s, L + lay.origin(b), n, k0, nb, mma_prior);
    }
    // Rows past nb: identity (they factor to themselves and never touch rows < nb). After
    // the MMA update the entries above the diagonal hold products or stale panel
    // entries (diag_left_update_dmma): only the lower triangle is read.
    T a[kPanel];
#pragma unroll
    for (int j = 0; j < kPanel; ++j) {
      a[j] = lane < nb ? (mma_prior > 0 && j > lane ? T(0) : s[lane * PITCH + j])
                       : T(j == lane ? 1 : 0);
    }
    if constexpr (!kMma && std::is_floating_point_v<T>) {  // left mode is for real types
      if (const int prior = ft.prior_panels(step, k0); prior > 0)
        diag_left_update(a, s, L + lay.origin(b), n, k0, nb, prior);
    }
    int inf;
    if constexpr (std::is_floating_point_v<T>) {
      __syncwarp();  // the rows are read before the chain's column buffer overwrites them
      T rdiag;
      inf = potrf_rows_chain(a, s, rdiag);
    } else {
      inf = potrf_rows_in_registers<T, kPanel>(a, lane, nb);
    }
    __syncwarp();  // every row is read before the factor overwrites it
#pragma unroll
    for (int j = 0; j < kPanel; ++j) s[lane * PITCH + j] = a[j];
    __syncwarp();
    T* out = L + off;
    if (lane < nb) {
      for (int r = 0; r < nb; ++r)
        out[int64_t(r) * n + lane] = lane <= r ? s[r * PITCH + lane] : T(0);
    }
    if (lane == 0) {
      if (fresh)
        info[b] = inf != 0 ? k0 + inf : 0;
      else if (inf != 0 && info[b] == 0)
        info[b] = k0 + inf;
    }
  };
  const int64_t w = static_cast<int64_t>(blockIdx.x) * diag_warps<T>() + threadIdx.x / 32;
  if constexpr (Layout::kListed) {
    listed_items(lay, w, int64_t(gridDim.x) * diag_warps<T>(), 1, body, [] { __syncwarp(); });
  } else {
    if (w >= batch) return;  // whole warps
    body(w, 0);
  }
}

// Rows per block of the panel solve (one row per thread): the rows and L11 stay
// within the 48 KB of static shared memory. Real types keep four blocks per SM (at most
// 128 registers); a row of 32 complex<double> alone takes 128.
template <typename T>
constexpr int panel_rows() {
  return sizeof(T) >= 16 ? 32 : 128;
}

// Rows below the diagonal block: L21 = A21 L11^{-H}, one row per thread. The rows go
// through shared memory: each warp copies whole 32-entry row segments (reading its own
// row, a thread touched 32 rows per load, and the kernel took a third of the whole
// factorization at float64 n = 256). A row is solved in column order (x_j final, then
// subtracted from the entries after it: independent chains, not one dot product per
// entry), against L11 transposed, with the reciprocals of its diagonal. Without an init
// pass (ft) a matrix's first step (in left mode every step of its first group) reads
// its rows from A, and every block writes the
// zeros of the mirrored strip above the diagonal (rows k0..k0 + 31 of its rows'
// columns). In left mode (ft.left, real types) the rows first take the products with
// the group's earlier panels (panel_left_update, or with kMma on the float64 MMAs:
// panel_left_update_dmma), and L11 is read after them into the buffer that held W.
template <typename T, typename Layout, bool kMma = false>
__global__ void __launch_bounds__(panel_rows<T>(), sizeof(T) >= 16 ? 1 : 4)
    blocked_panel_kernel(FirstTouch<T> ft, T* __restrict__ L, Layout lay, int step) {
  static_assert(!kMma || left_update_has_mma<T>(), "the MMA left update is float64's");
  constexpr int ROWS = panel_rows<T>(), PITCH = kPanel + 1;
  // Raw storage: c10::complex has a constructor, which __shared__ arrays forbid. lt_raw
  // also holds W (W^T for the FMA update) of the left-looking update, before L11.
  constexpr int kLtElems =
      std::is_floating_point_v<T> ? panel_w_elems<T, kMma>() : kPanel * kPanel;
  __shared__ __align__(16) unsigned char lt_raw[sizeof(T) * kLtElems];
  __shared__ __align__(16) unsigned char xs_raw[sizeof(T) * ROWS * PITCH];
  // lt[j * 32 + q] = L11(q, j) for q > j, and 1 / L11(j, j) at q = j.
  T* lt = reinterpret_cast<T*>(lt_raw);
  T* xs = reinterpret_cast<T*>(xs_raw);  // the block's rows, pitch 33
  const auto body = [&](int64_t b, int) {
    int n, k0;
    if (!panel_of(lay, b, step, n, k0)) return;
    const int r0 = k0 + kPanel + int(blockIdx.y) * ROWS;
    if (r0 >= n) return;  // uniform over the block
    const int rows = min(ROWS, n - r0);
    T* m = L + lay.origin(b);
    const auto fill_lt = [&] {
      for (int e = threadIdx.x; e < kPanel * kPanel; e += ROWS) {
        const int q = e / kPanel, j = e % kPanel;
        if (j < q) lt[j * kPanel + q] = m[static_cast<int64_t>(k0 + q) * n + k0 + j];
        if (j == q) {
          lt[j * (kPanel + 1)] =
              T(real_t<T>(1) / real_(m[static_cast<int64_t>(k0 + q) * n + k0 + j]));
        }
      }
    };
    const int prior = ft.prior_panels(step, k0);
    if (prior == 0) fill_lt();  // its loads overlap the rows'

    // Thread t copies column t % 32 of rows t / 32 + i ROWS / 32.
    constexpr int kStride = ROWS / kPanel;
    const int c = threadIdx.x % kPanel, rr = threadIdx.x / kPanel;
    const int64_t seg = static_cast<int64_t>(r0) * n + k0 + c;
    const T* src = (ft.panel_fresh(step, k0) ? ft.a + lay.origin(b) : m) + seg;
    if constexpr (std::is_floating_point_v<T>) {
      // All 32 loads in flight before the first store: with the loop unrolled by 8 the
      // block waited for four round trips to memory (float64 n = 512: 9.88 -> 9.64 ms,
      // H200); the complex types keep the loop (complex<double> n = 200 measured no gain).
      PanelRowStage<T, ROWS, kPanel> stage;
      stage.load(src, rows, n, 0);
      stage.store(xs, 0);
      if constexpr (kMma) {
        if (prior > 0) {  // uniform over the block
          __syncthreads();
          panel_left_update_dmma<ROWS>(xs, lt, m, n, r0, rows, k0, prior);
          fill_lt();
        }
      } else if (prior > 0) {  // uniform over the block
        __syncthreads();
        T* row = xs + threadIdx.x * PITCH;
        T x[kPanel];
#pragma unroll
        for (int j = 0; j < kPanel; ++j) x[j] = row[j];
        panel_left_update<T, ROWS>(x, xs, lt, m, n, r0, rows, k0, prior);
        __syncthreads();  // the last panel's xs and W read
#pragma unroll
        for (int j = 0; j < kPanel; ++j) row[j] = x[j];
        fill_lt();
      }
    } else {
#pragma unroll 8
      for (int i = 0; i < kPanel; ++i) {
        const int r = rr + i * kStride;
        xs[r * PITCH + c] = r < rows ? src[static_cast<int64_t>(r) * n] : T(0);
      }
    }
    __syncthreads();
    if (int(threadIdx.x) < rows) {
      T* row = xs + threadIdx.x * PITCH;
      T x[kPanel];
#pragma unroll
      for (int j = 0; j < kPanel; ++j) x[j] = row[j];
#pragma unroll
      for (int j = 0; j < kPanel; ++j) {
        x[j] *= lt[j * (kPanel + 1)];
#pragma unroll
        for (int q = j + 1; q < kPanel; ++q) x[q] -= mul_conj(x[j], lt[j * kPanel + q]);
      }
#pragma unroll
      for (int j = 0; j < kPanel; ++j) row[j] = x[j];
    }
    __syncthreads();
    T* dst = m + seg;
#pragma unroll
    for (int i = 0; i < kPanel; ++i) {
      const int r = rr + i * kStride;
      if (r < rows) dst[static_cast<int64_t>(r) * n] = xs[r * PITCH + c];
    }
    if (ft.a && int(threadIdx.x) < rows) {
      T* z = m + static_cast<int64_t>(k0) * n + r0 + threadIdx.x;
#pragma unroll 8
      for (int i = 0; i < kPanel; ++i) z[static_cast<int64_t>(i) * n] = T(0);
    }
  };
  if constexpr (Layout::kListed)
    listed_items(lay, blockIdx.x, gridDim.x, 1, body, [] { __syncthreads(); });
  else
    body(blockIdx.x, 0);
}

// For upper results: moves the lower factor to the upper triangle (U = L^T).
template <typename T, typename Layout>
__global__ void blocked_to_upper_kernel(T* __restrict__ L, Layout lay) {
  const auto body = [&](int64_t b, int) {
    if (!lay.mine(b) || !lay.valid(b)) return;
    const int n = lay.size(b);
    const int64_t base = lay.origin(b);
    const int64_t nn = static_cast<int64_t>(n) * n;
    for (int64_t e = threadIdx.x; e < nn; e += blockDim.x) {
      const int i = static_cast<int>(e / n), j = static_cast<int>(e - static_cast<int64_t>(i) * n);
      if (j < i) {
        L[base + static_cast<int64_t>(j) * n + i] = L[base + e];
        L[base + e] = T(0);
      }
    }
  };
  if constexpr (Layout::kListed)
    listed_items(lay, blockIdx.x, gridDim.x, 1, body, [] {});
  else
    body(blockIdx.x, 0);
}

}  // namespace cuda
}  // namespace batchchol
