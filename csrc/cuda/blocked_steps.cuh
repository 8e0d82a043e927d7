// Where the blocked family's kernels (potrf_kernels.cuh, blocked_update.cuh) find
// their matrix and panel in a step of the launch sequence (launch_blocked_layout), and
// where they read the entries no launch has touched yet.
#pragma once

#include "cuda/potrf_block.cuh"

namespace batchchol {
namespace cuda {

// Each kernel finds its matrix through a Layout (batch_layout.cuh); the panel kernels
// get the step of the launch sequence and skip matrices that are not at a panel of
// theirs in that step.
template <typename Layout>
__device__ __forceinline__ bool panel_of(const Layout& lay, int64_t b, int step, int& n,
                                         int& k0) {
  if (!lay.mine(b) || !lay.valid(b)) return false;
  n = lay.size(b);
  k0 = (step - lay.first_step(b)) * kPanel;
  return k0 >= 0 && k0 < n;
}

// Where the blocked kernels read the entries that no launch has touched yet, when no
// init pass copied A to L (lower factors): A, which has L's layout, plus the group size
// and step count of the launch sequence (launch_blocked_layout). A matrix's first step
// (its panel at k0 = 0, panel_of) reads its diagonal block and panel from A, and so does
// the strip update after it (with strips; in left mode every step of the first group
// reads its panel from A, and no update runs before the group's end); the update after
// the last panel of its first group (aligned to launch steps) is the first to reach the
// columns past that group. a == nullptr: everything is read from L.
//
// `left`: the panels of a group after its first are brought up to date left-looking, by
// the diagonal and panel kernels of their own step (prior_panels), instead of by a
// rank-32 strip update after each panel. A panel's entries are then untouched until its
// own step in the matrix's first group, where those kernels read them from A.
template <typename T>
struct FirstTouch {
  const T* a = nullptr;
  int group = 1, steps = 0;
  bool left = false;
  __device__ __forceinline__ bool at_start(int k0) const { return a && k0 == 0; }
  // The end of the launch group that holds the matrix's first step (groups are aligned
  // to launch steps, so a lazily started matrix's first group may be short).
  __device__ __forceinline__ int first_group_end(int step, int k0) const {
    const int s0 = step - k0 / kPanel;
    return min(steps, (s0 / group + 1) * group);
  }
  // Whether the diagonal and panel kernels of this step read their panel from A.
  __device__ __forceinline__ bool panel_fresh(int step, int k0) const {
    return a && (left ? step < first_group_end(step, k0) : k0 == 0);
  }
  __device__ __forceinline__ bool in_update(int step, int k0, bool full) const {
    if (!a) return false;
    return k0 == 0 || (full && step == first_group_end(step, k0) - 1);
  }
  // Panels of this step's group (from the matrix's first) before this step's panel,
  // whose update of it the diagonal and panel kernels apply in left mode.
  __device__ __forceinline__ int prior_panels(int step, int k0) const {
    return left ? min(k0 / kPanel, step % group) : 0;
  }
};

}  // namespace cuda
}  // namespace batchchol
