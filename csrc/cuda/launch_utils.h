// Host-side helpers shared by the CUDA launchers.
#pragma once

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

namespace batchchol {
namespace cuda {

// Largest dynamic shared memory a block may opt into on the current device.
inline size_t max_dynamic_smem() {
  return at::cuda::getCurrentDeviceProperties()->sharedMemPerBlockOptin;
}

// Whether a kernel's float64 MMA form (mma.m8n8k4.f64, dmma.cuh) runs: on sm_80 and later
// (the current device), unless the A/B switch `name` is 0 (read at every call).
inline bool float64_mma_on(const char* name) {
  const char* env = std::getenv(name);
  if (env != nullptr && std::strcmp(env, "0") == 0) return false;
  return at::cuda::getCurrentDeviceProperties()->major >= 8;
}

// Kernels needing more than the default 48 KB must opt in before launch, once per
// function and device (to the largest size launched so far): setting the attribute is
// a driver call, on every launch otherwise, and host time is most of a small ragged
// call. A few dozen kernels opt in, so a locked list will do; the attribute is set
// under the lock, so no thread launches before it is.
inline void allow_dynamic_smem_impl(const void* kernel, size_t bytes) {
  struct Entry {
    const void* kernel;
    int device;
    size_t bytes;
  };
  static std::mutex mutex;
  static std::vector<Entry> done;
  const int device = c10::cuda::current_device();
  const std::lock_guard<std::mutex> lock(mutex);
  Entry* entry = nullptr;
  for (Entry& e : done) {
    if (e.kernel == kernel && e.device == device) entry = &e;
  }
  if (entry && entry->bytes >= bytes) return;
  C10_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      static_cast<int>(bytes)));
  if (entry) {
    entry->bytes = bytes;
  } else {
    done.push_back({kernel, device, bytes});
  }
}

template <typename Kernel>
inline void allow_dynamic_smem(Kernel kernel, size_t bytes) {
  if (bytes <= 48 * 1024) return;
  allow_dynamic_smem_impl(reinterpret_cast<const void*>(kernel), bytes);
}

// Blocks of `kernel` (launched with `threads` and `smem`) resident on one SM: 0 where
// one block does not fit (a cooperative launch must then not be made).
template <typename Kernel>
inline int occupancy_per_sm(Kernel kernel, int threads, size_t smem) {
  int per_sm = 0;
  C10_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem));
  return per_sm;
}

// The same, at least 1 (an ordinary launch reports what does not fit).
template <typename Kernel>
inline int resident_per_sm(Kernel kernel, int threads, size_t smem) {
  return std::max(occupancy_per_sm(kernel, threads, smem), 1);
}

// occupancy_per_sm, remembered per (kernel, device, threads, smem): the occupancy query is
// a driver call, and some launchers ask it at every call (as allow_dynamic_smem_impl, a
// few entries under a lock). The kernel must already allow `smem` (allow_dynamic_smem).
template <typename Kernel>
inline int occupancy_per_sm_cached(Kernel kernel, int threads, size_t smem) {
  struct Entry {
    const void* kernel;
    int device;
    int threads;
    size_t smem;
    int per_sm;
  };
  static std::mutex mutex;
  static std::vector<Entry> done;
  const void* key = reinterpret_cast<const void*>(kernel);
  const int device = c10::cuda::current_device();
  const std::lock_guard<std::mutex> lock(mutex);
  for (const Entry& e : done) {
    if (e.kernel == key && e.device == device && e.threads == threads && e.smem == smem)
      return e.per_sm;
  }
  const int per_sm = occupancy_per_sm(kernel, threads, smem);
  done.push_back({key, device, threads, smem, per_sm});
  return per_sm;
}

template <typename Kernel>
inline int resident_per_sm_cached(Kernel kernel, int threads, size_t smem) {
  return std::max(occupancy_per_sm_cached(kernel, threads, smem), 1);
}

// A kernel's static shared memory (the driver's attributes; a call, so launchers that
// need it remember it per kernel).
template <typename Kernel>
inline size_t static_smem_bytes(Kernel kernel) {
  cudaFuncAttributes attr{};
  C10_CUDA_CHECK(cudaFuncGetAttributes(&attr, reinterpret_cast<const void*>(kernel)));
  return attr.sharedSizeBytes;
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
  return resident_grid(resident_per_sm_cached(kernel, threads, smem), needed);
}

inline unsigned int ceil_div(int64_t a, int64_t b) { return static_cast<unsigned int>((a + b - 1) / b); }

}  // namespace cuda
}  // namespace batchchol
