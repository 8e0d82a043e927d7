// Device-side grouping of a ragged batch by tile count (ragged_bins_cuda.cu), for the
// kernel families whose cost and shared memory are set by ceil(n / 32) rather than n:
// each group then runs in a launch sized for its tile count (shared memory, warps) whose
// block i takes the group's matrix i, instead of every launch sizing itself for the
// largest matrix of the batch.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>

#include "common/ragged.h"

namespace batchchol {
namespace cuda {

constexpr int kMaxTileGroups = 16;

// Matrices whose (validated) size is in [lo_n, hi_n], grouped by tile count from the
// largest: group g holds the matrices with ceil(n / 32) == nt_hi - g, g < groups. Built
// on the current stream without a host sync; the order inside a group is unspecified.
struct TileGroups {
  at::Tensor work;  // int32: counts[kMaxTileGroups], cursors[kMaxTileGroups], list[count]
  int nt_hi = 0;
  int groups = 0;
  const int* counts() const { return work.const_data_ptr<int>(); }
  const int* list() const { return work.const_data_ptr<int>() + 2 * kMaxTileGroups; }
};

// lo_n >= 1; ceil(hi_n / 32) - ceil(lo_n / 32) < kMaxTileGroups.
TileGroups group_by_tiles(const RaggedBatch& rb, int lo_n, int hi_n);

}  // namespace cuda
}  // namespace batchchol
