// Kernel template and host launcher of the column-per-lane triangular solves
// (trsm_cols_device.cuh). Included by one instantiation unit per real dtype
// (trsm_cols_f32.cu, trsm_cols_f64.cu), which defines the entry points of
// trsm_cols_launch.h.
//
// A warp holds `slots` systems; each system has 2^lanes_log2 lanes, one per column of
// its group of right-hand sides (a system with more than 32 columns is several units,
// one per group of 32). Warps are persistent and loop over their units; per trip the
// matrices are copied with cp.async while each lane loads its column into registers.
// Ragged batches (Ragged = true) read each system's offsets and order per trip.
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
  int n;             // the order (ragged: the largest valid one)
  bool orient;       // T(p, q) = A[q][p] rather than A[p][q] (trsm_cols_device.cuh)
  bool unit;
  // Ragged batches: system s is rag.a_offsets[s] into A, of order rag.sizes[s] <= n,
  // with B and X at rag.b_offsets[s].
  RaggedCols rag;
};

// One system as the kernel sees it: its matrix (null: order 0, or invalid metadata),
// where its B and X start, its order, and whether its X gets NaN (invalid metadata, X's
// block valid: as in trsm_ragged_kernels.cuh).
template <typename T>
struct ColsSystem {
  const T* a;
  int64_t b;
  int n;
  bool nan;
};

template <typename T, bool Ragged>
__device__ __forceinline__ ColsSystem<T> cols_system(const T* A, const ColsParams& p,
                                                     int64_t sys) {
  if constexpr (!Ragged) {
    return {A + sys * p.a_stride, sys * p.b_stride, p.n, false};
  } else {
    // Every valid system has n <= p.n (the batch's max_n); an invalid one keeps its size,
    // which may be larger (without max_n, sizes are limited by the valid ones only).
    const int n = p.rag.sizes[sys];
    if (n < 1) return {nullptr, 0, 0, false};
    if (p.rag.status != nullptr && p.rag.status[sys] != 0)
      return {nullptr, p.rag.b_offsets[sys], n, p.rag.rhs_status[sys] == 0};
    return {A + p.rag.a_offsets[sys], p.rag.b_offsets[sys], n, false};
  }
}

// No minimum of resident blocks in the launch bounds: with 5 or 6, float32 n = 16 ran up
// to 10% slower (results/h100-2026-11-24-cols-packed-ab.txt).
// StageB (one column, B and X contiguous): each trip copies its systems' B into shared
// memory with the matrices (cp.async, consecutive lanes on consecutive elements) and
// writes X from there, instead of each lane reading and writing its own column with
// loads that touch one row of B per system (8 lines per warp instruction).
template <typename T, int N, int Solve, bool Packed, bool Ragged, bool StageB = false>
__global__ void __launch_bounds__(kColsWarps * 32)
    trsm_cols_kernel(const T* __restrict__ A, const T* B, T* X, ColsParams p) {
  extern __shared__ __align__(16) unsigned char cols_smem_raw[];
  constexpr int SS = cols_slot_elems<N, Packed>();
  constexpr int BP = N + 1;
  const int lane = threadIdx.x & 31;
  T* const wsm = reinterpret_cast<T*>(cols_smem_raw) +
                 (threadIdx.x >> 5) * p.slots * (SS + (StageB ? BP : 0));
  T* const bsm = wsm + p.slots * SS;
  // Padding rows and columns are never copied into: zero once, they stay zero (ragged
  // batches write their padding's zeros with each matrix's copies).
  for (int e = lane; e < p.slots * SS; e += 32) wsm[e] = T(0);

  const int my_slot = lane >> p.lanes_log2;
  const int my_col = lane & ((1 << p.lanes_log2) - 1);
  const T* const tile = wsm + min(my_slot, p.slots - 1) * SS;
  const int64_t step = int64_t(gridDim.x) * kColsWarps * p.slots;
#pragma unroll 1
  for (int64_t u0 = (int64_t(blockIdx.x) * kColsWarps + (threadIdx.x >> 5)) * p.slots;
       u0 < p.units; u0 += step) {
    __syncwarp();  // the previous trip's readers are done with the slots
#pragma unroll 1
    for (int s = 0; s < p.slots; ++s) {
      if (u0 + s < p.units) {
        const ColsSystem<T> m = cols_system<T, Ragged>(A, p, (u0 + s) / p.groups);
        if (m.a != nullptr)
          cols_issue_matrix<T, N, Packed, Ragged>(m.a, m.n, p.orient, p.unit, wsm + s * SS,
                                                  lane);
      }
    }
    int cnt = 0;
    if constexpr (StageB) {
      cnt = int(min(int64_t(p.slots), p.units - u0));
      const T* const src = B + u0 * p.n;
      for (int e = lane; e < cnt * p.n; e += 32) {
        const int s = e / p.n;
        cp_async_elem(bsm + s * BP + (e - s * p.n), src + e);
      }
    }
    cp_async_commit();

    // This lane's column, loaded while the copies are in flight.
    const int64_t u = u0 + my_slot;
    bool active = false, nan = false;
    int n = p.n;  // ragged: this lane's system's order
    int64_t off = 0;
    if (my_slot < p.slots && u < p.units) {
      const int64_t sys = u / p.groups;
      const int64_t col = (u - sys * p.groups) * (int64_t(1) << p.lanes_log2) + my_col;
      const ColsSystem<T> m = cols_system<T, Ragged>(A, p, sys);
      active = m.a != nullptr && col < p.k;
      if constexpr (Ragged) {
        nan = m.nan && col < p.k;
        n = m.n;
      }
      off = m.b + col * p.cs;
    }
    T x[N];
    if constexpr (!StageB) {
#pragma unroll
      for (int i = 0; i < N; ++i) x[i] = (active && i < n) ? B[off + i * p.rs] : T(0);
    }

    cp_async_wait<0>();
    __syncwarp();
    if constexpr (StageB) {
#pragma unroll
      for (int i = 0; i < N; ++i) x[i] = (active && i < n) ? bsm[my_slot * BP + i] : T(0);
    }
    cols_invert_diagonals<T, N, Packed>(wsm, p.slots, p.unit, p.orient, lane, [&](int s) {
      if constexpr (!Ragged) return p.n;
      return u0 + s < p.units ? cols_system<T, Ragged>(A, p, (u0 + s) / p.groups).n : 0;
    });
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
    if constexpr (StageB) {
      if (active) {
#pragma unroll
        for (int i = 0; i < N; ++i)
          if (i < n) bsm[my_slot * BP + i] = x[i];
      }
      __syncwarp();
      T* const dst = X + u0 * p.n;
      for (int e = lane; e < cnt * p.n; e += 32) {
        const int s = e / p.n;
        dst[e] = bsm[s * BP + (e - s * p.n)];
      }
    } else if (active || nan) {
#pragma unroll
      for (int i = 0; i < N; ++i)
        if (i < n) X[off + i * p.rs] = active ? x[i] : quiet_nan<T>();
    }
    if (Ragged && nan) {
      for (int i = N; i < n; ++i) X[off + i * p.rs] = quiet_nan<T>();
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

template <typename T, int N, bool Packed, bool Ragged>
void launch_cols_kernel(const T* A, const T* B, T* X, ColsParams p, int solve,
                        cudaStream_t stream) {
  p.slots = cols_slots<T, N, Packed>(1 << p.lanes_log2);
  // One column at order 16 with B contiguous: B and X go through shared memory in
  // coalesced runs (H100 A/B, results/h100-2026-11-24-cols-stage-b-ab.txt: float64 potrs
  // 0.131 -> 0.115 ms, trsm 0.115 -> 0.110, float32 1-2%; at N <= 8, 3-12% slower).
  const bool stage_b = !Ragged && N == 16 && p.k == 1 && p.rs == 1 && p.b_stride == p.n;
  auto pick = [&](auto sb) {
    constexpr bool SB = decltype(sb)::value && !Ragged && N == 16;
    return solve == kTriForward    ? trsm_cols_kernel<T, N, kTriForward, Packed, Ragged, SB>
           : solve == kTriBackward ? trsm_cols_kernel<T, N, kTriBackward, Packed, Ragged, SB>
                                   : trsm_cols_kernel<T, N, kTriPotrs, Packed, Ragged, SB>;
  };
  auto kernel = stage_b ? pick(std::true_type{}) : pick(std::false_type{});
  const size_t smem = size_t(kColsWarps) * p.slots *
                      (cols_slot_elems<N, Packed>() + (stage_b ? N + 1 : 0)) * sizeof(T);
  allow_dynamic_smem(kernel, smem);
  const int64_t needed =
      (p.units + int64_t(kColsWarps) * p.slots - 1) / (int64_t(kColsWarps) * p.slots);
  const int64_t blocks = resident_blocks(kernel, kColsWarps * 32, smem, needed);
  kernel<<<unsigned(blocks), kColsWarps * 32, smem, stream>>>(A, B, X, p);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

// Fills p's column grouping for k right-hand sides and `count` systems, then launches
// the solves of `plan` (trsm_triangle_plan.h) for orders up to p.n.
template <typename T, bool Ragged>
void launch_cols_grouped(const T* A, const T* B, T* X, ColsParams p, int64_t count, int64_t k,
                         TrianglePlan plan, cudaStream_t stream) {
  TORCH_CHECK(p.n >= 1 && p.n <= kColsMaxOrder, "batchchol: column-per-lane solve needs n <= 32");
  TORCH_CHECK(k >= 1 && k <= INT_MAX, "batchchol: column-per-lane solve needs 1 <= k <= INT_MAX");
  p.k = int(k);
  p.orient = plan.orient;
  p.unit = plan.unit;
  while ((int64_t(1) << p.lanes_log2) < std::min<int64_t>(k, 32)) ++p.lanes_log2;
  const int lanes = 1 << p.lanes_log2;
  p.groups = int((k + lanes - 1) / lanes);
  p.units = count * p.groups;
  with_cols_order(p.n, [&](auto order) {
    constexpr int N = decltype(order)::value;
    // The packed triangle holds twice the systems per warp in the same shared memory.
    // H100 A/B, bench_fixed shapes (results/h100-2026-11-24-cols-packed-ab.txt): at
    // n = 16 float64 trsm 1 column 0.125 -> 0.112 ms, potrs 0.150 -> 0.126, float32 trsm
    // 16 columns 0.320 -> 0.301 (float32 1-2 columns within 2%, either way); at n = 32 it
    // pays where it fits more systems (float32 trsm 8 columns 0.189 -> 0.175), and at n <= 8
    // a warp holds 32 systems either way.
    if constexpr (N == 16) {
      launch_cols_kernel<T, N, true, Ragged>(A, B, X, p, plan.solve, stream);
    } else if constexpr (N == 32 && Ragged) {
      TORCH_CHECK(false, "batchchol: ragged column-per-lane solves take orders <= ",
                  kColsRaggedMaxOrder);
    } else if constexpr (N == 32) {
      if (cols_slots<T, N, true>(lanes) > cols_slots<T, N, false>(lanes)) {
        launch_cols_kernel<T, N, true, Ragged>(A, B, X, p, plan.solve, stream);
      } else {
        launch_cols_kernel<T, N, false, Ragged>(A, B, X, p, plan.solve, stream);
      }
    } else {
      launch_cols_kernel<T, N, false, Ragged>(A, B, X, p, plan.solve, stream);
    }
  });
}

// The solves of `plan` with v's order and strides.
template <typename T>
void launch_cols_impl(const T* A, int64_t a_stride, const T* B, T* X, int64_t batch, int64_t k,
                      const TrsmView& v, TrianglePlan plan, cudaStream_t stream) {
  ColsParams p{};
  p.a_stride = a_stride;
  p.b_stride = int64_t(v.n) * k;
  p.rs = v.rs;
  p.cs = v.cs;
  p.n = v.n;
  launch_cols_grouped<T, false>(A, B, X, p, batch, k, plan, stream);
}

// A ragged batch whose valid systems have orders up to max_order (left solves: B and X
// n_s x k row-major).
template <typename T>
void launch_cols_ragged_impl(const T* A, const T* B, T* X, const RaggedCols& r, int64_t k,
                             int max_order, TrianglePlan plan, cudaStream_t stream) {
  ColsParams p{};
  p.rs = k;
  p.cs = 1;
  p.n = max_order;
  p.rag = r;
  launch_cols_grouped<T, true>(A, B, X, p, r.count, k, plan, stream);
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
  }                                                                                     \
  void launch_trsm_cols_ragged(const T* A, const T* B, T* X, const RaggedCols& r,       \
      int64_t k, int max_order, const TrsmView& v, cudaStream_t stream) {               \
    launch_cols_ragged_impl(A, B, X, r, k, max_order, trsm_triangle_plan(v), stream);   \
  }                                                                                     \
  void launch_potrs_cols_ragged(const T* L, const T* B, T* X, const RaggedCols& r,      \
      int64_t k, int max_order, const TrsmView& v1, const TrsmView& v2,                 \
      cudaStream_t stream) {                                                            \
    launch_cols_ragged_impl(L, B, X, r, k, max_order, potrs_triangle_plan(v1, v2),      \
      stream);                                                                          \
  }

}  // namespace cuda
}  // namespace batchchol
