// The fused prologue of potrf_vbatched and posv_vbatched on CUDA for metadata on the
// device with max_n given (ragged_prologue_cuda.cu): the metadata checks, the zeros of L
// outside its blocks and the grouping by size class in two kernels (three for a
// two-pass grouping), where the separate steps (block_status_cuda, ragged_matrix_output,
// group_by_size) take five to eight GPU operations and two or three allocations beside L
// and info. Those calls are bound by host time for small batches, a few microseconds per
// GPU operation.
#pragma once

#include <ATen/ATen.h>
#include <c10/util/Optional.h>

#include <cstdint>

#include "common/ragged.h"
#include "cuda/ragged_bins.h"

namespace batchchol {
namespace cuda {

// The grouping a ragged potrf launch takes (group_by_size's arguments), or none.
struct GroupPlan {
  bool grouped = false;
  int warp_hi = 0, lo_n = 0, hi_n = 0;
};

// Whether the fused prologue serves a call: on unless BATCHCHOL_RAGGED_PROLOGUE=0 (an A/B
// switch read at every call), metadata (sizes, offsets, b_offsets when given) on the
// device, max_n given, 1..kRaggedFastStatusMax matrices.
bool ragged_prologue_applies(const at::Tensor& sizes, const at::Tensor& offsets,
                             const at::Tensor* b_offsets, const c10::optional<int64_t>& max_n);

struct RaggedPrologue {
  RaggedBatch rb;  // status: the merged one (matrices and right-hand sides)
  at::Tensor L;    // shaped like A; zero outside the valid blocks
  at::Tensor info; // int32 [count]; with plan.grouped, written for the matrices no group takes
  SizeGroups sg;   // plan.grouped: the batch grouped as group_by_size does
};

// The checks of prepare_ragged (a status per matrix, no host sync), L and info, and the
// grouping of `plan`, on the current stream. A: contiguous values; rhs: the right-hand
// sides' operand (null for potrf).
RaggedPrologue ragged_prologue(const char* op, const at::Tensor& A, const at::Tensor& sizes,
                               const at::Tensor& offsets, int64_t max_n, const RaggedRhs* rhs,
                               const GroupPlan& plan);

}  // namespace cuda
}  // namespace batchchol
