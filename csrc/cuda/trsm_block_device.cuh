// Device routines of the block-per-system triangular solves: orders up to 128 with
// several right-hand sides, real types.
//
// The warp-per-system kernels (trsm_warp_solve.cuh) re-stage 32 x 32 tiles of the matrix
// for every row block of every pass, one warp per system and column group: at
// n = 64 with 16 columns ncu found them at 12 warps per SM issuing 0.3 instructions
// per cycle, bound by L1 traffic (results/h100-2026-11-22-ncu-potrs-f64-64-16.txt).
// The column-per-lane kernels (trsm_cols_device.cuh) hold a whole column per lane,
// which stops at n = 32 (registers). Here one block owns one system: it copies the
// referenced triangle into shared memory once, PACKED (half of the square, so twice
// the systems per SM), and potrs runs both passes from that copy. G lanes share each
// right-hand-side column (N / 16 or N / 8: trsm_block_kernels.cuh); lane g owns rows
// g, g + G, g + 2G, ... (interleaved, so every lane has rows below the current step
// until the end), of C columns (1, or 2 where that pays: trsm_block_kernels.cuh).
// Step j: the owner of row j scales it, one shuffle per column among the G lanes
// hands x_j to all of them, and each updates its rows past j with one shared-memory
// read per row for its C columns (a broadcast: the lanes of every column read the same
// entry). The steps are unrolled for the padded order N, so each address is a per-lane
// base plus a constant. (A rolled variant, x rotating by one slot per row group to keep its
// indices constant, was 1.3-2x slower at every measured size, N = 128 included, where
// the unrolled potrs is ~8,000 instructions: ncu showed few instruction-fetch stalls.)
//
// T is the lower triangular matrix of the solve, read from the stored triangle of A
// as in the column-per-lane kernels: T(p, q) = A[p][q] (Orient 0, A's lower triangle)
// or A[q][p] (Orient 1, its upper triangle). block_forward solves T x = b,
// block_backward T^T x = b. The packed copy keeps A's stored rows:
//   Orient 0: A[r][c], c <= r, at lo_row(r) + c;   Orient 1: c >= r, at up_row(r) + c - r,
// followed by N reciprocals of the diagonal. Rows n..N-1 are never written: their
// steps are skipped, and the garbage they accumulate is never read back or stored.
#pragma once

#include "cuda/async_copy.cuh"
#include "cuda/packed_triangle.cuh"
#include "cuda/scalar_ops.cuh"

namespace batchchol {
namespace cuda {

// Packed triangle plus the reciprocals of the diagonal.
template <int N>
constexpr int block_tri_elems() {
  return N * (N + 1) / 2;
}
template <int N>
constexpr int block_smem_elems() {
  return block_tri_elems<N>() + N;
}

// Issues the asynchronous copy of A's stored triangle (rows r < n of the n x n
// row-major matrix at a): warp w copies rows w, w + warps, ..., lanes along the row.
// The diagonal is skipped when it is unit (it is never read then).
template <typename T, int N, bool Orient>
__device__ __forceinline__ void block_issue_triangle(const T* __restrict__ a, int n, bool unit,
                                                     T* S, int warp, int warps, int lane) {
  for (int r = warp; r < n; r += warps) {
    const int c_begin = Orient ? r : 0;
    const int c_end = Orient ? n : r + 1;
    const T* src = a + int64_t(r) * n;
    T* dst = S + (Orient ? up_row<N>(r) - r : lo_row(r));
    for (int c = c_begin + lane; c < c_end; c += 32) {
      if (!(unit && c == r)) cp_async_elem(dst + c, src + c);
    }
  }
}

// After the copies have landed and the block has synchronized.
template <typename T, int N, bool Orient>
__device__ __forceinline__ void block_invert_diagonal(T* S, int n, bool unit) {
  for (int j = threadIdx.x; j < N; j += blockDim.x) {
    const int d = Orient ? up_row<N>(j) : lo_row(j) + j;
    S[block_tri_elems<N>() + j] = (j < n && !unit) ? T(1) / S[d] : T(1);
  }
}

// Per-lane row bases of the pass that reads T along this lane's rows: T(p, j) =
// S[lo_row(p) + j] forward with Orient 0, T(j, p) = S[up_row(p) - p + j] backward with
// Orient 1. The other two cases read S[constant + g].
template <int N, int G, bool Orient>
__device__ __forceinline__ void block_row_bases(int g, int (&rb)[N / G]) {
#pragma unroll
  for (int m = 0; m < N / G; ++m) {
    const int p = m * G + g;
    rb[m] = Orient ? up_row<N>(p) - p : lo_row(p);
  }
}

// One step's pivot row: lane g0 of each column group holds it in xm; it is scaled by its
// diagonal's reciprocal, kept by its owner and handed to the group's G lanes.
template <int G, typename T>
__device__ __forceinline__ T block_solve_row(T& xm, T inv_d, int g, int g0) {
  const T xj = shfl(xm * inv_d, g0, G);
  if (g == g0) xm = xj;
  return xj;
}

// T x = b for this lane's rows x[c][m] = row m G + g of its column c, steps j < n.
template <typename T, int N, int G, bool Orient, int C>
__device__ __forceinline__ void block_forward(const T* S, const int (&rb)[N / G],
                                              T (&x)[C][N / G], int g, int n) {
  constexpr int R = N / G;
  const T* inv = S + block_tri_elems<N>();
  const T* Sg = S + g;
  // Steps as (row group m0, owner g0): two unrolled levels, which the compiler
  // unrolls completely at N = 128 where one loop of N steps stayed rolled.
#pragma unroll
  for (int m0 = 0; m0 < R; ++m0) {
#pragma unroll
    for (int g0 = 0; g0 < G; ++g0) {
      const int j = m0 * G + g0;
      if (j >= n) return;  // uniform over the block
      T xj[C];
#pragma unroll
      for (int c = 0; c < C; ++c) xj[c] = block_solve_row<G>(x[c][m0], inv[j], g, g0);
#pragma unroll
      for (int m = m0; m < R; ++m) {
        const T t = Orient ? Sg[up_row<N>(j) - j + m * G] : S[rb[m] + j];
        // Rows at or above j in the owner's own group keep their values.
#pragma unroll
        for (int c = 0; c < C; ++c)
          if (m > m0 || g > g0) x[c][m] -= t * xj[c];
      }
    }
  }
}

// T^T x = b, steps from n - 1 down to 0.
template <typename T, int N, int G, bool Orient, int C>
__device__ __forceinline__ void block_backward(const T* S, const int (&rb)[N / G],
                                               T (&x)[C][N / G], int g, int n) {
  constexpr int R = N / G;
  const T* inv = S + block_tri_elems<N>();
  const T* Sg = S + g;
#pragma unroll
  for (int m0 = R - 1; m0 >= 0; --m0) {
#pragma unroll
    for (int g0 = G - 1; g0 >= 0; --g0) {
      const int j = m0 * G + g0;
      if (j >= n) continue;
      T xj[C];
#pragma unroll
      for (int c = 0; c < C; ++c) xj[c] = block_solve_row<G>(x[c][m0], inv[j], g, g0);
#pragma unroll
      for (int m = 0; m <= m0; ++m) {
        const T t = Orient ? S[rb[m] + j] : Sg[lo_row(j) + m * G];
#pragma unroll
        for (int c = 0; c < C; ++c)
          if (m < m0 || g < g0) x[c][m] -= t * xj[c];
      }
    }
  }
}

}  // namespace cuda
}  // namespace batchchol
