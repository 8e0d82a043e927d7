// Asynchronous global -> shared copies (cp.async, sm_80 and later) for software
// pipelines: a warp issues the copies of tiles it will need several steps later and
// keeps computing; loads of one element type (4, 8 or 16 bytes) bypass registers.
// On older architectures the copies are plain synchronous loads and stores, so the
// same kernels stay correct there (only the overlap is lost).
#pragma once

#include <cuda_runtime.h>

namespace batchchol {
namespace cuda {

template <typename T>
__device__ __forceinline__ void cp_async_elem(T* smem, const T* gmem) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8 || sizeof(T) == 16,
                "cp.async copies 4, 8 or 16 bytes");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(s), "l"(gmem),
               "n"(int(sizeof(T)))
               : "memory");
#else
  *smem = *gmem;
#endif
}

// As cp_async_elem, but writes zero instead of reading when !valid (then gmem is not
// read; it must still be a valid address, e.g. the matrix's base).
template <typename T>
__device__ __forceinline__ void cp_async_elem_or_zero(T* smem, const T* gmem, bool valid) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8 || sizeof(T) == 16,
                "cp.async copies 4, 8 or 16 bytes");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  const int src_bytes = valid ? int(sizeof(T)) : 0;
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(s), "l"(gmem),
               "n"(int(sizeof(T))), "r"(src_bytes)
               : "memory");
#else
  *smem = valid ? *gmem : T{};  // T{}: vector types (uint4) have no conversion from 0
#endif
}

// Closes the group of copies issued since the previous commit (possibly empty, which
// keeps the group count of a pipeline uniform at its tail).
__device__ __forceinline__ void cp_async_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

// Waits until at most N committed groups of this thread are still in flight. Other
// lanes' copies become visible only after a following __syncwarp / __syncthreads.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

}  // namespace cuda
}  // namespace batchchol
