// One matrix factored by a whole tile block: staged into shared memory (tile_stage.cuh),
// factored on the unpacked stage (tile_chol.cuh) or the packed one (tile_packed.cuh), its
// factor written out tile column by tile column; and the fixed-size kernel, one matrix a
// block. The tile potrf launches (tile_potrf.cu, which also holds the ragged kernel) and
// tools/tile_packed_probe.cu (which times builds the library does not launch) run it.
#pragma once

#include <cstdint>

#include "cuda/tile_chol.cuh"
#include "cuda/tile_packed.cuh"
#include "cuda/tile_stage.cuh"

namespace batchchol {
namespace cuda {

// Factors the n x n matrix (nt tiles per side) at a into l with the whole block and
// stores its info at info[b] (an index, not a pointer held across the factorization:
// that changed the fixed-size kernel's register allocation). kPacked: the packed stage
// (tile_packed.cuh).
template <typename T, int NT, bool kMma, bool kPacked>
__device__ __forceinline__ void tile_factor_matrix(const TileSmem<T, kPacked>& sm, int* info_s,
                                                   const T* a, T* l, int n, int nt, bool upper,
                                                   int* info, int64_t b) {
  tile_stage_in<T, NT, kPacked>(sm.s, a, n, nt, upper);
  __syncthreads();
  const TileSegmentOut<T, kPacked> out{l, sm.s, n, nt, upper};
  int inf;
  if constexpr (kPacked) {
    inf = tile_potrf_packed<T, kMma>(sm.s, sm.cb, nt, info_s, a, n, upper, out);
  } else {
    inf = tile_potrf<T, kMma>(sm.s, sm.col, sm.cb, nt, info_s, out);
  }
  if (threadIdx.x == 0) info[b] = inf;
  out.segment(nt - 1, threadIdx.x, NT);
}

// A: [batch, n, n] contiguous; L likewise, not aliasing A. kMinBlocks: the blocks per SM
// the kernel is built for (tile_launch.h's tile_min_blocks).
template <typename T, int NT, bool kMma, bool kPacked, int kMinBlocks>
__global__ void __launch_bounds__(NT, kMinBlocks)
    potrf_tile_kernel(const T* __restrict__ A, T* __restrict__ L, int* __restrict__ info, int n,
                      int nt, bool upper) {
  extern __shared__ __align__(16) unsigned char tile_smem_raw[];
  __shared__ int info_s;
  const TileSmem<T, kPacked> sm(tile_smem_raw, nt);
  const int64_t b = blockIdx.x;
  const int64_t nn = int64_t(n) * n;
  tile_factor_matrix<T, NT, kMma, kPacked>(sm, &info_s, A + b * nn, L + b * nn, n, nt, upper,
                                           info, b);
}

}  // namespace cuda
}  // namespace batchchol
