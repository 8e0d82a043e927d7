// Ragged-batch kernel of the warp64 routine (warp64_chol.cuh): the matrices of one
// group of a SizeGroups list (ragged_bins.h) whose sizes are 33..64, one warp per
// matrix, each factored at the narrowest warp64 width that holds it.
//
// Why not the wide family's list kernel, which served this group before: it runs one
// block of two warps per matrix and its grid covers the whole batch, since the group's
// count is on the device. The fixed-size dispatch runs warp64 (float32 33..64, float64
// 33..48) and tile2 (float64 49..64) instead, and the ragged wide launches ran at ~1.8x
// (float64) and ~2.8x (float32) their time (H200, 12,500 matrices of sizes 33..64:
// 0.528 / 0.421 ms against fixed-size potrf at n = 48, 0.298 / 0.152;
// benchmarks/results/h200-2026-11-28-round49-list-call-ab.txt). This kernel: 0.374 /
// 0.212 ms against the wide one's 0.532 / 0.422 in one process (...-round50-warp64-ab.txt).
//
// Why each warp stages its own matrix: the matrices of a group lie anywhere in the
// buffer, so there is no contiguous chunk for a block-wide copy (warp_chol_ragged.cuh
// does the same for n <= 32). A warp copies its matrix row by row (coalesced,
// asynchronously: warp64_copy_in) into the packed lower triangle of order 64
// (stage_copy.cuh): half the shared memory of a square slot, which at 64 would hold
// float64 to one four-warp block per SM where the registers allow two.
//
// Why float64 runs widths up to 64 here, where the fixed-size family stops at 48: a
// launch takes its widest variant's registers anyway, and float64 at 48 already holds
// the SM to eight warps (240 registers), as 64 does.
//
// Why the warps loop over the group: its count is on the device, so the grid is what is
// resident at once (an empty group costs one short wave, not a block per matrix of the
// batch: bench_vbatched's skewed batches at Nmax = 128 have no matrix in 33..64).
#pragma once

#include <cstdint>

#include "cuda/async_copy.cuh"
#include "cuda/batch_layout.cuh"
#include "cuda/packed_triangle.cuh"
#include "cuda/warp64_chol.cuh"
#include "cuda/warp_chol_launch.h"

namespace batchchol {
namespace cuda {

// The elements of a warp's staged slot (the packed triangle of the group's largest
// order, kWarp64RaggedMaxN: warp_chol_launch.h) and column buffer.
constexpr int kWarp64RaggedSlot = lo_row(kWarp64RaggedMaxN);
constexpr int kWarp64RaggedWarpElems = kWarp64RaggedSlot + kWarp64ColBuf;
constexpr int kWarp64RaggedThreads = 128;

// Element (i, j) of W = A (lower) or A^T (upper) in the packed slot, for A(i, j) in
// the factor's triangle.
__device__ __forceinline__ int warp64_slot_index(int i, int j, bool upper) {
  return upper ? lo_row(j) + i : lo_row(i) + j;
}

// Copies the factor's triangle of matrix n x n (33 <= n <= 64, row-major at g) into the
// packed slot, W's lower triangle (stage_copy.cuh), row by row, lane q copying columns
// q and q + 32 (coalesced). The copies are asynchronous (async_copy.cuh): a lane has all of its
// ~n elements in flight at once without holding them in registers, which a copy
// through registers could not afford beside the factorization's rows (it spilled at
// float32's 128 registers). The slot's rows are bank conflict-free either way: lower
// writes consecutive elements, upper the triangular numbers of consecutive rows.
template <typename T>
__device__ __forceinline__ void warp64_copy_in(T* __restrict__ slot, const T* __restrict__ g,
                                               int n, int q, bool upper) {
  const int j1 = q + 32;
  for (int i = 0; i < n; ++i) {
    if (upper ? q >= i : q <= i) cp_async_elem(slot + warp64_slot_index(i, q, upper), g + q);
    if (j1 < n && (upper ? j1 >= i : j1 <= i))
      cp_async_elem(slot + warp64_slot_index(i, j1, upper), g + j1);
    g += n;
  }
  cp_async_commit();
  cp_async_wait<0>();
}

// Writes the staged factor out as the whole n x n matrix, the other triangle zero
// (column q needs no bound: n > 32). Not through stage_copy.cuh's stage_get_packed,
// the same mapping: with it the float32 kernel spilled (10 local stores in its SASS,
// nvcc 13.0).
template <typename T>
__device__ __forceinline__ void warp64_copy_out(T* __restrict__ g, const T* __restrict__ slot,
                                                int n, int q, bool upper) {
  const bool hi = q + 32 < n;
  for (int i = 0; i < n; ++i) {
    g[i * n + q] = (upper ? q >= i : q <= i) ? slot[warp64_slot_index(i, q, upper)] : T(0);
    if (hi) {
      const int j = q + 32;
      g[i * n + j] = (upper ? j >= i : j <= i) ? slot[warp64_slot_index(i, j, upper)] : T(0);
    }
  }
}

// Factors the staged matrix of order n at width W (n <= W). Returns info.
template <typename T, int W>
__device__ __forceinline__ int warp64_ragged_factor(T* slot, int n, int q, T* colbuf) {
  T a0[32], a1[W];
  warp64_load_rows(a0, a1, slot, PackedIndex{}, n, q);
  __syncwarp();  // every lane has read its rows before any L entry overwrites them
  return warp64_potrf(a0, a1, slot, PackedAccess{}, n, q, colbuf);
}

// The same, called rather than inlined: float64's rows at 64 take 192 of the 255
// registers, and inlined beside the loop over the group the kernel spilled 16 bytes;
// the callee has its own allocation and spills nothing (ptxas, nvcc 13.0).
template <typename T, int W>
__device__ __noinline__ int warp64_ragged_factor_call(T* slot, int n, int q, T* colbuf) {
  return warp64_ragged_factor<T, W>(slot, n, q, colbuf);
}

template <typename T, int W>
__device__ __forceinline__ int warp64_ragged_factor_at(T* slot, int n, int q, T* colbuf) {
  if constexpr (sizeof(T) == 8) {
    return warp64_ragged_factor_call<T, W>(slot, n, q, colbuf);
  } else {
    return warp64_ragged_factor<T, W>(slot, n, q, colbuf);
  }
}

// Blocks of kWarp64RaggedThreads per SM that the registers must allow: float32 at 128
// registers holds 16 warps per SM, as the fixed-size warp64 kernels do (unbounded,
// ptxas took 189); float64 needs 192 registers for its rows at 64 alone (8 warps).
template <typename T>
constexpr int warp64_ragged_min_blocks() {
  return sizeof(T) == 8 ? 2 : 4;
}

// The matrices of group g of a SizeGroups list with the contiguous layout (stride 0),
// sizes 33..kWarp64RaggedMaxN: warp w of the grid takes entries w, w + (warps in the
// grid), ... of the group's list.
template <typename T>
__global__ void __launch_bounds__(kWarp64RaggedThreads, warp64_ragged_min_blocks<T>())
    potrf_warp64_list_kernel(const T* __restrict__ A, T* __restrict__ L, int* __restrict__ info,
                             const int64_t* __restrict__ offsets, const int* __restrict__ sizes,
                             const int* __restrict__ counts, const int* __restrict__ list, int g,
                             bool upper) {
  extern __shared__ __align__(16) unsigned char warp_smem_raw[];
  const int warps = blockDim.x / 32, warp = threadIdx.x / 32, q = threadIdx.x % 32;
  // The warps' column buffers (16-byte reads), then their slots.
  T* const colbuf = reinterpret_cast<T*>(warp_smem_raw) + warp * kWarp64ColBuf;
  T* const slot = reinterpret_cast<T*>(warp_smem_raw) + warps * kWarp64ColBuf +
                  warp * kWarp64RaggedSlot;
  int begin, end;
  group_range(counts, g, g, begin, end);
  for (int i = begin + int(blockIdx.x) * warps + warp; i < end; i += int(gridDim.x) * warps) {
    const int b = list[i];
    const int n = sizes[b];
    const int64_t o = offsets[b];
    warp64_copy_in(slot, A + o, n, q, upper);
    __syncwarp();  // the other lanes' copies are in the slot
    // Warp-uniform: the narrowest width that holds n (float32 fixed-size: 33 0.765 ->
    // 0.689 ms at 40 against 64 wide, with_warp64_width in warp_chol_launch.cuh).
    int inf;
    if (n <= 40) {
      inf = warp64_ragged_factor_at<T, 40>(slot, n, q, colbuf);
    } else if (n <= 48) {
      inf = warp64_ragged_factor_at<T, 48>(slot, n, q, colbuf);
    } else {
      inf = warp64_ragged_factor_at<T, 64>(slot, n, q, colbuf);
    }
    __syncwarp();  // the factor's entries are in the slot
    warp64_copy_out(L + o, slot, n, q, upper);
    if (q == 0) info[b] = inf;
    __syncwarp();  // the slot is refilled by the warp's next matrix
  }
}

}  // namespace cuda
}  // namespace batchchol
