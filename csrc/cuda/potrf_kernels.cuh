// Batched Cholesky kernel templates (the batch index comes from the grid).
//
//   potrf_registers_kernel  n <= 32: NP lanes per matrix, rows in registers,
//                           several matrices per block staged through shared memory
//   potrf_shared_kernel     n fits in shared memory: one block per matrix
//   blocked_*               larger n: one launch per 32-wide panel step on the
//                           output buffer (diagonal factor, panel solve, SYRK update)
#pragma once

#include "cuda/batch_layout.cuh"
#include "cuda/potrf_block.cuh"

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

// Each kernel finds its matrix through a Layout (batch_layout.cuh); the panel kernels
// get the step of the launch sequence and skip matrices that are not at a panel of
// theirs in that step.
template <typename Layout>
__device__ __forceinline__ bool panel_of(const Layout& lay, int64_t b, int step, int& n,
                                         int& k0) {
  if (!lay.mine(b) || !lay.valid(b)) return false;
  n = lay.size(b);
  k0 = (step - lay.first_step(b)) * kPanel;
  return k0 >= 0 && k0 < n;
}

// L = lower triangle of A (or of A^T for upper), zeros above; info = 0.
// One block per matrix (grid.x = batch, which may exceed grid.y's 65535 limit).
template <typename T, typename Layout>
__global__ void blocked_init_kernel(const T* __restrict__ A, T* __restrict__ L,
                                    int* __restrict__ info, Layout lay, bool upper) {
  const int64_t b = blockIdx.x;
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
}

// Factors the diagonal block at (k0, k0): one warp per matrix, rows in registers.
template <typename T, typename Layout>
__global__ void blocked_diag_kernel(T* __restrict__ L, int* __restrict__ info, int64_t batch,
                                    Layout lay, int step) {
  const int64_t b = static_cast<int64_t>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
  int n, k0;
  if (b >= batch || !panel_of(lay, b, step, n, k0)) return;  // whole warps
  const int lane = threadIdx.x & 31;
  const int nb = min(kPanel, n - k0);
  T* m = L + lay.origin(b) + static_cast<int64_t>(k0) * n + k0;
  T a[kPanel];
#pragma unroll
  for (int j = 0; j < kPanel; ++j)
    a[j] = (lane < nb && j <= lane) ? m[static_cast<int64_t>(lane) * n + j] : T(0);
  const int inf = potrf_rows_in_registers<T, kPanel>(a, lane, nb);
  if (lane < nb) {
#pragma unroll
    for (int j = 0; j < kPanel; ++j)
      if (j <= lane) m[static_cast<int64_t>(lane) * n + j] = a[j];
  }
  if (lane == 0 && inf != 0 && info[b] == 0) info[b] = k0 + inf;
}

// Rows below the diagonal block: L21 = A21 L11^{-H}, one row per thread.
template <typename T, typename Layout>
__global__ void blocked_panel_kernel(T* __restrict__ L, Layout lay, int step) {
  // Raw storage: c10::complex has a constructor, which __shared__ arrays forbid.
  __shared__ __align__(16) unsigned char l11_raw[sizeof(T) * kPanel * (kPanel + 1)];
  auto l11 = reinterpret_cast<T(*)[kPanel + 1]>(l11_raw);
  const int64_t b = blockIdx.x;
  int n, k0;
  if (!panel_of(lay, b, step, n, k0) || k0 + kPanel + int(blockIdx.y * blockDim.x) >= n) return;
  T* m = L + lay.origin(b);
  for (int e = threadIdx.x; e < kPanel * kPanel; e += blockDim.x) {
    const int i = e / kPanel, j = e % kPanel;
    l11[i][j] = m[static_cast<int64_t>(k0 + i) * n + k0 + j];
  }
  __syncthreads();
  const int i = k0 + kPanel + blockIdx.y * blockDim.x + threadIdx.x;
  if (i >= n) return;
  T* row = m + static_cast<int64_t>(i) * n + k0;
  T x[kPanel];
#pragma unroll
  for (int j = 0; j < kPanel; ++j) x[j] = row[j];
#pragma unroll
  for (int j = 0; j < kPanel; ++j) {
    T acc = x[j];
#pragma unroll
    for (int p = 0; p < j; ++p) acc -= mul_conj(x[p], l11[j][p]);
    x[j] = acc / real_(l11[j][j]);
  }
#pragma unroll
  for (int j = 0; j < kPanel; ++j) row[j] = x[j];
}

// Tile of the trailing update: 16-byte types use 32 x 32 tiles to stay within the
// 48 KB of static shared memory.
template <typename T>
constexpr int update_tile() {
  return sizeof(T) >= 16 ? 32 : 64;
}

// Trailing SYRK: L22 -= L21 L21^H on TILE x TILE tiles of the lower triangle, the
// two TILE x 32 panel slices staged in shared memory, TS x TS outputs per thread.
template <typename T, typename Layout>
__global__ void __launch_bounds__(256)
    blocked_update_kernel(T* __restrict__ L, Layout lay, int step) {
  constexpr int TILE = update_tile<T>(), TS = TILE / 16;
  __shared__ __align__(16) unsigned char pi_raw[sizeof(T) * TILE * (kPanel + 1)];
  __shared__ __align__(16) unsigned char pj_raw[sizeof(T) * TILE * (kPanel + 1)];
  auto pi = reinterpret_cast<T(*)[kPanel + 1]>(pi_raw);
  auto pj = reinterpret_cast<T(*)[kPanel + 1]>(pj_raw);
  const int64_t b = blockIdx.x;
  int n, k0;
  int ti, tj;
  tri_index(blockIdx.y, ti, tj);
  if (!panel_of(lay, b, step, n, k0)) return;
  const int t0 = k0 + kPanel;
  const int i0 = t0 + ti * TILE, j0 = t0 + tj * TILE;
  if (i0 >= n) return;  // the tile lies past this matrix (uniform over the block)
  T* m = L + lay.origin(b);
  for (int e = threadIdx.x; e < TILE * kPanel; e += blockDim.x) {
    const int r = e / kPanel, c = e % kPanel;
    pi[r][c] = (i0 + r < n) ? m[static_cast<int64_t>(i0 + r) * n + k0 + c] : T(0);
    pj[r][c] = (j0 + r < n) ? m[static_cast<int64_t>(j0 + r) * n + k0 + c] : T(0);
  }
  __syncthreads();
  // Thread (tr, tc) owns rows tr + 16a and columns tc + 16b: strided ownership keeps
  // the shared-memory reads of a warp on distinct rows.
  const int tr = threadIdx.x / 16, tc = threadIdx.x % 16;
  T acc[TS][TS];
#pragma unroll
  for (int a = 0; a < TS; ++a)
#pragma unroll
    for (int c = 0; c < TS; ++c) acc[a][c] = T(0);
#pragma unroll 8
  for (int p = 0; p < kPanel; ++p) {
    T li[TS], lj[TS];
#pragma unroll
    for (int a = 0; a < TS; ++a) {
      li[a] = pi[tr + 16 * a][p];
      lj[a] = pj[tc + 16 * a][p];
    }
#pragma unroll
    for (int a = 0; a < TS; ++a)
#pragma unroll
      for (int c = 0; c < TS; ++c) acc[a][c] += mul_conj(li[a], lj[c]);
  }
#pragma unroll
  for (int a = 0; a < TS; ++a)
#pragma unroll
    for (int c = 0; c < TS; ++c) {
      const int i = i0 + tr + 16 * a, j = j0 + tc + 16 * c;
      if (i < n && j < n && j <= i) m[static_cast<int64_t>(i) * n + j] -= acc[a][c];
    }
}

// For upper results: moves the lower factor to the upper triangle (U = L^T).
template <typename T, typename Layout>
__global__ void blocked_to_upper_kernel(T* __restrict__ L, Layout lay) {
  const int64_t b = blockIdx.x;
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
}

}  // namespace cuda
}  // namespace batchchol
