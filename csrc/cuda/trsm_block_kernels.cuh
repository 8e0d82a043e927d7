// Kernel template and host launcher of the block-per-system triangular solves
// (trsm_block_device.cuh). Included by one instantiation unit per real dtype
// (trsm_block_f32.cu, trsm_block_f64.cu), which defines the entry points of
// trsm_block_launch.h.
//
// One block per system, G lanes per right-hand-side column, C columns per lane. A
// system with more columns than the block holds solves them group after group from the
// same staged triangle. The triangle's copy is in flight while the first group of
// columns is loaded into registers.
#pragma once

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

#include <climits>
#include <type_traits>

#include "cuda/launch_utils.h"
#include "cuda/trsm_block_device.cuh"
#include "cuda/trsm_block_launch.h"
#include "cuda/trsm_device.cuh"
#include "cuda/trsm_triangle_plan.h"

namespace batchchol {
namespace cuda {

// Lanes per column: N / 16 (16 rows per lane), or N / 8 up to N = 64 when the system
// has at most 8 columns, which keeps 32-64 threads on a system (H100, 2026-11-24,
// results/h100-2026-11-24-block-solves-ab.txt: potrs float64 n = 64, 8 columns 0.222 ->
// 0.196 ms, 16 columns 0.280 with N / 16 against 0.325). At N = 128, 16 lanes of 8 rows
// lost to 8 of 16 from 16 columns on (1.25 vs 1.12 ms for potrs float64).
template <int N>
constexpr int block_row_lanes() {
  return N == 96 ? 8 : N / 16;  // shuffles need a power of two: 8 lanes of 12 rows at 96
}

// Up to 32 columns at once: 2 N threads (N / 8 lanes serve at most 8 columns: N threads).
// The register cap (~80 below N = 128) keeps the blocks that shared memory allows
// resident (float64 N = 64, 16 columns: 12 blocks of 64 threads, ncu); at N = 128 shared
// memory allows 3 float64 blocks, and 128 registers leave the solves unspilled.
template <int N>
constexpr int block_max_threads() {
  return N >= 128 ? 256 : 2 * N;
}
template <int N>
constexpr int block_min_blocks() {
  return N >= 128 ? 2 : 768 / block_max_threads<N>();
}

struct BlockParams {
  int64_t a_stride;  // elements between consecutive matrices (0: one shared matrix)
  int64_t b_stride;  // elements between consecutive B (and X)
  int64_t rs, cs;    // element (row i, column c) of a B or X at i * rs + c * cs
  int k;             // right-hand sides
  int n;
  int col_lanes;     // columns solved at once; the block has col_lanes * G threads
  bool unit;
};

template <typename T, int N, int G, int Solve, bool Orient, int C>
__global__ void __launch_bounds__(block_max_threads<N>(), block_min_blocks<N>())
    trsm_block_kernel(const T* __restrict__ A, const T* B, T* X, BlockParams p) {
  constexpr int R = N / G;
  extern __shared__ __align__(16) unsigned char block_smem_raw[];
  T* const S = reinterpret_cast<T*>(block_smem_raw);
  const int g = threadIdx.x % G;
  const int cl = threadIdx.x / G;
  const int n = p.n;
  const int64_t sys = blockIdx.x;
  block_issue_triangle<T, N, Orient>(A + sys * p.a_stride, n, p.unit, S, threadIdx.x >> 5,
                                     blockDim.x >> 5, threadIdx.x & 31);
  cp_async_commit();
  int rb[R];
  block_row_bases<N, G, Orient>(g, rb);

  bool staged = false;
#pragma unroll 1
  for (int c0 = 0; c0 < p.k; c0 += p.col_lanes * C) {
    bool active[C];
    int64_t off[C];
    T x[C][R];
#pragma unroll
    for (int c = 0; c < C; ++c) {
      // Lane cl's columns are col_lanes apart, so that neighbouring lanes read
      // neighbouring columns.
      const int col = c0 + cl + c * p.col_lanes;
      active[c] = col < p.k;
      off[c] = sys * p.b_stride + int64_t(active[c] ? col : 0) * p.cs;
#pragma unroll
      for (int m = 0; m < R; ++m) {
        const int row = m * G + g;
        x[c][m] = (active[c] && row < n) ? B[off[c] + row * p.rs] : T(0);
      }
    }
    if (!staged) {
      cp_async_wait<0>();
      __syncthreads();
      block_invert_diagonal<T, N, Orient>(S, n, p.unit);
      __syncthreads();
      staged = true;
    }
    if constexpr (Solve != kTriBackward) block_forward<T, N, G, Orient, C>(S, rb, x, g, n);
    if constexpr (Solve != kTriForward) block_backward<T, N, G, Orient, C>(S, rb, x, g, n);
#pragma unroll
    for (int c = 0; c < C; ++c) {
      if (active[c]) {
#pragma unroll
        for (int m = 0; m < R; ++m) {
          const int row = m * G + g;
          if (row < n) X[off[c] + row * p.rs] = x[c][m];
        }
      }
    }
  }
}

// Calls f(integral_constant<N>) with the padded order for n <= kBlockMaxOrder.
template <typename F>
inline void with_block_order(int64_t n, F&& f) {
  if (n <= 32) return f(std::integral_constant<int, 32>{});
  if (n <= 64) return f(std::integral_constant<int, 64>{});
  // 96: 38 KB of float64 triangle, 5 systems per SM against 3 at 128.
  if (n <= 96) return f(std::integral_constant<int, 96>{});
  f(std::integral_constant<int, 128>{});
}

template <typename T, int N, int G, bool Orient, int C>
auto block_kernel_for(int solve) {
  return solve == kTriForward    ? trsm_block_kernel<T, N, G, kTriForward, Orient, C>
         : solve == kTriBackward ? trsm_block_kernel<T, N, G, kTriBackward, Orient, C>
                                 : trsm_block_kernel<T, N, G, kTriPotrs, Orient, C>;
}

template <typename T, int N, int G, int C>
auto block_kernel_for(const TrianglePlan& plan) {
  return plan.orient ? block_kernel_for<T, N, G, true, C>(plan.solve)
                     : block_kernel_for<T, N, G, false, C>(plan.solve);
}

// The solves of `plan` (trsm_triangle_plan.h) with v's order and strides.
template <typename T>
void launch_block_impl(const T* A, int64_t a_stride, const T* B, T* X, int64_t batch, int64_t k,
                       const TrsmView& v, TrianglePlan plan, cudaStream_t stream) {
  const int n = v.n;
  TORCH_CHECK(n >= 1 && n <= kBlockMaxOrder, "batchchol: block-per-system solve needs n <= ",
              kBlockMaxOrder);
  TORCH_CHECK(k <= INT_MAX, "batchchol: too many right-hand sides");
  TORCH_CHECK(batch <= INT_MAX, "batchchol: batch too large for one launch");
  BlockParams p{};
  p.a_stride = a_stride;
  p.b_stride = int64_t(n) * k;
  p.rs = v.rs;
  p.cs = v.cs;
  p.k = int(k);
  p.n = n;
  p.unit = plan.unit;
  with_block_order(n, [&](auto order) {
    constexpr int N = decltype(order)::value;
    auto launch = [&](auto lanes_per_column, auto columns_per_lane) {
      constexpr int G = decltype(lanes_per_column)::value;
      constexpr int C = decltype(columns_per_lane)::value;
      // At least one warp; as many columns at once as the thread limit allows.
      int lanes = 32 / G;
      while (lanes * C < k && lanes * 2 * G <= block_max_threads<N>()) lanes *= 2;
      p.col_lanes = lanes;
      auto kernel = block_kernel_for<T, N, G, C>(plan);
      const size_t smem = size_t(block_smem_elems<N>()) * sizeof(T);
      allow_dynamic_smem(kernel, smem);
      kernel<<<unsigned(batch), lanes * G, smem, stream>>>(A, B, X, p);
      C10_CUDA_KERNEL_LAUNCH_CHECK();
    };
    using One = std::integral_constant<int, 1>;
    if constexpr (N <= 64) {
      if (k <= 8) return launch(std::integral_constant<int, N / 8>{}, One{});
    }
    // potrs at N = 64 from 9 columns: two columns per lane, N / 8 lanes per column (the
    // same threads, half the shared-memory reads per update; H100 A/B,
    // results/h100-2026-11-24-block-columns-ab.txt: float64 16 columns 0.278 -> 0.261 ms,
    // 32 columns 0.475 -> 0.440, float32 16 columns 0.178 -> 0.171). trsm gained nothing
    // there, float64 potrs lost at N = 32 and N = 128 (1.11 -> 1.67 ms: 16 lanes per column).
    if constexpr (N == 64) {
      if (plan.solve == kTriPotrs)
        return launch(std::integral_constant<int, N / 8>{}, std::integral_constant<int, 2>{});
    }
    launch(std::integral_constant<int, block_row_lanes<N>()>{}, One{});
  });
}

// The entry points of trsm_block_launch.h for one dtype; each instantiation unit
// (trsm_block_f32.cu, trsm_block_f64.cu) expands it once, inside namespace batchchol::cuda.
#define BATCHCHOL_DEFINE_BLOCK(T)                                                        \
  void launch_trsm_block(const T* A, int64_t a_stride, const T* B, T* X, int64_t batch,  \
      int64_t k, const TrsmView& v, cudaStream_t stream) {                               \
    launch_block_impl(A, a_stride, B, X, batch, k, v, trsm_triangle_plan(v), stream);    \
  }                                                                                      \
  void launch_potrs_block(const T* L, int64_t l_stride, const T* B, T* X, int64_t batch, \
      int64_t k, const TrsmView& v1, const TrsmView& v2, cudaStream_t stream) {          \
    launch_block_impl(L, l_stride, B, X, batch, k, v1, potrs_triangle_plan(v1, v2),      \
      stream);                                                                           \
  }

}  // namespace cuda
}  // namespace batchchol
