// Fused factor-and-solve (posv) kernels: A and B are read once, the factor stays
// on chip between the factorization and both triangular solves, X and L are
// written once.
//
// Upper factors: with L' the lower factor of A^T, A = conj(L') L'^T, so
// A x = b  <=>  L' L'^H conj(x) = conj(b). The kernels solve with L' on conj(b).
#pragma once

#include "cuda/potrf_kernels.cuh"

namespace batchchol {
namespace cuda {

template <typename T>
__device__ __forceinline__ T conj_if(T v, bool c) {
  return c ? conj_(v) : v;
}

// Plain coalesced copy of `count` consecutive elements, conjugated on request.
template <typename T>
__device__ __forceinline__ void copy_block(T* dst, const T* src, int count, bool conj) {
  for (int e = threadIdx.x; e < count; e += blockDim.x) dst[e] = conj_if(src[e], conj);
}

// n <= 32: NP lanes per system; matrices and right-hand sides staged in shared memory.
template <typename T, int NP>
__global__ void posv_registers_kernel(const T* __restrict__ A, const T* __restrict__ B,
                                      T* __restrict__ X, T* __restrict__ L,
                                      int* __restrict__ info, int64_t batch, int n, int k,
                                      bool upper) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  constexpr int kPerBlock = 128 / NP;
  const int pitch = smem_pitch(n);
  T* s = reinterpret_cast<T*>(smem_raw);
  T* sb = s + kPerBlock * n * pitch;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * kPerBlock;
  const int count = static_cast<int>(batch - first < kPerBlock ? batch - first : kPerBlock);
  const bool conj_rhs = upper && IsComplex<T>::value;

  load_matrices(s, A + first * n * n, count, n, pitch, upper);
  copy_block(sb, B + first * n * k, count * n * k, conj_rhs);
  __syncthreads();

  const int group = threadIdx.x / NP, r = threadIdx.x % NP;
  const bool valid = group < count;
  T* m = s + group * n * pitch;
  T a[NP];
  const int inf = factor_staged_rows<T, NP>(m, pitch, n, r, valid, a);
  __syncwarp();
  // The backward solve needs L's columns: lane r takes column r from shared memory.
  T col[NP];
#pragma unroll
  for (int i = 0; i < NP; ++i) col[i] = (valid && r < n && i >= r && i < n) ? m[i * pitch + r] : T(0);
  T* bm = sb + group * n * k;
  for (int c = 0; c < k; ++c) {
    T b = (valid && r < n) ? bm[r * k + c] : T(0);
    potrs_rows_in_registers<T, NP>(a, col, b, r, n);
    if (valid && r < n) bm[r * k + c] = b;
  }
  if (valid && r == 0) info[first + group] = inf;
  __syncthreads();
  store_matrices(L + first * n * n, s, count, n, pitch, upper);
  copy_block(X + first * n * k, sb, count * n * k, conj_rhs);
}

}  // namespace cuda
}  // namespace batchchol
