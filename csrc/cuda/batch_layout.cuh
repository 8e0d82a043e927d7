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
