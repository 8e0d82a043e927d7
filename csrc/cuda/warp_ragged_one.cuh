// The warp family's ragged potrf and its prologue in one cooperative launch: the check
// and settle phases of ragged_prologue_device.cuh, then warp_classes_body over every order
// class, with a grid-wide barrier after each phase. For the calls it serves (max_n of
// 17..32, at most warp_one_max_count matrices, metadata on the device) three launches
// were most of the call: each one some microseconds of host time, and on the GPU a
// kernel boundary (the drain of one grid, the ramp of the next) between phases of one or
// two microseconds of work. The warp phase is persistent already (its grid is what is
// resident at once). H200, 5,000 float32 matrices of sizes 1..32: host time per call 52
// -> 24 us, GPU time 23 us in three kernels -> 28 in this one (the barriers, and the
// factorization's bound below): it wins where host time bounds the call.
#pragma once

#include <cooperative_groups.h>

#include "cuda/ragged_prologue_device.cuh"
#include "cuda/warp_chol_ragged.cuh"

namespace batchchol {
namespace cuda {

// The prologue's phases take blocks of kStatusThreads (their block-wide scans and flags).
constexpr int kWarpOneThreads = status_device::kStatusThreads;

// Most matrices the one launch takes: past them its factorization phase, at fewer warps
// per SM in float64 (8: 168 registers in blocks of 256 threads, against 12 for
// warp_classes_kernel's blocks of 128) and a little slower in float32 (more spills under
// its bound), costs more than the launches it saves. H200, uniform sizes 1..32, three
// launches -> one, ms (benchmarks/results/h200-2026-11-29-round52-one-launch-ab.txt):
// float32 5,000 matrices 0.0560 -> 0.0511 and 0.0493 -> 0.0439 (two machines), 8,192
// 0.0633 -> 0.0614, 12,000 0.0653 -> 0.0682; float64 2,000 0.0465 -> 0.0452, 4,096
// 0.0620 -> 0.0654, 5,000 0.0651 -> 0.0652 (skewed 0.0562 -> 0.0476), 12,000 0.0957 ->
// 0.1209.
template <typename T>
constexpr int64_t warp_one_max_count() {
  return sizeof(T) == 4 ? 8192 : 2048;
}

// Launched cooperatively (every block resident) with at least p.nflags blocks. Float32
// at two blocks per SM, 128 registers: the warps per SM of warp_classes_kernel's launch
// of every class (128 registers unbounded), where ptxas took 189 for this kernel.
template <typename T>
constexpr int warp_one_min_blocks() {
  return sizeof(T) == 4 ? 2 : 0;
}

template <typename T, typename IdxT>
__global__ void __launch_bounds__(kWarpOneThreads, warp_one_min_blocks<T>())
    warp_potrf_one_kernel(PrologueArgs p, WarpListArgs<T> a) {
  const cooperative_groups::grid_group grid = cooperative_groups::this_grid();
  const IdxT* n = static_cast<const IdxT*>(p.sizes);
  if (int(blockIdx.x) < p.nflags) prologue_check(n, p);
  grid.sync();
  prologue_settle(n, p);
  // The statuses, clamped sizes and the groups' counts and lists, written above by other
  // blocks, are read after this barrier by plain loads (WarpListArgs' pointers are not
  // restrict-qualified, so none goes through the read-only path).
  grid.sync();
  warp_classes_body<T, 0, kWarpOrderClasses - 1, false>(a);
}

}  // namespace cuda
}  // namespace batchchol
