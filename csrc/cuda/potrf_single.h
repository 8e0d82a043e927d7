// potrf of a single large matrix on cuSOLVER's dense potrf (potrf_single.cu).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace batchchol {
namespace cuda {

// Whether the potrf op sends this call (A flattened to [batch, n, n]) to potrf_single:
// one matrix of an order potrf_single_candidate names (the blocked family's, and float64
// 129..160), n >= 128, unless
// BATCHCHOL_POTRF_SINGLE=0, a family is forced (BATCHCHOL_POTRF_KERNEL), MAGMA is
// torch's preferred linalg library, or the current stream is capturing a CUDA graph.
bool potrf_single_applies(const at::Tensor& A, int64_t batch, int64_t n);

// Factors the one matrix of A ([1, n, n], contiguous) into L (contiguous, any shape of
// n * n elements) and sets info (one int32, the library's convention, NaN pivots
// included), on the current stream, without a host sync.
void potrf_single(const at::Tensor& A, bool upper, at::Tensor& L, at::Tensor& info);

}  // namespace cuda
}  // namespace batchchol
