// Launchers of the warp family (warp_chol_kernels.cuh, warp64_chol.cuh): n <=
// warp_chol_max_n<T>(), 64 for float32 and 32 for float64. Up to 32 the orders are
// compile-time (padded); float32 33..64 runs one warp per matrix with a run-time column
// loop. (Unrolled orders up to 64 were measured on an H100, 2026-11-22: the kernels grow
// to 140-200 KB of code past n = 32 and run at 0.36 / 0.18 of the roofline for n = 48 /
// 64, against 0.75 for n = 16; benchmarks/KERNEL-NOTES.md.)
// Buffers are contiguous [batch, n, n] (A, L) and [batch, n, k] (B, X), row-major;
// launches go to `stream` and never synchronize the host.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

namespace batchchol {
namespace cuda {

// Largest n the family serves for T (0: the family does not serve T; complex types go
// through the generic kernels of potrf_kernels.cuh / posv_kernels.cuh).
template <typename T>
constexpr int warp_chol_max_n() {
  return std::is_same_v<T, float> ? 64 : std::is_same_v<T, double> ? 32 : 0;
}

// L (not aliasing A) receives the factor with the other triangle zeroed.
void launch_potrf_warp(const float* A, float* L, int* info, int64_t batch, int n, bool upper,
                       cudaStream_t stream);
void launch_potrf_warp(const double* A, double* L, int* info, int64_t batch, int n, bool upper,
                       cudaStream_t stream);

// X = A^-1 B with the factor on chip; L may be null (the factor is then not written).
// Returns false, launching nothing, when n is outside the family's range.
bool launch_posv_warp(const float* A, const float* B, float* X, float* L, int* info,
                      int64_t batch, int n, int k, bool upper, cudaStream_t stream);
bool launch_posv_warp(const double* A, const double* B, double* X, double* L, int* info,
                      int64_t batch, int n, int k, bool upper, cudaStream_t stream);

}  // namespace cuda
}  // namespace batchchol
