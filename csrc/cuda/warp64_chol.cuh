// Warp family, orders 33..64 (float32) and 33..48 (float64; ragged batches 33..64 in
// both, warp64_ragged.cuh): one warp per matrix, lane
// q holds rows q and q + 32 in registers (a0[32], a1[W]: W, the kernel's width, 40, 48
// or 64, at least the order; with_warp64_width picks it), and a run-time loop goes over
// the columns.
//
// Why not the fully unrolled routine of warp_chol_device.cuh: past n = 32 its code
// outgrows the instruction cache (140-200 KB of SASS, 0.18-0.36 of the roofline on an
// H100, benchmarks/KERNEL-NOTES.md). Here each step k updates the rows with a fixed,
// unrolled body and shifts them left by one entry as part of the update, so column k is
// always in a0[0] / a1[0] and every register index stays a constant: ~1 KB of loop body,
// at the price of updating a fixed number of entries per step. Final entries of L go to the staged matrix in shared memory as they are
// produced; the forward and backward sweeps of posv read them back from there.
#pragma once

#include <cstring>

#include "cuda/warp_chol_kernels.cuh"

namespace batchchol {
namespace cuda {

// Element (i, j) of the lower working matrix / factor in a staged matrix (stored as is
// for lower, transposed for upper; see load_group_rows).
template <typename T>
__device__ __forceinline__ T& staged_at(T* mat, int pitch, bool upper, int i, int j) {
  return upper ? mat[j * pitch + i] : mat[i * pitch + j];
}

// The fixed-size family's largest order (its widest kernel): 64 in float32; 48 in
// float64, where rows of 64 would take 192 registers (a0 and a1 at 48: 160; the ragged
// kernel, warp64_ragged.cuh, runs float64 at 64 all the same).
template <typename T>
constexpr int warp64_max_width() {
  return sizeof(T) == 8 ? 48 : 64;
}

// Elements per warp of the column buffer: column k of L published twice over (the
// parity of k picks the half), so that one __syncwarp per step orders both the writes
// of step k after the reads of step k - 2 and the reads of step k after its writes.
constexpr int kWarp64ColBuf = 128;

// Entries r0..r0 + 16/sizeof(T) - 1 of a published column, one 16-byte broadcast read.
template <typename T>
struct Warp64Chunk {
  static constexpr int kLen = 16 / sizeof(T);
  T v[kLen];
  __device__ __forceinline__ explicit Warp64Chunk(const T* col) {
    const uint4 raw = *reinterpret_cast<const uint4*>(col);
    memcpy(v, &raw, sizeof(raw));
  }
};

// Steps k0 <= k < k1 of the factorization below, all with k >= K0. At step k, a0[jj] and
// a1[jj] hold columns k + jj of rows q and q + 32; only columns up to 31 (row q) and W - 1
// (row q + 32) ever become L, so these steps update the first 32 - K0 and W - K0
// entries: a fixed body per range of eight steps instead of one for all (4,000 ->
// 2,850 multiply-adds per lane at n = 64), still ~1 KB of code each. kTop: the pivots are
// rows 0..31 (a0, both rows updated); otherwise rows 32..W - 1 (a1 alone).
template <typename T, int W, int K0, bool kTop, typename Acc>
__device__ __forceinline__ void warp64_steps(T (&a0)[32], T (&a1)[W], T* mat, Acc at, int n,
                                             int q, T* colbuf, int k0, int k1, int& info) {
  using R = real_t<T>;
  using Chunk = Warp64Chunk<T>;
  constexpr int V = Chunk::kLen;
  constexpr int W0 = kTop ? 32 - K0 : 0, W1 = W - K0;
  // Not unrolled (the point of this routine): the body is the same for every k.
#pragma unroll 1
  for (int k = k0; k < k1; ++k) {
    const R d = real_(shfl(kTop ? a0[0] : a1[0], k & 31));
    if (!pivot_ok(d) && info == 0) info = k + 1;
    const R inv = rsqrt_(d);
    T* col = colbuf + (k & 1) * 64;
    T l0 = T(0);
    if constexpr (kTop) {
      l0 = scale_pivot_column(a0[0], q == k, d, inv);  // L(q, k), meaningful for q >= k
      if (q >= k) at(mat, q, k) = l0;
      if (q >= k) col[q - k] = l0;
    }
    const T l1 = scale_pivot_column(a1[0], q + 32 == k, d, inv);  // L(q + 32, k)
    if (q + 32 >= k && q + 32 < n) at(mat, q + 32, k) = l1;
    if (q + 32 >= k) col[q + 32 - k] = l1;
    __syncwarp();
#pragma unroll
    for (int c = 0; c < W1; c += V) {
      const Chunk ch(col + c);
#pragma unroll
      for (int u = 0; u < V; ++u) {
        const int jj = c + u;
        if (jj == 0) continue;
        if (jj < W0) a0[jj - 1] = a0[jj] - mul_conj(l0, ch.v[u]);
        if (jj < W1) a1[jj - 1] = a1[jj] - mul_conj(l1, ch.v[u]);
      }
    }
  }
}

// Factors the n x n (32 < n <= W) working matrix whose rows the warp holds (rows past
// n an identity), writing L(i, j), j <= i < n, into the staged matrix. Returns info.
// Columns past n are never stepped through, so nothing outside the n x n slot is written.
//
// Step k needs L(k + jj, k) for every jj on every lane. Each lane writes its entries of
// column k to the warp's column buffer at their offset below the pivot (row k + r at
// col[r]), and every lane reads the buffer back with 16-byte broadcasts at offsets
// fixed at compile time: 16 reads per step instead of 63 shuffles, which made the
// previous version shuffle-bound (one shuffle per SM clock against four FMA
// instructions). Offsets past W - 1 - k hold stale entries (or the zeros of padding
// rows past W); they only reach scratch entries beyond column W - 1, which never become
// pivots or L.
template <typename T, int W, typename Acc>
__device__ __forceinline__ int warp64_potrf(T (&a0)[32], T (&a1)[W], T* mat, Acc at, int n,
                                            int q, T* colbuf) {
  static_assert(W == 40 || W == 48 || W == 64, "widths of whole ranges of eight steps");
  int info = 0;
  const auto upto = [n](int k) { return k < n ? k : n; };
  warp64_steps<T, W, 0, true>(a0, a1, mat, at, n, q, colbuf, 0, 8, info);
  warp64_steps<T, W, 8, true>(a0, a1, mat, at, n, q, colbuf, 8, 16, info);
  warp64_steps<T, W, 16, true>(a0, a1, mat, at, n, q, colbuf, 16, 24, info);
  warp64_steps<T, W, 24, true>(a0, a1, mat, at, n, q, colbuf, 24, 32, info);
  warp64_steps<T, W, 32, false>(a0, a1, mat, at, n, q, colbuf, 32, upto(40), info);
  if constexpr (W > 40) {
    warp64_steps<T, W, 40, false>(a0, a1, mat, at, n, q, colbuf, 40, upto(48), info);
  }
  if constexpr (W > 48) {
    warp64_steps<T, W, 48, false>(a0, a1, mat, at, n, q, colbuf, 48, upto(56), info);
    warp64_steps<T, W, 56, false>(a0, a1, mat, at, n, q, colbuf, 56, upto(64), info);
  }
  return info;
}

// Solves L L^H x = b for one right-hand-side column held as b0 (row q) and b1 (row
// q + 32), with L in the staged matrix (the working matrix's entries through `at`).
template <typename T, typename Acc>
__device__ __forceinline__ void warp64_potrs(const T* mat, Acc at, int n, int q, T& b0, T& b1) {
  T* m = const_cast<T*>(mat);
#pragma unroll 1
  for (int j = 0; j < n; ++j) {  // L y = b
    const T ljj = at(m, j, j);
    const T yj = shfl((j < 32 ? b0 : b1) / real_(ljj), j & 31);
    if (q == j) b0 = yj;
    if (q + 32 == j) b1 = yj;
    if (q > j) b0 -= at(m, q, j) * yj;
    if (q + 32 > j && q + 32 < n) b1 -= at(m, q + 32, j) * yj;
  }
#pragma unroll 1
  for (int j = n - 1; j >= 0; --j) {  // L^H x = y
    const T ljj = at(m, j, j);
    const T xj = shfl((j < 32 ? b0 : b1) / real_(ljj), j & 31);
    if (q == j) b0 = xj;
    if (q + 32 == j) b1 = xj;
    if (q < j) b0 -= conj_(at(m, j, q)) * xj;
    if (q + 32 < j) b1 -= conj_(at(m, j, q + 32)) * xj;
  }
}

// The warp's two rows of its staged matrix (rows past n_eff: identity), read through
// `at` (an index of stage_copy.cuh).
template <typename T, int W, typename Index>
__device__ __forceinline__ void warp64_load_rows(T (&a0)[32], T (&a1)[W], const T* mat, Index at,
                                                 int n_eff, int q) {
  T rows[2][W];
  load_group_rows<T, W, 32>(rows, mat, at, n_eff, q);
#pragma unroll
  for (int j = 0; j < 32; ++j) a0[j] = rows[0][j];
#pragma unroll
  for (int j = 0; j < W; ++j) a1[j] = rows[1][j];
}

// Loads the warp's rows of its staged matrix and factors it in place (warp64_potrf),
// in the square layout (kPacked false: A as stored, pitch lay.pitch) or the packed one.
template <typename T, int W, bool kPacked>
__device__ __forceinline__ int warp64_factor_staged(T* mat, const StageLayout& lay, int n,
                                                    bool upper, int q, T* colbuf) {
  T a0[32], a1[W];
  if constexpr (kPacked) {
    warp64_load_rows(a0, a1, mat, PackedIndex{}, n, q);
    __syncwarp();  // every lane has read its rows before any L entry overwrites them
    return warp64_potrf(a0, a1, mat, PackedAccess{}, n, q, colbuf);
  } else {
    with_square_index(lay.pitch, upper,
                      [&](auto at) { warp64_load_rows(a0, a1, mat, at, n, q); });
    __syncwarp();
    return warp64_potrf(a0, a1, mat, SquareAccess{lay.pitch, upper}, n, q, colbuf);
  }
}

// One warp per matrix (P = 32); blocks as in warp_chol_kernels.cuh. kPacked: the chunk
// in the packed layout (stage_copy.cuh), for n = 64 with 16-byte copies only (the
// launcher checks).
template <typename T, int W, bool kPacked = false>
__global__ void __launch_bounds__(256)
    potrf_warp64_kernel(const T* __restrict__ A, T* __restrict__ L, int* __restrict__ info,
                        int64_t batch, StageLayout lay, bool upper, bool vec) {
  extern __shared__ __align__(16) unsigned char warp_smem_raw[];
  // The warps' column buffers, then the staged matrices (16-byte aligned after them).
  T* const colbufs = reinterpret_cast<T*>(warp_smem_raw);
  T* s = colbufs + (blockDim.x / 32) * kWarp64ColBuf;
  int64_t first;
  int count;
  chunk_of_block<32>(batch, first, count);
  const int nn = lay.n * lay.n;
  if constexpr (kPacked) {
    stage_in_packed<T, 16, 64>(s, A + first * nn, count * nn, lay, upper);
  } else {
    stage_in_exact<T, 16, W>(s, A + first * nn, count * nn, lay, vec, upper);
  }
  __syncthreads();
  const int g = threadIdx.x / 32, q = threadIdx.x % 32;
  // A warp past the end of the batch has no staged slot of its own: it skips the
  // factorization (warp-uniform; no block barrier inside).
  if (g < count) {
    const int inf = warp64_factor_staged<T, W, kPacked>(s + g * lay.ms, lay, lay.n, upper, q,
                                                        colbufs + g * kWarp64ColBuf);
    if (q == 0) info[first + g] = inf;
  }
  __syncthreads();
  if constexpr (kPacked) {
    stage_out_packed<T, 64>(L + first * nn, s, count * nn, lay, upper);
  } else {
    stage_out_exact<T, W>(L + first * nn, s, count * nn, lay, vec, upper);
  }
}

template <typename T, int W, bool kPacked = false>
__global__ void __launch_bounds__(256)
    posv_warp64_kernel(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ X,
                       T* __restrict__ L, int* __restrict__ info, int64_t batch, int k,
                       StageLayout lay, bool upper, bool vec) {
  extern __shared__ __align__(16) unsigned char warp_smem_raw[];
  T* const colbufs = reinterpret_cast<T*>(warp_smem_raw);  // as in potrf_warp64_kernel
  T* s = colbufs + (blockDim.x / 32) * kWarp64ColBuf;
  int64_t first;
  int count;
  chunk_of_block<32>(batch, first, count);
  const int n = lay.n, nn = n * n;
  if constexpr (kPacked) {
    stage_in_packed<T, 16, 64>(s, A + first * nn, count * nn, lay, upper);
  } else {
    stage_in_exact<T, 16, W>(s, A + first * nn, count * nn, lay, vec, upper);
  }
  __syncthreads();
  const int g = threadIdx.x / 32, q = threadIdx.x % 32;
  if (g < count) {  // whole warps (see potrf_warp64_kernel)
    T* mat = s + g * lay.ms;
    const int inf = warp64_factor_staged<T, W, kPacked>(mat, lay, n, upper, q,
                                                        colbufs + g * kWarp64ColBuf);
    if (q == 0) info[first + g] = inf;
    __syncwarp();  // the warp's factor is in shared memory
    const bool conj_rhs = upper && IsComplex<T>::value;
    const int64_t sys = (first + g) * int64_t(n) * k;
    for (int c = 0; c < k; ++c) {
      T b0 = B[sys + int64_t(q) * k + c];  // q < 32 < n
      T b1 = q + 32 < n ? B[sys + int64_t(q + 32) * k + c] : T(0);
      if (conj_rhs) b0 = conj_(b0), b1 = conj_(b1);
      if constexpr (kPacked) {
        warp64_potrs(mat, PackedAccess{}, n, q, b0, b1);
      } else {
        warp64_potrs(mat, SquareAccess{lay.pitch, upper}, n, q, b0, b1);
      }
      X[sys + int64_t(q) * k + c] = conj_rhs ? conj_(b0) : b0;
      if (q + 32 < n) X[sys + int64_t(q + 32) * k + c] = conj_rhs ? conj_(b1) : b1;
    }
  }
  if (L == nullptr) return;
  __syncthreads();
  if constexpr (kPacked) {
    stage_out_packed<T, 64>(L + first * nn, s, count * nn, lay, upper);
  } else {
    stage_out_exact<T, W>(L + first * nn, s, count * nn, lay, vec, upper);
  }
}

}  // namespace cuda
}  // namespace batchchol
