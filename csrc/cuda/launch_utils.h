// Host-side helpers shared by the CUDA launchers.
#pragma once

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace batchchol {
namespace cuda {

// Largest dynamic shared memory a block may opt into on the current device.
inline size_t max_dynamic_smem() {
  return at::cuda::getCurrentDeviceProperties()->sharedMemPerBlockOptin;
}

// Kernels needing more than the default 48 KB must opt in before launch; the
// attribute is per function and device, and setting it again is cheap.
template <typename Kernel>
inline void allow_dynamic_smem(Kernel kernel, size_t bytes) {
  if (bytes > 48 * 1024) {
    C10_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(bytes)));
  }
}

// Blocks of `kernel` (launched with `threads` and `smem`) resident on one SM, at least 1.
template <typename Kernel>
inline int resident_per_sm(Kernel kernel, int threads, size_t smem) {
  int per_sm = 0;
  C10_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem));
  return std::max(per_sm, 1);
}

// Blocks of a persistent kernel (its warps loop over the work) that fill the current
// device, `per_sm` being resident per SM: as many as are resident at once, capped at
// `needed`, at least one.
inline int64_t resident_grid(int per_sm, int64_t needed) {
  const int64_t resident =
      int64_t(per_sm) * at::cuda::getCurrentDeviceProperties()->multiProcessorCount;
  return std::max<int64_t>(1, std::min(needed, resident));
}

template <typename Kernel>
inline int64_t resident_blocks(Kernel kernel, int threads, size_t smem, int64_t needed) {
  return resident_grid(resident_per_sm(kernel, threads, smem), needed);
}

inline unsigned int ceil_div(int64_t a, int64_t b) { return static_cast<unsigned int>((a + b - 1) / b); }

}  // namespace cuda
}  // namespace batchchol
