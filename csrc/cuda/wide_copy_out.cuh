// Copy-out of the wide family's factor (wide_chol.cuh leaves the raw entries a_rj, with
// the pivots d_j on the diagonal, in the stage): after the steps by the whole block
// (wide_store_factor), or band by band while the steps go on (WideBandOut).
#pragma once

#include "cuda/stage_copy.cuh"
#include "cuda/wide_chol.cuh"
#include "cuda/wide_stage.cuh"

namespace batchchol {
namespace cuda {

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
  // Row r's pivot from the raw stage: sqrt(d_r) and its reciprocal.
  __device__ __forceinline__ void set_pivot(T* mat, int pitch, int r) const {
    const T s = sqrt(staged_at(mat, pitch, upper, r, r));
    sdiag[r] = s;
    rinv[rinv_at(r)] = T(1) / s;
  }
  __device__ __forceinline__ T operator()(int i, int j, T v) const {
    return i == j ? sdiag[i] : v * rinv[rinv_at(upper ? i : j)];
  }
};

// The fixed-size kernel's copy-out by bands, overlapping the steps: a warp whose phases
// are done writes its band of the factor (lower: L's rows 32 w .. 32 w + 31; upper: those
// columns of U, the same stage entries) while the later warps go on with theirs, and the
// last warp's band follows the block barrier, written by all warps. Each warp sets its
// rows' sqrt(d_r) and 1 / sqrt(d_r) at the end of its last phase, before that phase's
// barrier (or the block's), so every band finds the pivots of its columns; the entries
// are WideFactorOut's. The steps write only rows (lower) or columns (upper) of later
// warps into the stage, never a finished band. Only the potrf kernel uses it: the fused
// posv (wide_solve.cuh) keeps its right-hand side's buffer where rinv lives during the
// steps, so it copies its factor out after them (WideNoOut).
template <typename T, int NW>
struct WideBandOut {
  WideFactorOut<T, NW> f;
  const T* mat;
  T* l;
  int pitch, n;
  __device__ __forceinline__ void pivots(int r) const {
    if (r < n) f.set_pivot(const_cast<T*>(mat), pitch, r);
  }
  // The band [c0, c0 + 32) (clipped to n), written by warp w0 of nw warps.
  __device__ __forceinline__ void band(int c0, int w0, int nw) const {
    const int lane = threadIdx.x % 32, c1 = c0 + 32 < n ? c0 + 32 : n;
    if (!f.upper) {
      for (int i = c0 + w0; i < c1; i += nw) {
#pragma unroll
        for (int u = 0; u < NW; ++u) {
          const int j = lane + 32 * u;
          if (j < n) l[i * n + j] = j <= i ? f(i, j, mat[i * pitch + j]) : T(0);
        }
      }
    } else {
      const int j = c0 + lane;
      if (j < c1) {
        for (int i = w0; i < n; i += nw) l[i * n + j] = j >= i ? f(i, j, mat[i * pitch + j]) : T(0);
      }
    }
  }
};

// Whether the fixed-size kernel copies its factor out by bands (WideBandOut). H100, 10,000
// matrices, against the copy-out after the steps, min of 3 interleaved rounds, same bits
// (results/h100-2026-11-25-wide-bands-ab.txt): float64 n = 64 0.394 -> 0.364 ms (upper
// 0.393 -> 0.365), 48 0.355 -> 0.319, 33 0.267 -> 0.272; float32 n = 96 0.582 -> 0.549, 72
// even. Four warps (float32 97..128) keep the copy-out after the steps: n = 128 even in
// lower, 1.105 -> 1.252 in upper (each warp's 4-byte column-band stores), and the bands
// made ptxas spill.
template <int NW>
constexpr bool wide_band_out() {
  return NW < 4;
}

// Writes L from the raw stage that wide_potrf left (called by the whole block after a
// barrier that follows the steps); kFixed as in wide_factor_matrix.
template <typename T, int NW, bool kFixed>
__device__ __forceinline__ void wide_store_factor(T* scratch, T* mat, T* l, const StageLayout& lay,
                                                  bool upper, bool vec) {
  T* const outbuf = scratch + wide_colbuf<NW>();
  const WideFactorOut<T, NW> out{outbuf, outbuf + 32 * NW, upper};
  const int r = threadIdx.x, nn = lay.n * lay.n;
  if (r < lay.n) out.set_pivot(mat, lay.pitch, r);
  __syncthreads();
  if constexpr (kFixed) {
    wide_stage_out_exact<T, 32 * NW>(l, mat, nn, lay, vec, upper, out);
  } else {
    wide_stage_out(l, mat, nn, lay, vec, upper, out);
  }
}

}  // namespace cuda
}  // namespace batchchol
