// Division by a divisor that is fixed for a whole launch but only known at run time
// (the matrix order n, n * n): one multiply-high and a shift instead of the ~20
// instructions of an integer division. Staging loops map every element of a batch
// chunk to its (matrix, row, column), so this is on their hot path.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace batchchol {
namespace cuda {

// Granlund-Montgomery: with l = ceil(log2 d) and m = floor(2^32 (2^l - d) / d) + 1,
// x / d = (umulhi(m, x) + x) >> l for every x < 2^31 (the sum is formed in 64 bits).
struct FastDiv {
  uint32_t d = 1, mul = 1, shift = 0;

  FastDiv() = default;
  // Host or device (a ragged kernel builds one per matrix).
  __host__ __device__ explicit FastDiv(uint32_t divisor) : d(divisor) {
    shift = 0;
    while ((uint64_t(1) << shift) < d) ++shift;
    mul = uint32_t(((uint64_t(1) << 32) * ((uint64_t(1) << shift) - d)) / d + 1);
  }

  __device__ __forceinline__ uint32_t div(uint32_t x) const {
    return uint32_t((uint64_t(__umulhi(mul, x)) + x) >> shift);
  }
  // q = x / d, r = x - q d.
  __device__ __forceinline__ void divmod(uint32_t x, uint32_t& q, uint32_t& r) const {
    q = div(x);
    r = x - q * d;
  }
};

}  // namespace cuda
}  // namespace batchchol
