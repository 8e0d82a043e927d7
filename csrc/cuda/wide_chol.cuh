// potrf for orders 33..32 NW with NW warps per matrix and one row per lane (the "wide"
// family): float64 n <= 64 (NW = 2), float32 n <= 128 (NW = 2..4). The fixed-size
// dispatch gives it no order (warp64 runs float32 33..64 and float64 33..48, tile2 float64
// 49..64, tile4 float32 65..160) unless forced or where the tiles do not fit the device's
// shared memory; the ragged one, float64 and float32 33..64 only with
// BATCHCHOL_RAGGED_WARP64=0 (warp64_ragged.cuh serves them otherwise); posv, its fused
// kernel at float64 33..64.
//
// Lane q of warp w holds row r = 32 w + q of the lower working matrix in a[32 NW]
// registers. Each step k shifts the rows left by one entry while updating them, so
// column k is always a[0] and every register index is a compile-time constant (the
// scheme of warp64_chol.cuh, which holds two rows per lane: 64 entries wide they take
// 192 registers in float64, whose fixed-size warp64 rows stop at 48; the ragged warp64
// kernel runs them at 64, eight warps per SM).
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

// What a warp does with its rows once they are final (WideBandOut, below); WideNoOut:
// nothing, the whole factor is copied out after the steps.
struct WideNoOut {
  __device__ __forceinline__ void pivots(int) const {}
  __device__ __forceinline__ void band(int, int, int) const {}
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
template <typename T, int NW, int P, int W, bool kSplit, bool kLast, typename Rhs, typename Out>
__device__ __forceinline__ void wide_phase(T (&a)[32 * NW], int r, int n, T* mat, int pitch,
                                           bool upper, T* colbuf, int& info, Rhs& rhs,
                                           const Out& out) {
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
  // The warp's last phase: its rows' pivots are final, and the barrier below hands
  // their copy-out factors to the warps that stay (their bands need them).
  if constexpr (kLast) out.pivots(r);
  // The warps leaving after this phase may still read the buffer half of its last
  // column, which the next phase rewrites two columns later.
  if (P < NW - 1) wide_sync<NW>(P);
}

// The phases 0..WARP of warp WARP. Its rows end at column 32 WARP + 31, so phase P
// updates 32 (WARP + 1 - P) entries. Each warp runs its own copy of the loops (the
// branch is warp-uniform; the named barriers count arrivals, whatever the call site).
// A warp other than the last copies its band of the factor out as soon as its phases
// are done, while the later warps go on (out.band).
template <typename T, int NW, bool kSplit, int WARP, int P = 0, typename Rhs, typename Out>
__device__ __forceinline__ void wide_chain(T (&a)[32 * NW], int r, int n, T* mat, int pitch,
                                           bool upper, T* colbuf, int& info, Rhs& rhs,
                                           const Out& out) {
  wide_phase<T, NW, P, 32 * (WARP + 1 - P), kSplit, P == WARP>(a, r, n, mat, pitch, upper,
                                                               colbuf, info, rhs, out);
  if constexpr (P < WARP) {
    wide_chain<T, NW, kSplit, WARP, P + 1>(a, r, n, mat, pitch, upper, colbuf, info, rhs, out);
  } else if constexpr (WARP < NW - 1) {
    out.band(32 * WARP, 0, 1);
  }
}

// Row r of the lower working matrix into a (identity rows past n). The entries right of
// the diagonal come as the stage holds them (the other triangle's data, whatever it is):
// a row's entries j > r are updated along but never published or staged (wide_steps
// takes a[0] only where r >= k), so they need no zeros, and the loads need no
// per-entry branch on the lane's row: ~130 instructions per lane at n = 32 NW against
// ~900 with it. The row / column choice and the order test are uniform over the block.
// H100, 10,000 matrices, min of 3 interleaved rounds, same bits
// (results/h100-2026-11-25-wide-init-ab.txt): float32 n = 128 1.147 -> 1.094 ms, upper
// 1.219 -> 1.093, 96 / 72 even; float64 n = 64 upper 0.390 -> 0.378, lower 0.374 ->
// 0.380, 48 0.333 -> 0.341 (float64 is bound by its steps' chain, not their issue).
template <typename T, int NW>
__device__ __forceinline__ void wide_load_row(T (&a)[32 * NW], const T* mat, int pitch, int n,
                                              bool upper, int r) {
  constexpr int N = 32 * NW;
  if (r >= n) {
#pragma unroll
    for (int j = 0; j < N; ++j) a[j] = T(j == r ? 1 : 0);
    return;
  }
  // Row r of the working matrix: stage row r (lower) or stage column r (upper).
  const T* p = upper ? mat + r : mat + size_t(r) * pitch;
  const int step = upper ? pitch : 1;
  if (n == N) {
#pragma unroll
    for (int j = 0; j < N; ++j) a[j] = p[j * step];
  } else {
#pragma unroll
    for (int j = 0; j < N; ++j) a[j] = j < n ? p[j * step] : T(0);
  }
}

// Factors the staged n x n matrix (lower working layout through staged_at) in place,
// eliminating rhs along (WideRhs, or WideNoRhs). Returns info on the lanes of the last
// warp (the others stop at their phase).
template <typename T, int NW, bool kSplit, typename Rhs = WideNoRhs, typename Out = WideNoOut>
__device__ __forceinline__ int wide_potrf(T* colbuf, T* mat, int pitch, int n, bool upper,
                                          Rhs rhs = {}, T* z_out = nullptr, Out out = {}) {
  const int w = threadIdx.x / 32;
  const int r = threadIdx.x;
  T a[32 * NW];
  wide_load_row<T, NW>(a, mat, pitch, n, upper, r);
  __syncthreads();  // every row is read before L entries overwrite the stage
  int info = 0;
  if (w == 0) wide_chain<T, NW, kSplit, 0>(a, r, n, mat, pitch, upper, colbuf, info, rhs, out);
  if constexpr (NW > 1) {
    if (w == 1) wide_chain<T, NW, kSplit, 1>(a, r, n, mat, pitch, upper, colbuf, info, rhs, out);
  }
  if constexpr (NW > 2) {
    if (w == 2) wide_chain<T, NW, kSplit, 2>(a, r, n, mat, pitch, upper, colbuf, info, rhs, out);
  }
  if constexpr (NW > 3) {
    if (w == 3) wide_chain<T, NW, kSplit, 3>(a, r, n, mat, pitch, upper, colbuf, info, rhs, out);
  }
  if constexpr (!std::is_same_v<Rhs, WideNoRhs>) *z_out = rhs.z;
  return info;
}

}  // namespace cuda
}  // namespace batchchol
