// Left-looking blocked Cholesky, one thread block per matrix (papers 002 "non-resident"
// and 003/004 "fused"): for each 32-wide panel, the block loads the panel of A, applies
// the pending update from the panels to its left (streamed back from the output buffer,
// where this block wrote them: L2 hits), factors the diagonal block and solves the rows
// below on chip, and writes the panel once. A is read once and L written once, against
// one pass of the trailing matrix per panel for the right-looking multi-launch family.
//
// A launch covers the panels [panel_begin, panel_end) of every matrix: one launch for
// all of them ("loop-inclusive") or one launch per panel ("loop-exclusive", which sizes
// the shared memory of each launch to the rows that are left).
//
// Working matrix W (lower): W = A for a lower factor, W = A^T for an upper one; element
// (i, j) of W, and of its factor in L, is at i * si + j * sj with (si, sj) = (n, 1) or
// (1, n). Copies pick the thread order that makes consecutive threads read consecutive
// addresses in either case.
#pragma once

#include "cuda/batch_layout.cuh"
#include "cuda/potrf_block.cuh"

namespace batchchol {
namespace cuda {

constexpr int kLeftThreads = 256;
constexpr int kLeftPassRows = 128;      // rows of the update per pass: 32 row groups x 4
constexpr int kLeftPitch = kPanel + 1;  // odd: a column of the stage is conflict-free

// Rows of the stage buffer for a panel of `rows` rows: whole passes (the update reads
// up to the end of its last pass).
__host__ __device__ inline int left_stage_rows(int rows) {
  return (rows + kLeftPassRows - 1) / kLeftPassRows * kLeftPassRows;
}

// S[i][kk] = W(r0 + i, c0 + kk) for i < rows, kk < cols (0 for kk >= cols); with
// `diag`, entries above the diagonal of the first 32 rows are 0 and never read.
// src is not __restrict__: the block re-reads panels of L that it wrote in this launch,
// which the non-coherent read-only path could serve stale.
template <typename T>
__device__ __forceinline__ void left_load_stage(T* __restrict__ S, const T* src,
                                                int n, bool upper, int r0, int c0, int rows,
                                                int cols, bool diag) {
  if (upper) {  // W(i, j) at i + j n: consecutive threads take consecutive rows
    for (int i = threadIdx.x; i < rows; i += blockDim.x) {
      const T* p = src + (r0 + i) + int64_t(c0) * n;
#pragma unroll 8
      for (int kk = 0; kk < kPanel; ++kk) {
        const bool ok = kk < cols && (!diag || kk <= i);
        S[i * kLeftPitch + kk] = ok ? p[int64_t(kk) * n] : T(0);
      }
    }
  } else {  // W(i, j) at i n + j: a warp reads one row segment of 32
    const int total = rows * kPanel;
#pragma unroll 4
    for (int e = threadIdx.x; e < total; e += blockDim.x) {
      const int i = e >> 5, kk = e & 31;
      const bool ok = kk < cols && (!diag || kk <= i);
      S[i * kLeftPitch + kk] = ok ? src[int64_t(r0 + i) * n + c0 + kk] : T(0);
    }
  }
}

// Writes columns [k0, k0 + cols) of the factor: rows above the panel and the upper part
// of the diagonal block as 0, the panel rows from the stage.
template <typename T>
__device__ __forceinline__ void left_store_panel(T* __restrict__ dst, const T* __restrict__ S,
                                                 int n, bool upper, int k0, int cols) {
  if (upper) {
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
      T* p = dst + i + int64_t(k0) * n;
      for (int jj = 0; jj < cols; ++jj)
        p[int64_t(jj) * n] = i >= k0 + jj ? S[(i - k0) * kLeftPitch + jj] : T(0);
    }
  } else {
    const int total = n * kPanel;
    for (int e = threadIdx.x; e < total; e += blockDim.x) {
      const int i = e >> 5, jj = e & 31;
      if (jj < cols)
        dst[int64_t(i) * n + k0 + jj] = i >= k0 + jj ? S[(i - k0) * kLeftPitch + jj] : T(0);
    }
  }
}

// Factors the nb x nb (nb <= 32) lower block at the top of S with one warp (lane r:
// row r, rows past nb an identity) and stores L there; inv_d[k] = 1 / L(k, k).
// A run-time loop over the columns keeps this small (the fully unrolled version is
// ~5,000 instructions): after step k each row is shifted left by one entry, as part
// of the update, so that column k + 1 is always in a[0] and every index is constant.
template <typename T>
__device__ __forceinline__ int left_factor_diag(T* S, real_t<T>* inv_d, int nb) {
  using R = real_t<T>;
  const int lane = threadIdx.x & 31;
  T a[kPanel];
#pragma unroll
  for (int j = 0; j < kPanel; ++j)
    a[j] = lane < nb ? (j <= lane ? S[lane * kLeftPitch + j] : T(0)) : T(j == lane ? 1 : 0);
  int info = 0;
#pragma unroll 1
  for (int k = 0; k < nb; ++k) {
    const R d = real_(shfl(a[0], k));
    if (!pivot_ok(d) && info == 0) info = k + 1;
    const R s = sqrt(d);
    const R inv = R(1) / s;
    const T lk = lane == k ? T(s) : a[0] * inv;  // L(lane, k) for lane >= k
    if (lane >= k && lane < nb) S[lane * kLeftPitch + k] = lk;
    if (lane == 0) inv_d[k] = inv;
#pragma unroll
    for (int jj = 1; jj < kPanel; ++jj) a[jj - 1] = a[jj] - mul_conj(lk, shfl(lk, (k + jj) & 31));
  }
  return info;
}

// Rows [row_begin, row_end) of S below the factored diagonal block: x L11^H = a, one
// row per thread in registers, L11 read as broadcasts, reciprocals from inv_d.
template <typename T>
__device__ __forceinline__ void left_solve_rows(T* S, const real_t<T>* inv_d, int row_begin,
                                                int row_end) {
  for (int i = row_begin + threadIdx.x; i < row_end; i += blockDim.x) {
    T* row = S + i * kLeftPitch;
    T x[kPanel];
#pragma unroll
    for (int j = 0; j < kPanel; ++j) x[j] = row[j];
#pragma unroll
    for (int j = 0; j < kPanel; ++j) {
      const T* lj = S + j * kLeftPitch;
      T acc = x[j];
#pragma unroll
      for (int p = 0; p < j; ++p) acc -= mul_conj(x[p], lj[p]);
      x[j] = acc * inv_d[j];
    }
#pragma unroll
    for (int j = 0; j < kPanel; ++j) row[j] = x[j];
  }
}

template <typename T, int MP, typename Layout>
__global__ void __launch_bounds__(kLeftThreads)
    potrf_left_kernel(const T* __restrict__ A, T* L, int* __restrict__ info,
                      Layout lay, int panel_begin, int panel_end, bool upper) {
  extern __shared__ __align__(16) unsigned char left_smem_raw[];
  __shared__ int info_s;
  __shared__ real_t<T> inv_d[kPanel];
  T* S = reinterpret_cast<T*>(left_smem_raw);
  const int64_t b = blockIdx.x;
  if (!lay.mine(b)) return;
  if (!lay.valid(b)) {  // uniform over the block
    if (threadIdx.x == 0 && panel_begin == 0) info[b] = lay.initial_info(b);
    return;
  }
  const int n = lay.size(b);
  const T* a = A + lay.origin(b);
  T* l = L + lay.origin(b);
  if (threadIdx.x == 0) info_s = panel_begin == 0 ? 0 : info[b];
  // Thread (rg, cg) owns rows p * 128 + 4 rg + r and panel columns 4 cg + c.
  const int cg = threadIdx.x & 7, rg = threadIdx.x >> 3;
  const int last = min(panel_end, (n + kPanel - 1) / kPanel);
  for (int pk = panel_begin; pk < last; ++pk) {
    const int k0 = pk * kPanel, rows = n - k0, cols = min(kPanel, rows);
    T acc[MP][4][4];
    __syncthreads();  // the previous panel's stores have read S
    left_load_stage(S, a, n, upper, k0, k0, rows, cols, /*diag=*/true);
    __syncthreads();
    // Passes past the panel's rows stay out of S (a loop-exclusive launch sizes S to them).
#pragma unroll
    for (int p = 0; p < MP; ++p)
      if (p * kLeftPassRows < rows)
#pragma unroll
        for (int r = 0; r < 4; ++r)
#pragma unroll
          for (int c = 0; c < 4; ++c)
            acc[p][r][c] = S[(p * kLeftPassRows + 4 * rg + r) * kLeftPitch + 4 * cg + c];
    // W(k0:, k0:k0+32) -= L(k0:, c0:c0+32) L(k0:k0+32, c0:c0+32)^H for each panel c0 < k0.
    for (int c0 = 0; c0 < k0; c0 += kPanel) {
      __syncthreads();
      left_load_stage(S, l, n, upper, k0, c0, rows, kPanel, /*diag=*/false);
      __syncthreads();
#pragma unroll 2
      for (int kk = 0; kk < kPanel; ++kk) {
        T bv[4];
#pragma unroll
        for (int c = 0; c < 4; ++c) bv[c] = conj_(S[(4 * cg + c) * kLeftPitch + kk]);
#pragma unroll
        for (int p = 0; p < MP; ++p) {
          if (p * kLeftPassRows < rows) {
            T av[4];
#pragma unroll
            for (int r = 0; r < 4; ++r) av[r] = S[(p * kLeftPassRows + 4 * rg + r) * kLeftPitch + kk];
#pragma unroll
            for (int r = 0; r < 4; ++r)
#pragma unroll
              for (int c = 0; c < 4; ++c) acc[p][r][c] -= av[r] * bv[c];
          }
        }
      }
    }
    __syncthreads();
#pragma unroll
    for (int p = 0; p < MP; ++p)
      if (p * kLeftPassRows < rows)
#pragma unroll
        for (int r = 0; r < 4; ++r)
#pragma unroll
          for (int c = 0; c < 4; ++c)
            S[(p * kLeftPassRows + 4 * rg + r) * kLeftPitch + 4 * cg + c] = acc[p][r][c];
    __syncthreads();
    if (threadIdx.x < 32) {
      const int inf = left_factor_diag(S, inv_d, cols);
      if (threadIdx.x == 0 && inf != 0 && info_s == 0) info_s = k0 + inf;
    }
    __syncthreads();
    if (rows > kPanel) {
      left_solve_rows(S, inv_d, kPanel, rows);
      __syncthreads();
    }
    left_store_panel(l, S, n, upper, k0, cols);
  }
  if (threadIdx.x == 0) info[b] = info_s;
}

}  // namespace cuda
}  // namespace batchchol
