// Device routines of the fused ragged prologue (ragged_prologue.h), in two phases with a
// grid-wide barrier between them (a kernel boundary, or a cooperative grid sync where one
// launch runs both and then the factorization: warp_ragged_one.cuh):
//   check   each operand's status before the overlap check, the clamped sizes, merged
//           (ragged_status_device.cuh); the gap after each block of L zeroed
//           (ragged_output_device.cuh), or a flag raised for a whole clear; the grouping's
//           counters zeroed
//   settle  the overlap check redone pairwise where a check flag was raised; then each
//           matrix's group from its final status (info for those no group takes), counted
//           or, in one pass, placed (ragged_bins_device.cuh); L cleared whole where a gap
//           flag or a right-hand side's check flag was raised
// Thread blocks of kStatusThreads threads; block b < nflags checks matrices
// b * kStatusThreads ...; every block takes part in a whole clear of L.
#pragma once

#include <cstdint>

#include "cuda/ragged_bins_device.cuh"
#include "cuda/ragged_output_device.cuh"
#include "cuda/ragged_prologue.h"
#include "cuda/ragged_status_device.cuh"

namespace batchchol {
namespace cuda {

static_assert(status_device::kStatusThreads >= 2 * kMaxSizeGroups,
              "block 0 zeroes the group counters");

// The check phase, for blocks [0, p.nflags) (uniform across a block: its barriers are safe).
template <typename IdxT>
__device__ __forceinline__ void prologue_check(const IdxT* __restrict__ n, const PrologueArgs& p) {
  using namespace status_device;
  const StatusArgs& a = p.status;
  const GapArgs& gap = p.gap;
  const int32_t code = check_blocks(n, a);
  const int64_t i = int64_t(blockIdx.x) * kStatusThreads + threadIdx.x;
  if (gap.out != nullptr) {
    bool whole = false;
    if (i < a.count) {
      const int64_t ni = code == 0 ? int64_t(n[i]) : 0;
      whole = !zero_gap_after(gap.out, gap.numel, gap.words, a.op[0].off, ni, code, i, a.count);
    }
    whole = __syncthreads_or(whole);
    if (threadIdx.x == 0) gap.flags[blockIdx.x] = whole ? 1 : 0;
  }
  // The settle phase, which counts, starts after every block of this one has finished.
  if (p.grp.counts != nullptr && blockIdx.x == 0 && threadIdx.x < 2 * kMaxSizeGroups)
    p.grp.counts[threadIdx.x] = 0;
}

// The settle phase, for every block of the grid: blocks [0, p.nflags) settle the statuses
// and group, all of them take part in the whole clear of L (the grid may be wider than
// the batch's blocks for a large L).
template <typename IdxT>
__device__ __forceinline__ void prologue_settle(const IdxT* __restrict__ n, const PrologueArgs& p) {
  using namespace status_device;
  const StatusArgs& a = p.status;
  const GapArgs& gap = p.gap;
  const GroupArgs& grp = p.grp;
  if (int(blockIdx.x) < p.nflags) {  // uniform across the block: its barriers are safe
    const int32_t code = settle_blocks(n, a, p.nflags);
    if (grp.counts != nullptr) {
      const int64_t i = int64_t(blockIdx.x) * kStatusThreads + threadIdx.x;
      const int g = i < a.count ? group_of(grp.key, code, code == 0 ? a.clamped[i] : 0, i, grp.info)
                                : -1;
      if (grp.stride > 0) {
        place_groups(g, i, grp.groups, grp.stride, grp.counts, nullptr,
                     grp.counts + 2 * kMaxSizeGroups);
      } else {
        count_groups(g, grp.counts);
      }
    }
  }
  if (gap.out == nullptr) return;
  // The gap checks saw each matrix's code before the overlap checks. For the matrices that
  // is enough: blocks that all pass them are disjoint, so no overlap is found later. A
  // right-hand side's overlap (-6) is not seen by them, and its matrix's block of L, which
  // no factorization then writes, needs the whole clear too.
  bool whole = false;
  for (int f = threadIdx.x; f < p.nflags; f += kStatusThreads)
    whole |= gap.flags[f] != 0 || (a.ops > 1 && a.op[1].flags[f] != 0);
  if (!__syncthreads_or(whole)) return;
  const int64_t words = gap.numel * gap.words;
  for (int64_t e = int64_t(blockIdx.x) * kStatusThreads + threadIdx.x; e < words;
       e += int64_t(gridDim.x) * kStatusThreads)
    gap.out[e] = 0u;
}

}  // namespace cuda
}  // namespace batchchol
