// Where matrix b of a batch lives, for kernels shared by fixed-size and ragged
// batches (MAGMA's vbatched idea: the same device routines, with n and the matrix
// pointer read per matrix instead of being uniform).
//
// A layout answers: is matrix b valid, its size, its first element (offset in the
// buffer), its info before factoring, and at which panel step it starts. Ragged
// batches may start late ("lazy" scheduling): matrix b then starts at step
// steps - panels(n_b), so that every matrix finishes on the last step of the
// launch sequence, instead of the small ones finishing early ("greedy", 0).
// A launch may also serve one bin of sizes only ([lo, hi]; "binned" dispatch): the
// other matrices are not its to touch (mine() false: no reads, no writes, no info).
#pragma once

#include <climits>
#include <cstdint>

namespace batchchol {
namespace cuda {

struct DenseLayout {
  static constexpr bool kListed = false;  // a grid slot per matrix (ListedLayout)
  int n;
  __device__ __forceinline__ bool mine(int64_t) const { return true; }
  __device__ __forceinline__ bool valid(int64_t) const { return true; }
  __device__ __forceinline__ int size(int64_t) const { return n; }
  __device__ __forceinline__ int64_t origin(int64_t b) const { return b * n * n; }
  __device__ __forceinline__ int initial_info(int64_t) const { return 0; }
  __device__ __forceinline__ int first_step(int64_t) const { return 0; }
  bool first_step_varies() const { return false; }
};

struct RaggedLayout {
  static constexpr bool kListed = false;
  const int64_t* offsets;
  const int* sizes;
  const int* status;  // null when the metadata was validated on the host
  int steps;          // panel steps of the whole launch sequence (0: not blocked)
  bool lazy;
  int lo = 0, hi = INT_MAX;  // the bin of sizes this launch serves
  // Matrices with invalid metadata belong to the launch whose bin starts at 0.
  __device__ __forceinline__ bool mine(int64_t b) const {
    if (status && status[b] != 0) return lo == 0;
    return sizes[b] >= lo && sizes[b] <= hi;
  }
  __device__ __forceinline__ bool valid(int64_t b) const { return !status || status[b] == 0; }
  __device__ __forceinline__ int size(int64_t b) const { return sizes[b]; }
  __device__ __forceinline__ int64_t origin(int64_t b) const { return offsets[b]; }
  __device__ __forceinline__ int initial_info(int64_t b) const { return status ? status[b] : 0; }
  __device__ __forceinline__ int first_step(int64_t b) const {
    return lazy ? steps - (sizes[b] + 31) / 32 : 0;
  }
  bool first_step_varies() const { return lazy; }
};

// A ragged layout over a device-side list of some of its matrices: groups [0, groups)
// of a two-pass grouping by size (SizeGroups, ragged_bins.h), the largest first. The
// host does not know the list's length, so the blocked launches over it take grids
// capped at a few waves whose blocks (or warps) loop over the list's items (blocked_grid,
// potrf_layout_launch.cuh; listed_items below): a grid of a slot per matrix of the
// whole batch spent most of a skewed batch's time in blocks with nothing to do (H100,
// 5,000 float64 matrices of which 50 of order 512: 1.71 ms of kernels, 0.78 for the 50
// alone).
// A list entry is a matrix this launch serves (mine() and valid()).
struct ListedLayout : RaggedLayout {
  static constexpr bool kListed = true;
  const int* counts = nullptr;
  const int* list = nullptr;
  int groups = 0;
  __device__ __forceinline__ int entries() const {
    int e = 0;
    for (int g = 0; g < groups; ++g) e += counts[g];
    return e;
  }
  __device__ __forceinline__ int64_t matrix(int64_t slot) const { return list[slot]; }
};

// Runs body(b, y) for the work items first, first + stride, ... of a listed layout's
// launch, below entries() x per (item u: matrix list[u / per], y = u % per), with sync()
// after each: body may return early from an item, and the items of a block (or warp)
// are uniform over it, so every thread reaches the same sync() calls.
template <typename Layout, typename Body, typename Sync>
__device__ __forceinline__ void listed_items(const Layout& lay, int64_t first, int64_t stride,
                                             int per, Body&& body, Sync&& sync) {
  const int64_t end = int64_t(lay.entries()) * per;
  for (int64_t u = first; u < end; u += stride) {
    body(lay.matrix(u / per), int(u % per));
    sync();
  }
}

// [begin, end) of groups g_lo..g_hi in a list grouped by the counts of its groups
// (SizeGroups, ragged_bins.h).
__device__ __forceinline__ void group_range(const int* counts, int g_lo, int g_hi, int& begin,
                                            int& end) {
  begin = 0;
  end = 0;
  for (int g = 0; g <= g_hi; ++g) {
    if (g == g_lo) begin = end;
    end += counts[g];
  }
}

}  // namespace cuda
}  // namespace batchchol
