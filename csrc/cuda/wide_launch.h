// Launchers of the wide potrf family (wide_chol.cuh): one matrix per block, one row per
// lane, 33 <= n <= wide_max_n<T>() (float64 64, float32 128).
// Buffers are contiguous [batch, n, n], row-major; L does not alias A.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

namespace batchchol {
namespace cuda {

constexpr int kWideMinN = 33;

template <typename T>
constexpr int wide_max_n() {
  return std::is_same_v<T, float> ? 128 : std::is_same_v<T, double> ? 64 : 0;
}

void launch_potrf_wide(const float* A, float* L, int* info, int64_t batch, int n, bool upper,
                       cudaStream_t stream);
void launch_potrf_wide(const double* A, double* L, int* info, int64_t batch, int n, bool upper,
                       cudaStream_t stream);

}  // namespace cuda
}  // namespace batchchol
