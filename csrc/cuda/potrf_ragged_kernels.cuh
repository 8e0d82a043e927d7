// Ragged-batch kernel for small matrices (max_n <= 32): NP lanes per matrix, rows in
// registers, as potrf_registers_kernel. The groups of one warp hold matrices of
// different sizes but must run the same shuffles, so every group factors NP x NP:
// its matrix padded with an identity block, whose factor is the identity again
// (and adds no info).
#pragma once

#include "cuda/batch_layout.cuh"
#include "cuda/potrf_device.cuh"

namespace batchchol {
namespace cuda {

template <typename T, int NP>
__global__ void potrf_ragged_registers_kernel(const T* __restrict__ A, T* __restrict__ L,
                                              int* __restrict__ info, int64_t batch,
                                              RaggedLayout lay, bool upper) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  constexpr int kPerBlock = 128 / NP;
  constexpr int pitch = NP + 1;
  const int group = threadIdx.x / NP, r = threadIdx.x % NP;
  const int64_t b = static_cast<int64_t>(blockIdx.x) * kPerBlock + group;
  const bool ours = b < batch && lay.mine(b);
  // Each binned launch covers the whole batch: a block with no matrix of this launch's
  // bin leaves before the (identity-padded) factorization that it would otherwise run.
  if (!__syncthreads_or(ours)) return;
  const bool valid = ours && lay.valid(b);
  const int n = valid ? lay.size(b) : 0;
  const int64_t origin = valid ? lay.origin(b) : 0;
  T* m = reinterpret_cast<T*>(smem_raw) + group * NP * pitch;

  // The group's lanes copy its matrix (contiguous in global memory) to shared memory,
  // transposed for upper so that the factor is always computed as a lower one.
  for (int e = r; e < n * n; e += NP) {
    const int i = e / n, j = e - i * n;
    m[(upper ? j : i) * pitch + (upper ? i : j)] = A[origin + e];
  }
  __syncthreads();
  T a[NP];
#pragma unroll
  for (int j = 0; j < NP; ++j)
    a[j] = r < n ? (j <= r && j < n ? m[r * pitch + j] : T(0)) : (j == r ? T(1) : T(0));
  const int inf = potrf_rows_in_registers<T, NP>(a, r, NP);
  if (r < n) {
#pragma unroll
    for (int j = 0; j < NP; ++j)
      if (j < n) m[r * pitch + j] = j <= r ? a[j] : T(0);
  }
  __syncthreads();
  for (int e = r; e < n * n; e += NP) {
    const int i = e / n, j = e - i * n;
    L[origin + e] = m[(upper ? j : i) * pitch + (upper ? i : j)];
  }
  if (ours && r == 0) info[b] = valid ? inf : lay.initial_info(b);
}

}  // namespace cuda
}  // namespace batchchol
