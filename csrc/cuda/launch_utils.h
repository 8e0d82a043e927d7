// Host-side helpers shared by the CUDA launchers.
#pragma once

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

#include <cstddef>

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

inline unsigned int ceil_div(int64_t a, int64_t b) { return static_cast<unsigned int>((a + b - 1) / b); }

}  // namespace cuda
}  // namespace batchchol
