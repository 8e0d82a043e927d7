// potrf for orders 33..32 NW with NW warps per matrix and one row per lane (the "wide"
// family): float64 n <= 64 (NW = 2), float32 n <= 128 (NW = 2..4; the size dispatch
// uses it for 65..128, where float32 33..64 runs warp64).
//
// Lane q of warp w holds row r = 32 w + q of the lower working matrix in a[32 NW]
// registers. Each step k shifts the rows left by one entry while updating them, so
// column k is always a[0] and every register index is a compile-time constant (the
// scheme of warp64_chol.cuh, which holds two rows per lane and spills in float64).
// Steps run in NW phases of 32 columns: in phase p the rows of warps < p are final, so
// only warps p..NW-1 take part, and warp w updates the 32 (w + 1 - p) entries its rows
// still have. Each warp runs its own copy of the phase loops: a per-warp width inside one
// loop made ptxas merge two shifted register sets and spill.
//
// Column k crosses the warps: every lane publishes its raw entry of column k to a shared
// buffer, one barrier of the phase's warps, and every lane reads the pivot d and the
// column back with 16-byte broadcasts. The update
//   a_r(j) -= (a_r / d) * a_j
// takes a_r / d as (a_r rsqrt_(d)) rsqrt_(d) (scalar_ops.cuh), so each step's chain from
// one pivot to the next holds no square root or division (float32 n = 128 7% faster than
// with the division, float64 n = 64 even: results/h100-2026-11-25-rsqrt-pivot-ab.txt); the
// stage keeps the raw entries (pivots on its diagonal) and the copy-out forms L(r, k) = a_r / sqrt(d_k)
// (WideFactorOut). With the square roots and the scaling inside the steps, their long
// sequences sat between the pivots (H100, 10,000 matrices, lower: float64 n = 64 0.41 ->
// 0.37-0.38 ms, float32 n = 128 1.39 -> 1.24-1.25; results/h100-2026-11-24-wide-variants-ab.txt).
#pragma once

#include <type_traits>

#include "cuda/batch_layout.cuh"
#include "cuda/warp64_chol.cuh"

namespace batchchol {
namespace cuda {

// Raw column k published twice over (parity of k), as kWarp64ColBuf: one barrier per
// step orders the writes of step k after the reads of step k - 2.
template <int NW>
constexpr int wide_colbuf() {
  return 2 * 32 * NW;
}

// Shared memory ahead of the stage, in elements: the column buffer, then the copy-out's
// 1 / sqrt(d_k) and sqrt(d_k) (their own: written into the column buffer after the
// steps' block barrier, racecheck paired them with the last warp's reads of it).
template <int NW>
constexpr int wide_scratch() {
  return wide_colbuf<NW>() + 2 * 32 * NW;
}

// Dynamic shared memory of a wide block: the scratch, then `rows` staged rows of `pitch`
// elements (the matrix of order n: n rows of the stage layout's pitch; the ragged list
// kernel: its largest order's).
template <typename T, int NW>
inline size_t wide_smem_bytes(int rows, int pitch) {
  return (wide_scratch<NW>() + size_t(rows) * pitch) * sizeof(T);
}

// Barrier of the warps p..NW-1 (named barrier p + 1: 0 is __syncthreads').
template <int NW>
__device__ __forceinline__ void wide_sync(int p) {
  if (p == NW - 1) {
    __syncwarp();
  } else {
    asm volatile("bar.sync %0, %1;" ::"r"(p + 1), "r"(32 * (NW - p)) : "memory");
  }
}

// a[jj - 1] = a[jj] - f * conj(col[jj]) for jj < W: one step's update and shift.
template <typename T, int NA, int W>
__device__ __forceinline__ void wide_update(T (&a)[NA], T f, const T* col) {
  using Chunk = Warp64Chunk<T>;
  constexpr int V = Chunk::kLen;
#pragma unroll
  for (int c = 0; c < W; c += V) {
    const Chunk ch(col + c);
#pragma unroll
    for (int u = 0; u < V; ++u) {
      const int jj = c + u;
      if (jj > 0) a[jj - 1] = a[jj] - mul_conj(f, ch.v[u]);
    }
  }
}

// A right-hand side eliminated along with the steps (the fused posv's forward
// substitution): lane r holds z_r; at step k lane k publishes z_k and the rows r > k take
// z_r -= (a_rk / d_k) z_k, the update their matrix entries get, so that after the steps
// z = Lt^{-1} b (A = Lt D Lt^T). Its buffer (two entries, parity of k) is ordered as the
// column buffer. WideNoRhs: plain potrf.
template <typename T>
struct WideRhs {
  T z;
  T* zcol;
  __device__ __forceinline__ void publish(int r, int k) {
    if (r == k) zcol[k & 1] = z;
  }
  __device__ __forceinline__ void take(int r, int k, T f) {
    if (r > k) z -= f * zcol[k & 1];
  }
};
struct WideNoRhs {
  __device__ __forceinline__ void publish(int, int) {}
  template <typename T>
  __device__ __forceinline__ void take(int, int, T) {}
};

// Steps k0 <= k < k1 of phase P for row r, updating W entries; info updated (the same
// on every lane of the phase). The stage gets the raw a_rk (r >= k).
template <typename T, int NW, int P, int W, typename Rhs>
__device__ __forceinline__ void wide_steps(T (&a)[32 * NW], int r, int n, T* mat, int pitch,
                                           bool upper, T* colbuf, int k0, int k1, int& info,
                                           Rhs& rhs) {
  using R = real_t<T>;
#pragma unroll 1
  for (int k = k0; k < k1; ++k) {
    T* col = colbuf + (k & 1) * 32 * NW;
    if (r >= k) col[r - k] = a[0];
    rhs.publish(r, k);
    wide_sync<NW>(P);
    const R d = real_(col[0]);
    if (!pivot_ok(d) && info == 0) info = k + 1;
    if (r >= k && r < n) staged_at(mat, pitch, upper, r, k) = a[0];
    const R inv = rsqrt_(d);
    const T f = (a[0] * inv) * inv;  // a_r / d_k; inv * inv overflows for subnormal d_k
    rhs.take(r, k, f);
    wide_update<T, 32 * NW, W>(a, f, col);
  }
}

// The 32 steps of phase P for row r, whose W entries at the phase's start shrink by one
// per step (the row ends at a fixed column): four ranges of eight steps, each updating
// only the entries it still has (W, W - 8, ...), a quarter fewer multiply-adds than W
// on every step for the last warp's rows. Without kSplit, one range (the ragged list
// kernel: the split spilled 224 bytes of its float64 registers).
template <typename T, int NW, int P, int W, bool kSplit, typename Rhs>
__device__ __forceinline__ void wide_phase(T (&a)[32 * NW], int r, int n, T* mat, int pitch,
                                           bool upper, T* colbuf, int& info, Rhs& rhs) {
  const int k0 = 32 * P;
  const auto upto = [n](int k) { return k < n ? k : n; };
  if constexpr (kSplit) {
    wide_steps<T, NW, P, W>(a, r, n, mat, pitch, upper, colbuf, k0, upto(k0 + 8), info, rhs);
    wide_steps<T, NW, P, W - 8>(a, r, n, mat, pitch, upper, colbuf, k0 + 8, upto(k0 + 16),
                                info, rhs);
    wide_steps<T, NW, P, W - 16>(a, r, n, mat, pitch, upper, colbuf, k0 + 16, upto(k0 + 24),
                                 info, rhs);
    wide_steps<T, NW, P, W - 24>(a, r, n, mat, pitch, upper, colbuf, k0 + 24, upto(k0 + 32),
                                 info, rhs);
  } else {
    wide_steps<T, NW, P, W>(a, r, n, mat, pitch, upper, colbuf, k0, upto(k0 + 32), info, rhs);
  }
  // The warps leaving after this phase may still read the buffer half of its last
  // column, which the next phase rewrites two columns later.
  if (P < NW - 1) wide_sync<NW>(P);
}

// The phases 0..WARP of warp WARP. Its rows end at column 32 WARP + 31, so phase P
// updates 32 (WARP + 1 - P) entries. Each warp runs its own copy of the loops (the
// branch is warp-uniform; the named barriers count arrivals, whatever the call site).
template <typename T, int NW, bool kSplit, int WARP, int P = 0, typename Rhs>
__device__ __forceinline__ void wide_chain(T (&a)[32 * NW], int r, int n, T* mat, int pitch,
                                           bool upper, T* colbuf, int& info, Rhs& rhs) {
  wide_phase<T, NW, P, 32 * (WARP + 1 - P), kSplit>(a, r, n, mat, pitch, upper, colbuf, info,
                                                    rhs);
  if constexpr (P < WARP)
    wide_chain<T, NW, kSplit, WARP, P + 1>(a, r, n, mat, pitch, upper, colbuf, info, rhs);
}

// Factors the staged n x n matrix (lower working layout through staged_at) in place,
// eliminating rhs along (WideRhs, or WideNoRhs). Returns info on the lanes of the last
// warp (the others stop at their phase).
template <typename T, int NW, bool kSplit, typename Rhs = WideNoRhs>
__device__ __forceinline__ int wide_potrf(T* colbuf, T* mat, int pitch, int n, bool upper,
                                          Rhs rhs = {}, T* z_out = nullptr) {
  const int w = threadIdx.x / 32;
  const int r = threadIdx.x;
  T a[32 * NW];
#pragma unroll
  for (int j = 0; j < 32 * NW; ++j) {
    T v = T(0);
    if (r < n) {
      if (j <= r) v = staged_at(mat, pitch, upper, r, j);
    } else if (j == r) {
      v = T(1);  // identity padding past n
    }
    a[j] = v;
  }
  __syncthreads();  // every row is read before L entries overwrite the stage
  int info = 0;
  if (w == 0) wide_chain<T, NW, kSplit, 0>(a, r, n, mat, pitch, upper, colbuf, info, rhs);
  if constexpr (NW > 1) {
    if (w == 1) wide_chain<T, NW, kSplit, 1>(a, r, n, mat, pitch, upper, colbuf, info, rhs);
  }
  if constexpr (NW > 2) {
    if (w == 2) wide_chain<T, NW, kSplit, 2>(a, r, n, mat, pitch, upper, colbuf, info, rhs);
  }
  if constexpr (NW > 3) {
    if (w == 3) wide_chain<T, NW, kSplit, 3>(a, r, n, mat, pitch, upper, colbuf, info, rhs);
  }
  if constexpr (!std::is_same_v<Rhs, WideNoRhs>) *z_out = rhs.z;
  return info;
}

// The copy-out's entry (i, j) of the factor from the raw stage, as xPOTF2 scales: L(i, j)
// = a_ij * (1 / sqrt(d_j)) below the diagonal, sqrt(d_i) on it (U(i, j) = L(j, i) for
// upper factors). Scaling in the copy-out, not in place before it, saves a pass over the
// stage; the in-place pass (divergent row loops right before the block barrier) also drew
// racecheck hazards against the copy-out in float32 with four warps. The reciprocals are
// kept by residue: the 16-byte copy-out reads entries j = V t + w (lane t, w < V) of a
// row, and index j at w (32 NW / V) + t puts the lanes' reads of one w on distinct banks.
template <typename T, int NW>
struct WideFactorOut {
  static constexpr int V = 16 / sizeof(T), kSpan = 32 * NW / V;
  T* rinv;   // 1 / sqrt(d_k) at rinv_at(k)
  T* sdiag;  // sqrt(d_k)
  bool upper;
  __device__ __forceinline__ static int rinv_at(int k) { return (k % V) * kSpan + k / V; }
  __device__ __forceinline__ T operator()(int i, int j, T v) const {
    return i == j ? sdiag[i] : v * rinv[rinv_at(upper ? i : j)];
  }
};

// Blocks per SM the kernel is built for: the stage (n x (n | 1)) and registers allow
// six float64 64 x 64 matrices or three float32 128 x 128 ones on an H100.
template <int NW>
constexpr int wide_min_blocks() {
  return NW == 2 ? 6 : NW == 3 ? 4 : 3;
}

// Writes L from the raw stage that wide_potrf left (called by the whole block after a
// barrier that follows the steps); kFixed as in wide_factor_matrix.
template <typename T, int NW, bool kFixed>
__device__ __forceinline__ void wide_store_factor(T* scratch, T* mat, T* l, const StageLayout& lay,
                                                  bool upper, bool vec) {
  T* const outbuf = scratch + wide_colbuf<NW>();
  const WideFactorOut<T, NW> out{outbuf, outbuf + 32 * NW, upper};
  const int r = threadIdx.x, nn = lay.n * lay.n;
  if (r < lay.n) {
    const T s = sqrt(staged_at(mat, lay.pitch, upper, r, r));
    out.sdiag[r] = s;
    out.rinv[out.rinv_at(r)] = T(1) / s;
  }
  __syncthreads();
  if constexpr (kFixed) {
    stage_out_exact<T, 32 * NW>(l, mat, nn, lay, vec, upper, out);
  } else {
    stage_out(l, mat, nn, lay, vec, upper, out);
  }
}

// Factors the n x n matrix at a (lay: its stage layout) into l with the whole block
// and stores its info at info[b]. vec: 16-byte staging copies (stage_in). kFixed (the
// fixed-size kernel): the copies of order 32 NW as constants when n is that, and the
// phases split (wide_phase); the list kernel, whose matrices have many orders, keeps one
// copy loop and whole phases (each cost it spilled registers).
template <typename T, int NW, bool kFixed>
__device__ __forceinline__ void wide_factor_matrix(T* scratch, T* mat, const T* a, T* l,
                                                   const StageLayout& lay, bool upper, bool vec,
                                                   int* info, int64_t b) {
  const int nn = lay.n * lay.n;
  if constexpr (kFixed) {
    stage_in_exact<T, 16, 32 * NW>(mat, a, nn, lay, vec, upper);
  } else {
    stage_in<T, 16>(mat, a, nn, lay, vec, upper);
  }
  __syncthreads();
  const int inf = wide_potrf<T, NW, kFixed>(scratch, mat, lay.pitch, lay.n, upper);
  __syncthreads();  // every step is done: the pivots are staged
  if (threadIdx.x == 32 * (NW - 1)) info[b] = inf;
  wide_store_factor<T, NW, kFixed>(scratch, mat, l, lay, upper, vec);
}

// One matrix per block of 32 NW threads; the stage layout of the warp family (odd
// pitch: the lanes' row and column reads hit distinct banks).
template <typename T, int NW>
__global__ void __launch_bounds__(32 * NW, (wide_min_blocks<NW>()))
    potrf_wide_kernel(const T* __restrict__ A, T* __restrict__ L, int* __restrict__ info,
                      StageLayout lay, bool upper, bool vec) {
  extern __shared__ __align__(16) unsigned char wide_smem_raw[];
  T* const scratch = reinterpret_cast<T*>(wide_smem_raw);
  T* const mat = scratch + wide_scratch<NW>();
  const int64_t b = blockIdx.x;
  const int nn = lay.n * lay.n;
  wide_factor_matrix<T, NW, true>(scratch, mat, A + b * nn, L + b * nn, lay, upper, vec, info, b);
}

// Ragged batches: block i factors matrix i of group g of a SizeGroups list (ragged_bins.h:
// all with 32 (NW - 1) < n <= 32 NW), staged with its own layout; the grid covers the
// whole batch, and blocks past the group's end leave at once. (A persistent grid
// looping over the group spilled 1 KB of registers in float64.)
template <typename T, int NW>
__global__ void __launch_bounds__(32 * NW, (wide_min_blocks<NW>()))
    potrf_wide_list_kernel(const T* __restrict__ A, T* __restrict__ L, int* __restrict__ info,
                           const int64_t* __restrict__ offsets, const int* __restrict__ sizes,
                           const int* __restrict__ counts, const int* __restrict__ list, int g,
                           bool upper) {
  extern __shared__ __align__(16) unsigned char wide_smem_raw[];
  T* const scratch = reinterpret_cast<T*>(wide_smem_raw);
  T* const mat = scratch + wide_scratch<NW>();
  int begin, end;
  group_range(counts, g, g, begin, end);
  const int i = begin + int(blockIdx.x);
  if (i >= end) return;
  const int b = list[i];
  const int64_t o = offsets[b];
  const StageLayout lay = make_stage_layout<32>(sizes[b]);
  const uintptr_t ends = reinterpret_cast<uintptr_t>(A + o) | reinterpret_cast<uintptr_t>(L + o);
  const bool vec = (lay.n * lay.n) % (16 / sizeof(T)) == 0 && ends % 16 == 0;
  wide_factor_matrix<T, NW, false>(scratch, mat, A + o, L + o, lay, upper, vec, info, b);
}

}  // namespace cuda
}  // namespace batchchol
