// Launchers of the batched triangular-solve kernels, callable from plain C++ (or
// other .cu files) that already hold flattened, contiguous tensors, e.g. posv
// after its factorization. They launch on at::cuda::getCurrentCUDAStream() of
// the tensors' device, never synchronize the host (CUDA-graph safe), and do no
// input validation beyond internal-consistency TORCH_CHECKs: the caller has run
// the op checks of common/checks.h. Empty problems (batch, n or k = 0) launch nothing.
#pragma once

#include <ATen/ATen.h>

namespace batchchol {

// Kernel family of trsm / potrs for order n and k right-hand sides (measured on an
// H100, benchmarks/tune_trsm.py, 2026-11-22):
//   kColumns: one lane per right-hand-side column (trsm_cols_device.cuh), real types:
//             n <= 16, and n <= 32 with 8 or more columns.
//   kStream:  the streaming kernels (trsm_stream_device.cuh), which pack small systems
//             several to a tile: complex n <= 8, and complex n <= 16 with one or two
//             right-hand sides (float32 n = 4: 0.42 vs 3.9 ms for warp-per-system).
//   kBlock:   one block per system, the packed triangle in shared memory, several lanes
//             per column (trsm_block_device.cuh), real types, 17 <= n <= 128 with several
//             columns (from 4, 8, 16 or 17, by order, dtype and op; float64 n = 97..128 in
//             large batches from 17 columns except 32: trsm_pick_kernel).
//   kPanel:   one block of 4-8 warps per system and group of up to 16 columns, the
//             right-hand sides in shared memory and the matrix's tiles streamed
//             (trsm_panel_device.cuh), real types, n > 128 while the batch gives under
//             two blocks per SM (panel_preferred, trsm_panel_launch.h).
//   kWarp:    one warp per system and column group (trsm_kernels.cuh), everything else.
// benchmarks/tune_trsm.py times the families side by side. BATCHCHOL_TRSM_KERNEL =
// stream|warp|cols|block|panel forces one where it applies (read at every call; cols,
// block and panel fall back to the default for complex types, and for n > 32 / n > 128 /
// orders whose right-hand sides do not fit in shared memory).
enum class TrsmKernel { kWarp, kStream, kColumns, kBlock, kPanel };
// is_double: float64 (real); potrs: the two-pass solve of launch_potrs; batch: systems.
TrsmKernel trsm_pick_kernel(int64_t n, int64_t k, bool is_complex, bool is_double, bool potrs,
                            int64_t batch);

// Widest right-hand-side column group per warp of the warp-per-system kernels (0: the
// kernels' own limit, trsm_max_cpw). BATCHCHOL_TRSM_MAX_CPW=16|8|4 overrides it.
int trsm_max_columns_per_warp(int64_t n, int64_t k, bool is_double);

// Solves (L L^H) X = B (upper: U^H U X = B) for every system s of the batch.
//   L: [batch_a, n, n] contiguous; system s uses L + s * l_stride elements
//      (l_stride = n*n for one factor per system, 0 for one factor shared by all).
//      Only the lower (upper) triangle is read; the other one may hold anything.
//   B: [batch, n, k] contiguous.
//   X: [batch, n, k] contiguous, same dtype/device; may be the same tensor as B
//      (in-place), must not otherwise overlap B.
// One kernel: both substitutions of a system run in the same warp.
// a_transposed: L holds the transposes of the factors (a column-major factor read in
// place, common/batching.h); `upper` still describes the factors themselves.
void launch_potrs(const at::Tensor& L, int64_t l_stride, const at::Tensor& B, at::Tensor& X,
                  bool upper, bool a_transposed = false);

// trsm on flattened tensors, same conventions as launch_potrs:
//   A: [batch_a, n, n] contiguous, a_stride as l_stride above.
//   left:  op(A) X = B, B and X [batch, n, k];  right: X op(A) = B, B and X [batch, k, n];
//   op(A) = A^H if transpose else A; unit_diagonal: the diagonal is 1 and never read.
// X may be the same tensor as B (in-place).
// a_transposed as for launch_potrs.
void launch_trsm(const at::Tensor& A, int64_t a_stride, const at::Tensor& B, at::Tensor& X,
                 bool upper, bool left, bool transpose, bool unit_diagonal,
                 bool a_transposed = false);

}  // namespace batchchol
