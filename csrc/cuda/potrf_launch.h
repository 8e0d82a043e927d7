// Launcher of the batched Cholesky kernels on raw device buffers (contiguous
// [batch, n, n] row-major), shared by potrf and the posv fallback.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace batchchol {
namespace cuda {

// L (may not alias A) receives the factor with the other triangle zeroed;
// info[batch] the LAPACK info. Asynchronous on `stream`.
template <typename T>
void launch_potrf(const T* A, T* L, int* info, int64_t batch, int n, bool upper,
                  cudaStream_t stream);

// Whether posv fuses its solve into the wide family's kernel for order n: where
// launch_potrf<T> runs wide (BATCHCHOL_POTRF_KERNEL forces it, or the size dispatch
// gives it), posv's L then potrf's bit for bit; and at float64 33..kPosvWideMaxN where
// potrf runs warp64 (33..48) or tile2 (49..64; the size dispatch's choices there, or
// forced), posv's L then another algorithm's, as accurate (tile4 or tile forced there
// give the fused tile kernel, posv_tile_warps, with potrf's bits). The fused tile kernel
// lost to wide's there (H200, posv_solve, 100,000 systems, one column, wide / tile: 56
// 3.168 / 3.293 ms, 64 3.228 / 3.333; results/h200-2026-11-28-tile-posv-ab.txt), and so
// did the fused warp64 one (warp_posv_max_n).
template <typename T>
bool posv_fuses_wide(int n);

// Warps per block of the tile family's fused posv for order n (tile_posv.cu): 4 or 8
// where launch_potrf<T> runs tile4 or tile on the unpacked stage (float64 65..96 by the
// size dispatch, and 97..128 without the MMA update; float32 65..192; forced, float64
// from 33) and posv does not fuse on wide; 0 elsewhere (tile2 included: the fused kernel
// has no two-warp form; and potrf's packed four-warp blocks, float64 97..128 with the
// MMA update: potrf + potrs beat the fused kernel there).
template <typename T>
int posv_tile_warps(int n);

// Whether one matrix of order n may go to cuSOLVER (potrf_single.cu): where launch_potrf<T>
// runs the multi-launch blocked family, and at float64 129..160, blocked's when the
// route was measured (tile16's from 145 since the thirty-ninth round, tile's since the
// forty-second: one tile block for one matrix has not been measured against cuSOLVER).
template <typename T>
bool potrf_single_candidate(int n);

}  // namespace cuda
}  // namespace batchchol
