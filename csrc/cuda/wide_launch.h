// Launchers of the wide potrf family (wide_chol.cuh): one matrix per block, one row per
// lane, 33 <= n <= wide_max_n<T>() (float64 64, float32 128).
// Buffers are contiguous [batch, n, n] (or ragged), row-major; L does not alias A.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

namespace batchchol {
struct RaggedBatch;
namespace cuda {
struct SizeGroups;

constexpr int kWideMinN = 33;

template <typename T>
constexpr int wide_max_n() {
  return std::is_same_v<T, float> ? 128 : std::is_same_v<T, double> ? 64 : 0;
}

void launch_potrf_wide(const float* A, float* L, int* info, int64_t batch, int n, bool upper,
                       cudaStream_t stream);
void launch_potrf_wide(const double* A, double* L, int* info, int64_t batch, int n, bool upper,
                       cudaStream_t stream);

// Ragged batches: the matrices of group g of tg (ragged_bins.h), whose tile count
// (2..wide_max_n / 32) gives the warps per matrix, in one launch; their info
// entries are written, nothing else of the batch is touched.
void launch_potrf_wide_group(const float* A, float* L, int* info, const RaggedBatch& rb,
                             const SizeGroups& tg, int g, bool upper, cudaStream_t stream);
void launch_potrf_wide_group(const double* A, double* L, int* info, const RaggedBatch& rb,
                             const SizeGroups& tg, int g, bool upper, cudaStream_t stream);

}  // namespace cuda
}  // namespace batchchol
