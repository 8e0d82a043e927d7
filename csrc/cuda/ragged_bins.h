// Device-side grouping of a ragged batch by size class (ragged_bins_cuda.cu), so that
// each class runs in a launch sized for it (compile-time order, shared memory, warps)
// instead of every launch sizing itself for the largest matrix of the batch:
//   tile part  (warp64 or wide for 33..64, the tile family past it, whose cost and
//              shared memory are set by ceil(n / 32)): group g < groups holds the sizes in [lo_n, hi_n] with
//              ceil(n / 32) == nt_hi - g, the largest first;
//   warp part  (the warp family, n <= 32): group groups + c, c < warp_classes, holds
//              the sizes of order class c (warp_order_class, warp_chol_launch.h).
// A launch's block or warp then takes entries of its group's list.
#pragma once

#include <ATen/ATen.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "common/ragged.h"

namespace batchchol {
namespace cuda {

// Groups of the tile part (tile counts) and of the whole grouping: the tile part's
// plus the warp family's order classes (kWarpOrderClasses, asserted where both are seen).
constexpr int kMaxTileGroups = 16;
constexpr int kMaxSizeGroups = kMaxTileGroups + 16;

// Tile counts ceil(n / 32) of the sizes lo_n..hi_n (at most 0 for hi_n < lo_n): the tile
// part's groups, at most kMaxTileGroups.
constexpr int tile_group_count(int lo_n, int hi_n) {
  return (hi_n + 31) / 32 - (lo_n + 31) / 32 + 1;
}

// Built on the current stream without a host sync; the order inside a group is
// unspecified.
struct SizeGroups {
  // int32: counts[kMaxSizeGroups], cursors[kMaxSizeGroups], list[count] (one pass:
  // list[(groups + warp_classes) * stride], the counts serving as cursors)
  at::Tensor work;
  int nt_hi = 0;
  int groups = 0;        // groups of the tile part
  int warp_classes = 0;  // groups of the warp part
  // 0: group g's entries follow those of the groups before it (two passes over the
  // sizes, a count and a placement); > 0: they start at list()[g * stride] (one pass,
  // each group with room for the whole batch: small batches without a tile part, whose
  // calls are bound by host time and the number of GPU operations).
  int stride = 0;
  // Where counts start in work (a grouping built by the fused prologue shares its
  // buffer with the statuses: ragged_prologue.h).
  int64_t base = 0;
  // group_by_size's arguments, checked by the launches that take a grouping built ahead.
  int warp_hi = 0, lo_n = 0, hi_n = 0;
  const int* counts() const { return work.const_data_ptr<int>() + base; }
  const int* list() const { return counts() + 2 * kMaxSizeGroups; }
  int warp_group(int c) const { return groups + c; }
  bool holds(int warp_hi_, int lo_n_, int hi_n_) const {
    const bool tiles = hi_n_ >= lo_n_;
    return warp_hi == warp_hi_ && (tiles ? lo_n == lo_n_ && hi_n == hi_n_ : groups == 0);
  }
};

// Sizes 1..warp_hi (<= 32; 0: no warp part) go to the warp part, sizes lo_n..hi_n
// (lo_n > warp_hi, at most kMaxTileGroups tile counts; hi_n < lo_n: no tile part) to the
// tile part.
// With `info`, the matrices that no launch of a family takes, n = 0 and those with
// invalid metadata (rb.status), get their info here (0, or their status).
// Batches of at most kOnePassGroupMax matrices with no tile part are grouped in one
// pass (stride > 0); the tile part's launches need the contiguous layout (a launch may
// take several consecutive groups).
constexpr int64_t kOnePassGroupMax = int64_t(1) << 16;
SizeGroups group_by_size(const RaggedBatch& rb, int warp_hi, int lo_n, int hi_n, int* info);

// How sizes map to groups: sizes 1..warp_hi to the warp part, lo_n..hi_n to the tile
// part's tile_groups groups (size_group, ragged_bins_device.cuh). Plain data: the fused
// prologue's arguments hold one (ragged_prologue.h).
struct SizeKey {
  int warp_hi, lo_n, hi_n, nt_hi, tile_groups;
};

inline SizeKey size_key(const SizeGroups& sg) {
  const bool tiles = sg.groups > 0;
  return SizeKey{sg.warp_hi, tiles ? sg.lo_n : 1, tiles ? sg.hi_n : 0, sg.nt_hi, sg.groups};
}

// The steps of group_by_size for the fused prologue (ragged_prologue_cuda.cu), which
// counts (or, in one pass, places) in its own kernel: the grouping's layout for `count`
// matrices (no allocation; work undefined), the int32 words its work buffer takes, and
// the placement pass of a two-pass grouping whose counts are final (rb.status final).
SizeGroups size_group_layout(int64_t count, int warp_hi, int lo_n, int hi_n);
int64_t size_group_words(const SizeGroups& sg, int64_t count);
void place_size_groups(const RaggedBatch& rb, const SizeGroups& sg, cudaStream_t stream);

}  // namespace cuda
}  // namespace batchchol
