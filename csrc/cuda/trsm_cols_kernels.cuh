// Kernel template and host launcher of the column-per-lane triangular solves
// (trsm_cols_device.cuh). Included by one instantiation unit per real dtype
// (trsm_cols_f32.cu, trsm_cols_f64.cu), which defines the entry points of
// trsm_cols_launch.h.
//
// A warp holds `slots` systems; each system has 2^lanes_log2 lanes, one per column of
// its group of right-hand sides (a system with more than 32 columns is several units,
// one per group of 32). Warps are persistent and loop over their units; per trip the
// matrices are copied with cp.async while each lane loads its column into registers.
#pragma once

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

#include <algorithm>
#include <climits>
#include <type_traits>

#include "cuda/launch_utils.h"
#include "cuda/trsm_cols_device.cuh"
#include "cuda/trsm_cols_launch.h"
#include "cuda/trsm_device.cuh"
#include "cuda/trsm_triangle_plan.h"

namespace batchchol {
namespace cuda {

constexpr int kColsWarps = 4;
// Shared memory per warp, which bounds the systems per warp: two float64 32 x 32 slots.
constexpr int kColsSmemPerWarp = 17 * 1024;

struct ColsParams {
  int64_t units;     // (system, column group) pairs
  int64_t a_stride;  // elements between consecutive matrices (0: one shared matrix)
  int64_t b_stride;  // elements between consecutive B (and X)
  int64_t rs, cs;    // element (row i, column c) of a B or X at i * rs + c * cs
  int k;             // right-hand sides
  int groups;        // column groups per system
  int lanes_log2;    // lanes per system = 2^lanes_log2
  int slots;         // systems per warp
  int n;
  bool orient;       // T(p, q) = A[q][p] rather than A[p][q] (trsm_cols_device.cuh)
  bool unit;
};

// No minimum of resident blocks in the launch bounds: with 5 or 6, float32 n = 16 ran up
// to 10% slower (results/h100-2026-11-24-cols-packed-ab.txt).
template <typename T, int N, int Solve, bool Packed>
__global__ void __launch_bounds__(kColsWarps * 32)
    trsm_cols_kernel(const T* __restrict__ A, const T* B, T* X, ColsParams p) {
  extern __shared__ __align__(16) unsigned char cols_smem_raw[];
  constexpr int SS = cols_slot_elems<N, Packed>();
  const int lane = threadIdx.x & 31;
  T* const wsm = reinterpret_cast<T*>(cols_smem_raw) + (threadIdx.x >> 5) * p.slots * SS;
  // Padding rows and columns are never copied into: zero once, they stay zero.
  for (int e = lane; e < p.slots * SS; e += 32) wsm[e] = T(0);

  const int my_slot = lane >> p.lanes_log2;
  const int my_col = lane & ((1 << p.lanes_log2) - 1);
  const T* const tile = wsm + min(my_slot, p.slots - 1) * SS;
  const int n = p.n;
  const int64_t step = int64_t(gridDim.x) * kColsWarps * p.slots;
#pragma unroll 1
  for (int64_t u0 = (int64_t(blockIdx.x) * kColsWarps + (threadIdx.x >> 5)) * p.slots;
       u0 < p.units; u0 += step) {
    __syncwarp();  // the previous trip's readers are done with the slots
#pragma unroll 1
    for (int s = 0; s < p.slots; ++s) {
      if (u0 + s < p.units) {
        const int64_t sys = (u0 + s) / p.groups;
        cols_issue_matrix<T, N, Packed>(A + sys * p.a_stride, n, p.orient, p.unit, wsm + s * SS,
                                        lane);
      }
    }
    cp_async_commit();

    // This lane's column, loaded while the copies are in flight.
    const int64_t u = u0 + my_slot;
    bool active = my_slot < p.slots && u < p.units;
    int64_t off = 0;
    if (active) {
      const int64_t sys = u / p.groups;
      const int64_t col = (u - sys * p.groups) * (int64_t(1) << p.lanes_log2) + my_col;
      active = col < p.k;
      off = sys * p.b_stride + col * p.cs;
    }
    T x[N];
#pragma unroll
    for (int i = 0; i < N; ++i) x[i] = (active && i < n) ? B[off + i * p.rs] : T(0);

    cp_async_wait<0>();
    __syncwarp();
    cols_invert_diagonals<T, N, Packed>(wsm, p.slots, n, p.unit, p.orient, lane);
    __syncwarp();
    if constexpr (Solve != kTriBackward) {
      if (p.orient) {
        cols_lower<T, N, true, Packed>(tile, x);
      } else {
        cols_lower<T, N, false, Packed>(tile, x);
      }
    }
    if constexpr (Solve == kTriPotrs) {
      // The padded entries of a forward result may be non-finite; the backward pass
      // starts with them, so they must be zero again.
#pragma unroll
      for (int i = 0; i < N; ++i)
        if (i >= n) x[i] = T(0);
    }
    if constexpr (Solve != kTriForward) {
      const T* const back = Solve == kTriPotrs ? cols_reload_pointer(tile, x[N - 1]) : tile;
      if (p.orient) {
        cols_upper<T, N, true, Packed>(back, x);
      } else {
        cols_upper<T, N, false, Packed>(back, x);
      }
    }
    if (active) {
#pragma unroll
      for (int i = 0; i < N; ++i)
        if (i < n) X[off + i * p.rs] = x[i];
    }
  }
}

// Calls f(integral_constant<N>) with the padded order for n <= 32.
template <typename F>
inline void with_cols_order(int64_t n, F&& f) {
  if (n <= 4) return f(std::integral_constant<int, 4>{});
  if (n <= 8) return f(std::integral_constant<int, 8>{});
  if (n <= 16) return f(std::integral_constant<int, 16>{});
  f(std::integral_constant<int, 32>{});
}

// Systems per warp: a power of two, at most one per group of `lanes` lanes, as many as
// kColsSmemPerWarp holds.
template <typename T, int N, bool Packed>
int cols_slots(int lanes) {
  const int fit = int(kColsSmemPerWarp / (cols_slot_elems<N, Packed>() * sizeof(T)));
  int slots = 1;
  while (slots * 2 <= std::min(32 / lanes, fit)) slots *= 2;
  return slots;
}

template <typename T, int N, bool Packed>
void launch_cols_kernel(const T* A, const T* B, T* X, ColsParams p, int solve,
                        cudaStream_t stream) {
  p.slots = cols_slots<T, N, Packed>(1 << p.lanes_log2);
  auto kernel = solve == kTriForward    ? trsm_cols_kernel<T, N, kTriForward, Packed>
                : solve == kTriBackward ? trsm_cols_kernel<T, N, kTriBackward, Packed>
                                        : trsm_cols_kernel<T, N, kTriPotrs, Packed>;
  const size_t smem = size_t(kColsWarps) * p.slots * cols_slot_elems<N, Packed>() * sizeof(T);
  allow_dynamic_smem(kernel, smem);
  const int64_t needed =
      (p.units + int64_t(kColsWarps) * p.slots - 1) / (int64_t(kColsWarps) * p.slots);
  const int64_t blocks = resident_blocks(kernel, kColsWarps * 32, smem, needed);
  kernel<<<unsigned(blocks), kColsWarps * 32, smem, stream>>>(A, B, X, p);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

// The solves of `plan` (trsm_triangle_plan.h) with v's order and strides.
template <typename T>
void launch_cols_impl(const T* A, int64_t a_stride, const T* B, T* X, int64_t batch, int64_t k,
                      const TrsmView& v, TrianglePlan plan, cudaStream_t stream) {
  const int n = v.n;
  TORCH_CHECK(n >= 1 && n <= kColsMaxOrder, "batchchol: column-per-lane solve needs n <= 32");
  TORCH_CHECK(k <= INT_MAX, "batchchol: too many right-hand sides");
  ColsParams p{};
  p.a_stride = a_stride;
  p.b_stride = int64_t(n) * k;
  p.rs = v.rs;
  p.cs = v.cs;
  p.k = int(k);
  p.n = n;
  p.orient = plan.orient;
  p.unit = plan.unit;
  while ((int64_t(1) << p.lanes_log2) < std::min<int64_t>(k, 32)) ++p.lanes_log2;
  const int lanes = 1 << p.lanes_log2;
  p.groups = int((k + lanes - 1) / lanes);
  p.units = batch * p.groups;
  with_cols_order(n, [&](auto order) {
    constexpr int N = decltype(order)::value;
    // The packed triangle holds twice the systems per warp in the same shared memory.
    // H100 A/B, bench_fixed shapes (results/h100-2026-11-24-cols-packed-ab.txt): at
    // n = 16 float64 trsm 1 column 0.125 -> 0.112 ms, potrs 0.150 -> 0.126, float32 trsm
    // 16 columns 0.320 -> 0.301 (float32 1-2 columns within 2%, either way); at n = 32 it
    // pays where it fits more systems (float32 trsm 8 columns 0.189 -> 0.175), and at n <= 8
    // a warp holds 32 systems either way.
    if constexpr (N == 16) {
      launch_cols_kernel<T, N, true>(A, B, X, p, plan.solve, stream);
    } else if constexpr (N == 32) {
      if (cols_slots<T, N, true>(lanes) > cols_slots<T, N, false>(lanes)) {
        launch_cols_kernel<T, N, true>(A, B, X, p, plan.solve, stream);
      } else {
        launch_cols_kernel<T, N, false>(A, B, X, p, plan.solve, stream);
      }
    } else {
      launch_cols_kernel<T, N, false>(A, B, X, p, plan.solve, stream);
    }
  });
}

// The entry points of trsm_cols_launch.h for one dtype; each instantiation unit
// (trsm_cols_f32.cu, trsm_cols_f64.cu) expands it once, inside namespace batchchol::cuda.
#define BATCHCHOL_DEFINE_COLS(T)                                                        \
  void launch_trsm_cols(const T* A, int64_t a_stride, const T* B, T* X, int64_t batch,  \
      int64_t k, const TrsmView& v, cudaStream_t stream) {                              \
    launch_cols_impl(A, a_stride, B, X, batch, k, v, trsm_triangle_plan(v), stream);    \
  }                                                                                     \
  void launch_potrs_cols(const T* L, int64_t l_stride, const T* B, T* X, int64_t batch, \
      int64_t k, const TrsmView& v1, const TrsmView& v2, cudaStream_t stream) {         \
    launch_cols_impl(L, l_stride, B, X, batch, k, v1, potrs_triangle_plan(v1, v2),      \
      stream);                                                                          \
  }

}  // namespace cuda
}  // namespace batchchol
