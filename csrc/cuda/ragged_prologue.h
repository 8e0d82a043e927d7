// The fused prologue of potrf_vbatched and posv_vbatched on CUDA for metadata on the
// device with max_n given (ragged_prologue_cuda.cu, ragged_prologue_device.cuh): the
// metadata checks, the zeros of L outside its blocks and the grouping by size class in
// two kernels (three for a two-pass grouping; none of its own where the one-launch
// potrf runs its phases, warp_ragged_one.cuh), where the separate steps
// (block_status_cuda, ragged_matrix_output, group_by_size) take five to eight GPU
// operations and two or three allocations beside L and info. Those calls are bound by
// host time for small batches, a few microseconds per GPU operation.
#pragma once

#include <ATen/ATen.h>
#include <c10/util/Optional.h>

#include <cstdint>

#include "common/ragged.h"
#include "cuda/ragged_bins.h"
#include "cuda/ragged_status_launch.h"

namespace batchchol {
namespace cuda {

// The grouping a ragged potrf launch takes (group_by_size's arguments), or none.
struct GroupPlan {
  bool grouped = false;
  int warp_hi = 0, lo_n = 0, hi_n = 0;
  bool warp_only = false;  // every matrix to the warp family (its kernel choice for max_n)
};

// Whether the fused prologue serves a call: on unless BATCHCHOL_RAGGED_PROLOGUE=0 (an A/B
// switch read at every call), metadata (sizes, offsets, b_offsets when given) on the
// device, max_n given, 1..kRaggedFastStatusMax matrices.
bool ragged_prologue_applies(const at::Tensor& sizes, const at::Tensor& offsets,
                             const at::Tensor* b_offsets, const c10::optional<int64_t>& max_n);

// The arguments of the prologue's two phases (ragged_prologue_device.cuh), plain data.
// L as 32-bit words (every dtype's element is a whole number of them); flags: one word
// per thread block of the check phase, raised where L needs a whole clear.
struct GapArgs {
  uint32_t* out;  // null: L is empty
  int64_t numel;  // elements
  int words;      // per element
  int32_t* flags;
};

struct GroupArgs {
  SizeKey key;
  int groups, stride;
  int* counts;  // null: no grouping (counts, cursors, list follow)
  int* info;
};

struct PrologueArgs {
  status_device::StatusArgs status;
  GapArgs gap;
  GroupArgs grp;
  int nflags;         // thread blocks of the check phase (kStatusThreads matrices each)
  const void* sizes;  // the batch's sizes, int32 or int64 (sizes64)
  bool sizes64;
};

struct RaggedPrologue {
  RaggedBatch rb;  // status: the merged one (matrices and right-hand sides)
  at::Tensor L;    // shaped like A; zero outside the valid blocks
  at::Tensor info; // int32 [count]; with plan.grouped, written for the matrices no group takes
  SizeGroups sg;   // plan.grouped: the batch grouped as group_by_size does
  // What launch_ragged_prologue runs, or a kernel that runs both phases itself (the
  // warp family's one-launch potrf: launch_potrf_ragged_one); holds the sizes' tensor.
  PrologueArgs args;
  at::Tensor sizes;
};

// The checks of prepare_ragged (a status per matrix, no host sync), L and info, and the
// grouping of `plan`, on the current stream. A: contiguous values; rhs: the right-hand
// sides' operand (null for potrf).
RaggedPrologue ragged_prologue(const char* op, const at::Tensor& A, const at::Tensor& sizes,
                               const at::Tensor& offsets, int64_t max_n, const RaggedRhs* rhs,
                               const GroupPlan& plan);

// ragged_prologue in two steps: the allocations and arguments, then the launches (two or
// three kernels), so that a caller may run the phases in a launch of its own instead.
RaggedPrologue ragged_prologue_setup(const char* op, const at::Tensor& A, const at::Tensor& sizes,
                                     const at::Tensor& offsets, int64_t max_n,
                                     const RaggedRhs* rhs, const GroupPlan& plan);
void launch_ragged_prologue(const RaggedPrologue& p);

}  // namespace cuda
}  // namespace batchchol
