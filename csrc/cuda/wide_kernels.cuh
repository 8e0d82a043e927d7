// Kernel templates of the wide potrf family (wide_chol.cuh): the fixed-size kernel, one
// matrix per block, and the ragged list kernel; instantiated and launched in
// wide_potrf.cu (the fused posv: wide_solve.cuh).
#pragma once

#include "cuda/batch_layout.cuh"
#include "cuda/wide_chol.cuh"
#include "cuda/wide_copy_out.cuh"

namespace batchchol {
namespace cuda {

// Blocks per SM the kernel is built for: the stage (n x (n | 1)) and registers allow
// six float64 64 x 64 matrices or three float32 128 x 128 ones on an H100.
template <int NW>
constexpr int wide_min_blocks() {
  return NW == 2 ? 6 : NW == 3 ? 4 : 3;
}

// Factors the n x n matrix at a (lay: its stage layout) into l with the whole block
// and stores its info at info[b]. vec: 16-byte staging copies (wide_stage.cuh). kFixed (the
// fixed-size kernel): the copies of order 32 NW as constants when n is that, and the
// phases split (wide_phase); the list kernel, whose matrices have many orders, keeps one
// copy loop and whole phases (each cost it spilled registers).
template <typename T, int NW, bool kFixed>
__device__ __forceinline__ void wide_factor_matrix(T* scratch, T* mat, const T* a, T* l,
                                                   const StageLayout& lay, bool upper, bool vec,
                                                   int* info, int64_t b) {
  const int nn = lay.n * lay.n;
  if constexpr (kFixed) {
    wide_stage_in_exact<T, 16, 32 * NW>(mat, a, nn, lay, vec, upper);
  } else {
    wide_stage_in<T, 16>(mat, a, nn, lay, vec, upper);
  }
  __syncthreads();
  if constexpr (kFixed && wide_band_out<NW>()) {
    T* const outbuf = scratch + wide_colbuf<NW>();
    const WideBandOut<T, NW> out{{outbuf, outbuf + 32 * NW, upper}, mat, l, lay.pitch, lay.n};
    const int inf = wide_potrf<T, NW, true>(scratch, mat, lay.pitch, lay.n, upper, WideNoRhs{},
                                            nullptr, out);
    __syncthreads();  // the last band's entries and pivots are staged
    if (threadIdx.x == 32 * (NW - 1)) info[b] = inf;
    out.band(32 * (NW - 1), threadIdx.x / 32, NW);
  } else {
    const int inf = wide_potrf<T, NW, kFixed>(scratch, mat, lay.pitch, lay.n, upper);
    __syncthreads();  // every step is done: the pivots are staged
    if (threadIdx.x == 32 * (NW - 1)) info[b] = inf;
    wide_store_factor<T, NW, kFixed>(scratch, mat, l, lay, upper, vec);
  }
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
