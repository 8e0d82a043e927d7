// Ragged-batch kernel of the warp family: the matrices of a range of order classes of
// a SizeGroups list (ragged_bins.h; class c holds the sizes warp_order(c - 1) + 1 ..
// warp_order(c)), each on the P lanes of a group, factored in registers by the
// fixed-size family's per-matrix routine (group_factor_staged, warp_chol_kernels.cuh)
// at its class's compile-time order.
//
// Why no block-wide staging: the fixed-size kernel copies a contiguous chunk of the
// batch with the whole block, but the matrices of a class lie anywhere in the buffer.
// Each group copies its own matrix's triangle (P consecutive elements per copy: 64-128
// bytes for P >= 8, all in flight by cp.async), so a warp needs only __syncwarp and the
// warps of a block never wait on one another.
//
// Why warps loop over the matrices: the host does not know the class counts (they are
// on the device), so a grid covering the whole batch would launch, for every class, up
// to count / 2 blocks that find nothing to do (float64 NP = 32 runs two matrices per
// warp). The launcher sizes the grid to what is resident at once instead.
#pragma once

#include <cstdint>

#include "cuda/async_copy.cuh"
#include "cuda/batch_layout.cuh"
#include "cuda/warp_chol_kernels.cuh"
#include "cuda/warp_chol_launch.h"

namespace batchchol {
namespace cuda {

// Copies the triangle of matrix `g` (n x n, row-major, contiguous) that the factorization
// reads (load_group_rows: the lower one, or the upper one for `upper`) into the staged
// slot `mat` (row pitch `pitch`) with the P lanes of its group, by cp.async: every
// lane's copies are in flight at once, where the earlier copy through registers (four
// loads in flight per lane) made a 4 KB matrix (float32 n = 32 on 16 lanes) sixteen
// round trips to memory. Consecutive lanes take consecutive elements of the triangle,
// so a row's part stays one coalesced run, and the other triangle (about half the bytes
// past the smallest orders) is not read. The caller's __syncwarp makes the other lanes'
// copies visible. H200, the register copy -> this, ms: 50,000 matrices of max_n = 32
// float64 uniform 0.242 -> 0.205, skewed 0.054 -> 0.045, float32 uniform 0.148 ->
// 0.139, posv_vbatched float32 0.210 -> 0.176; 5,000 matrices 2-4% less
// (benchmarks/results/h200-2026-11-29-round52-warp-async-ab.txt).
template <typename T, int P>
__device__ __forceinline__ void group_copy_in_triangle(T* __restrict__ mat,
                                                       const T* __restrict__ g, int n,
                                                       int pitch, int q, bool upper) {
  // Row i's run: columns first(i) .. first(i) + len(i) - 1; c: the column within it.
  const auto len = [&](int i) { return upper ? n - i : i + 1; };
  int i = 0, c = q;
  while (i < n && c >= len(i)) c -= len(i), ++i;
  while (i < n) {
    const int j = upper ? i + c : c;
    cp_async_elem(mat + i * pitch + j, g + int64_t(i) * n + j);
    for (c += P; i < n && c >= len(i); ++i) c -= len(i);
  }
  cp_async_commit();
  cp_async_wait<0>();
}

// Copies the staged factor of matrix `g` out, zeroing the triangle that is not the
// factor's.
template <typename T, int P>
__device__ __forceinline__ void group_copy_out(T* __restrict__ g, const T* __restrict__ mat, int n,
                                               int pitch, int q, bool upper) {
  const int nn = n * n;
  int i = 0, j = q;
  while (n > 0 && j >= n) j -= n, ++i;
  for (int e = q; e < nn; e += P) {
    const bool keep = upper ? j >= i : j <= i;
    g[e] = keep ? mat[i * pitch + j] : T(0);
    for (j += P; j >= n; j -= n) ++i;
  }
}

// Threads per block of warp_classes_kernel: its warps are independent, so the
// block size only sets the granularity of residency.
constexpr int kWarpRangeThreads = 128;
// Its blocks per SM for ptxas's register budget (0: none). Once the copy-in went to
// cp.async, ptxas took 231 registers for float32 posv's launch of every class (128
// before; 8 warps per SM instead of 16): three blocks bound it to 170 (ptxas: 168, 28
// bytes of spill stores). Four blocks on every float32 launch made ptxas spill where it
// had not (potrf 12..15: 128 registers and 128 bytes of spill stores, against 80
// registers and none unbounded).
template <typename T, int C_LO, int C_HI, bool kSolve>
constexpr int warp_range_min_blocks() {
  return sizeof(T) == 4 && kSolve && C_HI - C_LO + 1 == kWarpOrderClasses ? 3 : 0;
}

// Staged slot of one matrix of order NP on P lanes (make_stage_layout<P>(NP), as
// constants: with a run-time pitch the compiler hoists every staged element's address
// out of the loop over matrices into a register; float64 NP = 32: 174 registers, 156
// with constants, 124 in the fixed-size kernel, which has no such loop).
template <int NP, int P>
struct WarpSlot {
  static constexpr int kPitch = NP | 1;
  static constexpr int kSize = NP * kPitch + (((P - NP) * kPitch) % 32 + 32) % 32;
};

// Lanes per matrix of order np in the ragged kernel: the fixed-size table, except for
// float32 orders 10..16 (8 lanes, the table 4) and 20..28 (16, the table 8). A launch
// takes the registers of its largest class, and the loop over tasks adds some, so the
// table's choice put the launch for orders 20..32 at 128 registers (order 28 at 8
// lanes) and the one for 10..16 at 95; now 96 and 64. H100, 100,000 float32 matrices of
// n = 32: 0.567 -> 0.512 ms (fixed-size 0.412); uniform 1..32, 50,000 matrices: 0.197 ->
// 0.176 ms. (16 lanes for float64 orders 10..16 ran 0.222 ms at n = 16 against the
// fixed-size 0.156 with 8, and no faster on the uniform batch, so float64 keeps the table.)
template <typename T>
constexpr int ragged_warp_lanes(int np) {
  if constexpr (sizeof(T) == 4) {
    if (np >= 20) return 16;
    if (np >= 10) return 8;
  }
  return warp_lanes<T, false>(np);
}

// Lanes per matrix of order class C and the elements a warp stages for it.
template <typename T, int C>
struct WarpClass {
  static constexpr int kOrder = warp_order(C);
  static constexpr int kLanes = ragged_warp_lanes<T>(kOrder);
  static constexpr int kWarpElems = (32 / kLanes) * WarpSlot<kOrder, kLanes>::kSize;
};

template <typename T, int C_LO, int C_HI>
constexpr int warp_range_elems() {
  if constexpr (C_LO == C_HI) {
    return WarpClass<T, C_LO>::kWarpElems;
  } else {
    constexpr int a = WarpClass<T, C_LO>::kWarpElems, b = warp_range_elems<T, C_LO + 1, C_HI>();
    return a > b ? a : b;
  }
}

// Arguments of warp_classes_kernel: the matrices (A in, L and info out, as
// potrf_vbatched), the SizeGroups list (ragged_bins.h; order class c is group g0 + c),
// and for posv the right-hand sides: B in and X out, blocks of n_i x k (k = -1:
// n_i x n_i) at b_offsets; B null: factor only.
template <typename T>
struct WarpListArgs {
  const T* A;
  T* L;
  int* info;
  const int64_t* offsets;
  const int* sizes;
  const int* counts;
  const int* list;
  int stride;  // SizeGroups::stride
  int g0;
  bool upper;
  const T* B;
  T* X;
  const int64_t* b_offsets;
  int k;
};

// Solves A x = b for the columns of matrix b's right-hand-side block with its factor
// staged in `mat` (lower working matrix, as group_factor_staged left it) and the
// reciprocals of its diagonal in rdiag, as posv_warp_kernel does. The column loop runs
// to the warp's largest count, since the solves shuffle across the warp.
template <typename T, int NP, int P>
__device__ __forceinline__ void group_solve_listed(const WarpListArgs<T>& a, const T* mat,
                                                   const real_t<T> (&rdiag)[GroupShape<NP, P>::kRows],
                                                   int b, int n, int q) {
  using S = GroupShape<NP, P>;
  constexpr int kPitch = WarpSlot<NP, P>::kPitch;
  const int cols = b >= 0 ? (a.k < 0 ? n : a.k) : 0;
  const int64_t bo = b >= 0 ? a.b_offsets[b] : 0;
  const int warp_cols = __reduce_max_sync(0xffffffffu, cols);
  for (int c = 0; c < warp_cols; ++c) {
    T x[S::kRows];
#pragma unroll
    for (int t = 0; t < S::kRows; ++t) {
      const int i = q + P * t;
      x[t] = i < n && c < cols ? a.B[bo + int64_t(i) * cols + c] : T(0);
    }
    // Rows and columns are re-read per column so that only one of them is live.
    T rows[S::kRows][NP];
    load_group_rows<T, NP, P>(rows, mat, kPitch, n, q, a.upper);
    group_forward<T, NP, P>(rows, rdiag, x, q);
    T cols_of_l[S::kRows][NP];
    load_group_cols<T, NP, P>(cols_of_l, mat, kPitch, n, q, a.upper);
    group_backward<T, NP, P>(cols_of_l, rdiag, x, q);
#pragma unroll
    for (int t = 0; t < S::kRows; ++t) {
      const int i = q + P * t;
      if (i < n && c < cols) a.X[bo + int64_t(i) * cols + c] = x[t];
    }
  }
}

// Matrices list[first .. min(first + 32 / P, end)) on the warp, P lanes each, in the
// warp's staging area `stage`; with kSolve, their right-hand sides as well.
template <typename T, int NP, int P, bool kSolve>
__device__ __forceinline__ void warp_factor_listed(const WarpListArgs<T>& a, T* stage, int first,
                                                   int end) {
  using S = GroupShape<NP, P>;
  using W = WarpSlot<NP, P>;
  const int g = (threadIdx.x % 32) / P, q = threadIdx.x % P;
  T* const mat = stage + g * W::kSize;
  const int i = first + g;
  const int b = i < end ? a.list[i] : -1;
  const int n = b >= 0 ? a.sizes[b] : 0;  // groups past the end factor an identity
  const int64_t o = b >= 0 ? a.offsets[b] : 0;
  group_copy_in_triangle<T, P>(mat, a.A + o, n, W::kPitch, q, a.upper);
  __syncwarp();
  real_t<T> rdiag[S::kRows];
  const int inf = group_factor_staged<T, NP, P>(mat, W::kPitch, n, q, a.upper, rdiag);
  __syncwarp();
  group_copy_out<T, P>(a.L + o, mat, n, W::kPitch, q, a.upper);
  if (b >= 0 && q == 0) a.info[b] = inf;
  if constexpr (kSolve) group_solve_listed<T, NP, P>(a, mat, rdiag, b, n, q);
  __syncwarp();  // the slot is refilled by the warp's next task
}

// Runs warp_factor_listed for order class c (C <= c <= C_HI).
template <typename T, int C, int C_HI, bool kSolve>
__device__ __forceinline__ void warp_factor_class(const WarpListArgs<T>& a, int c, T* stage,
                                                  int first, int end) {
  if (c == C) {
    using K = WarpClass<T, C>;
    warp_factor_listed<T, K::kOrder, K::kLanes, kSolve>(a, stage, first, end);
  } else if constexpr (C < C_HI) {
    warp_factor_class<T, C + 1, C_HI, kSolve>(a, c, stage, first, end);
  }
}

// The body of warp_classes_kernel, for any block of whole warps (the one-launch potrf
// runs it after its prologue: warp_ragged_one.cuh).
template <typename T, int C_LO, int C_HI, bool kSolve>
__device__ __forceinline__ void warp_classes_body(const WarpListArgs<T>& a) {
  constexpr int K = C_HI - C_LO + 1;
  // Per class in task order (k = 0: class C_HI): its list's start and length, and its
  // first task; first_task[K] is the number of tasks.
  __shared__ int begin[K], length[K], first_task[K + 1];
  extern __shared__ __align__(16) unsigned char warp_smem_raw[];
  if (threadIdx.x < 32) {
    // Group lane's count and start (the counts before it, or lane * stride), one
    // coalesced read.
    const int lane = threadIdx.x;
    const int count = lane <= a.g0 + C_HI ? a.counts[lane] : 0;
    int start = count;
#pragma unroll
    for (int d = 1; d < 32; d *= 2) {
      const int v = __shfl_up_sync(0xffffffffu, start, d);
      if (lane >= d) start += v;
    }
    start = a.stride > 0 ? lane * a.stride : start - count;
    int tasks = 0;
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const int g = a.g0 + C_HI - k;
      const int n_k = __shfl_sync(0xffffffffu, count, g);
      const int s_k = __shfl_sync(0xffffffffu, start, g);
      if (lane == 0) begin[k] = s_k, length[k] = n_k, first_task[k] = tasks;
      const int per_task = 32 / ragged_warp_lanes<T>(warp_order(C_HI - k));
      tasks += (n_k + per_task - 1) / per_task;
    }
    if (lane == 0) first_task[K] = tasks;
  }
  __syncthreads();

  const int warps = blockDim.x / 32, warp = threadIdx.x / 32;
  T* const stage =
      reinterpret_cast<T*>(warp_smem_raw) + warp * warp_range_elems<T, C_LO, C_HI>();
  const int total = first_task[K];
  int k = 0;
  for (int t = int(blockIdx.x) * warps + warp; t < total; t += int(gridDim.x) * warps) {
    while (t >= first_task[k + 1]) ++k;  // t only grows
    const int c = C_HI - k;
    const int per_task = 32 / ragged_warp_lanes<T>(warp_order(c));
    const int first = begin[k] + (t - first_task[k]) * per_task;
    warp_factor_class<T, C_LO, C_HI, kSolve>(a, c, stage, first, begin[k] + length[k]);
  }
}

// Order classes C_LO..C_HI of the warp part of a SizeGroups list in one launch (with
// kSolve, posv: the right-hand sides solved on chip after the factorization). A task is
// 32 / P consecutive entries of one class's list; the tasks of the largest class come
// first, and warp w of the grid takes tasks w, w + (warps in the grid), ..., so that the
// warps of an SM mostly run one class's code at a time. (One launch per class, with the
// class's own registers, ran slower: sixteen small launches of 5-45 us each, every one
// with its ramp and tail, and ~6 us of host time apiece; H100, 50,000 float32
// matrices, uniform 1..32.)
template <typename T, int C_LO, int C_HI, bool kSolve>
__global__ void __launch_bounds__(kWarpRangeThreads,
                                  warp_range_min_blocks<T, C_LO, C_HI, kSolve>())
    warp_classes_kernel(WarpListArgs<T> a) {
  warp_classes_body<T, C_LO, C_HI, kSolve>(a);
}

}  // namespace cuda
}  // namespace batchchol
