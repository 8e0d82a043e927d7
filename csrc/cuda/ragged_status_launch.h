// Device-side validation of one operand of a ragged batch (ragged_status_cuda.cu), for
// metadata that lives on a CUDA device. Plain C++ header: ragged.cpp calls it in CUDA
// builds.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>

namespace batchchol {
namespace cuda {

// Most blocks served: past it, a batch whose blocks are out of offset order would make
// the pairwise overlap check quadratic, and ragged.cpp sorts instead.
constexpr int64_t kRaggedFastStatusMax = int64_t(1) << 16;

// Status of every block of one operand, int32 on the sizes' device, as the tensor version
// in ragged.cpp computes it: kNegativeSize / kSizeAboveMaxN from the size (limit = max_n),
// else range_code when the block (rows x cols, kSizeN meaning n_i) is not inside
// [0, numel), else overlap_code when it starts before a live block that comes earlier in
// offset order ends, else 0. sizes: int32 or int64; offsets: int64, both on the device.
// With want_clamped, also the sizes clamped to [0, limit] as int32; with a prior status
// (int32, contiguous, one per block: the matrices' when this operand is the right-hand
// side), also `merged`, the prior code where it is non-zero and this operand's
// elsewhere. No host sync; two launches on the current stream, one allocation.
struct BlockStatus {
  at::Tensor status, merged, clamped;
};
BlockStatus block_status_cuda(const at::Tensor& sizes, const at::Tensor& offsets, int64_t rows,
                              int64_t cols, int64_t numel, int64_t limit, int32_t range_code,
                              int32_t overlap_code, bool want_clamped,
                              const at::Tensor& prior = at::Tensor());

}  // namespace cuda
}  // namespace batchchol
