// Launchers of the ragged-batch kernels on validated metadata (common/ragged.h),
// shared by the vbatched ops. Asynchronous on the current stream; no host sync.
#pragma once

#include <ATen/ATen.h>

#include "common/ragged.h"
#include "cuda/ragged_bins.h"
#include "cuda/ragged_prologue.h"

namespace batchchol {
namespace cuda {

// A buffer shaped like `values` for L: zero outside the valid blocks, uninitialized
// inside them (the potrf kernels write those in full). Asynchronous, no host sync.
at::Tensor ragged_matrix_output(const at::Tensor& values, const RaggedBatch& rb);

// A zeroed contiguous buffer shaped like `like`, cleared by a memset (at::zeros_like goes
// through TensorIterator's fill launch: several microseconds more host time).
at::Tensor zeroed_like(const at::Tensor& like);

// The grouping launch_potrf_ragged and launch_posv_ragged_fused take for a batch of this
// dtype and max_n (the fused prologue builds it ahead: ragged_prologue.h).
GroupPlan potrf_group_plan(at::ScalarType dtype, int64_t max_n);

// L (zeroed by the caller outside the blocks) and info for the matrices of A. grouped:
// the batch grouped as potrf_group_plan says, built ahead (null: grouped here).
void launch_potrf_ragged(const at::Tensor& A, at::Tensor& L, at::Tensor& info,
                         const RaggedBatch& rb, bool upper, const SizeGroups* grouped = nullptr);

// potrf_vbatched with its prologue (set up by ragged_prologue_setup, not launched) in one
// cooperative launch, where the plan sends every matrix to the warp family and
// launch_potrf_warp_one (warp_chol_launch.h) serves the call; BATCHCHOL_RAGGED_ONE=0 turns
// it off (A/B, tests; read at every call). Returns false, launching nothing, otherwise:
// then the caller launches the prologue and launch_potrf_ragged.
bool launch_potrf_ragged_one(const at::Tensor& A, const RaggedPrologue& p, const GroupPlan& plan,
                             bool upper);

// posv_vbatched in one pass where the factor stays on chip (the warp family: float32 and
// float64 with max_n <= 32, unless BATCHCHOL_VBATCHED_KERNEL names another family, and
// few right-hand sides: posv_vbatched_fused_max_k): L and info as launch_potrf_ragged, X
// (zeroed outside the blocks) = A^-1 B. Returns false, launching nothing, where it does
// not apply. grouped: as for launch_potrf_ragged.
bool launch_posv_ragged_fused(const at::Tensor& A, const at::Tensor& B, at::Tensor& X,
                              at::Tensor& L, at::Tensor& info, const RaggedBatch& rb, int64_t k,
                              bool upper, const SizeGroups* grouped = nullptr);

// X (B's layout, zeroed outside the blocks) = the solution of each system; potrs
// solves (L L^H) X = B with `upper` naming L's triangle, trsm as trsm_vbatched.
void launch_solve_ragged(const at::Tensor& A, const at::Tensor& B, at::Tensor& X,
                         const RaggedBatch& rb, int64_t k, bool potrs, bool upper, bool left,
                         bool transpose, bool unit_diagonal);

}  // namespace cuda
}  // namespace batchchol
