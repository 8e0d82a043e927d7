// potrf_vbatched on CUDA: kernel family by the largest size of the batch.
//   warp        (default for max_n <= 32, real dtypes) the fixed-size warp family's
//               per-matrix routine (warp_chol_ragged.cuh): the batch grouped by order
//               class on the device (ragged_bins.h), each matrix at its class's
//               compile-time order, three launches for the orders <= 8, <= 16, <= 32
//               (one for small batches: warp_chol_launch.cuh; with the fused prologue,
//               that one launch runs the prologue too: warp_ragged_one.cuh)
//   registers   (default for max_n <= 32, complex dtypes) NP lanes per matrix,
//               identity-padded to NP, one launch per NP in 4, 8, 16, 32 (each matrix at
//               the smallest that holds it)
//   shared      one block per matrix in shared memory (max_n must fit)
//   greedy      blocked panels, every matrix starting at the first step
//   lazy        blocked panels, each matrix starting so that all end on the last step
//   binned      (default for max_n past the tile family's largest order) the warp
//               family's grouped launches (registers for complex dtypes) for the
//               matrices with n <= 32 and lazy for the others, over a device-side
//               list of them for real dtypes up to max_n = 544 (ragged_listed_blocked)
//   tile        (default for 32 < max_n <= tile_max_n, real dtypes) warp for n <= 32, one
//               warp per matrix for 33..64 (warp64_ragged.cuh; the wide family,
//               wide_chol.cuh, with BATCHCHOL_RAGGED_WARP64=0), the tile family
//               (tile_chol.cuh) up to tile_max_n, lazy for the rest; the matrices grouped
//               by size class on the device (ragged_bins.h), the warp part as for warp,
//               then one launch per group with that group's shared memory and warps
//   tile-one    as tile, but one launch for all the tile family's groups, with the
//               largest group's shared memory
// BATCHCHOL_VBATCHED_KERNEL names one where it applies (benchmarks/bench_vbatched.py
// compares them).
#include <ATen/Dispatch.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "common/ops_vbatched.h"
#include "common/ragged.h"
#include "cuda/launch_utils.h"
#include "cuda/potrf_layout_launch.cuh"
#include "cuda/potrf_ragged_kernels.cuh"
#include "cuda/ragged_bins.h"
#include "cuda/ragged_launch.h"
#include "cuda/stream_fanout.h"
#include "cuda/tile_launch.h"
#include "cuda/warp_chol_launch.h"
#include "cuda/wide_launch.h"

namespace batchchol {
namespace cuda {

namespace {

enum class RaggedKernel { kWarp, kRegisters, kShared, kGreedy, kLazy, kBinned, kTile, kTileOne };
constexpr const char* kRaggedKernelNames[] = {"warp",   "registers", "shared", "greedy",
                                              "lazy",   "binned",    "tile",   "tile-one"};
constexpr int kRaggedKernelCount = 8;
constexpr int kSmallBin = 32;  // the registers and warp kernels' largest n
// Streams over which the launches of the binned and tile dispatches go
// (stream_fanout.h; BATCHCHOL_RAGGED_STREAMS overrides).
constexpr int kRaggedStreams = 3;

// Streams for potrf_vbatched's launches (stream_fanout.h; BATCHCHOL_RAGGED_STREAMS
// overrides). Where every matrix goes to the warp family, one (host time is most of those
// calls, and the fork and joins add to it) unless its three order ranges take a launch
// each (past kWarpOneLaunchMax matrices, max_n > 16), so that their tails overlap. H200,
// 50,000 matrices, one / three streams, ms (results/h200-2026-11-29-round51-streams-ab.txt):
// max_n = 32 float32 uniform 0.145 / 0.138, gaussian 0.136 / 0.115, skewed 0.051 /
// 0.043, float64 0.235 / 0.229, 0.208 / 0.194, 0.049 / 0.046; but max_n = 16 (two
// launches) float32 uniform 0.060 / 0.068, and posv_vbatched's fused launches float32
// uniform 0.198 / 0.208 (float64 gaussian 0.326 / 0.320): they keep one.
int fanout_width(int max_n, int64_t count) {
  return max_n > kSmallBin || (count > kWarpOneLaunchMax && max_n > 16) ? kRaggedStreams : 1;
}

// Whether the warp family serves T up to kSmallBin (float32 and float64).
template <typename T>
constexpr bool warp_serves() {
  return warp_chol_max_n<T>() >= kSmallBin;
}

// Largest size the tile family takes in a batch of sizes up to max_n (its share is
// kSmallBin + 1 .. that), or 0 where it takes none: complex dtypes, max_n <= kSmallBin,
// or a device whose shared memory does not hold the tiles.
// BATCHCHOL_RAGGED_TILE_HI caps that share (a tuning switch read at every call; 64 in
// float64 leaves the warp64 (or wide) launch alone there, lazy blocked launches taking
// the rest).
template <typename T>
int tile_share_hi(int max_n) {
  int cap = tile_max_n<T>();
  if (const char* env = std::getenv("BATCHCHOL_RAGGED_TILE_HI")) cap = std::min(cap, std::atoi(env));
  const int hi = std::min(max_n, cap);
  return hi > kSmallBin && tile_fits(hi, sizeof(T)) ? hi : 0;
}

// Whether binned's lazy blocked launches go over a device-side list of the matrices past
// kSmallBin (ListedLayout, batch_layout.cuh) instead of grids with a slot for every
// matrix of the batch: where the grouping holds their sizes (at most kMaxTileGroups
// tile counts: max_n <= 544). BATCHCHOL_RAGGED_LISTED=0 turns it off (A/B; read at
// every call).
bool ragged_listed_blocked(int max_n) {
  const char* env = std::getenv("BATCHCHOL_RAGGED_LISTED");
  if (env != nullptr && std::strcmp(env, "0") == 0) return false;
  return tile_group_count(kSmallBin + 1, max_n) <= kMaxTileGroups;
}

// Whether binned's blocked launches start every matrix at the first step (greedy)
// instead of lazily: BATCHCHOL_RAGGED_BINNED_GREEDY=1 (an A/B switch, read at every call).
bool binned_greedy_starts() {
  const char* env = std::getenv("BATCHCHOL_RAGGED_BINNED_GREEDY");
  return env != nullptr && std::strcmp(env, "1") == 0;
}

// Whether the group of sizes 33..64 runs the warp64 list kernel (one warp per matrix,
// warp64_ragged.cuh) instead of the wide family's (a block of two warps per matrix):
// H200, 12,500 matrices of sizes 33..64, float64 0.532 -> 0.374 ms, float32 0.422 ->
// 0.212; Nmax = 128 gaussian, 50,000 matrices, 3.20 -> 2.90 / 2.08 -> 1.72
// (benchmarks/results/h200-2026-11-28-round50-warp64-ab.txt).
// BATCHCHOL_RAGGED_WARP64=0 turns it off (A/B; read at every call); so does a device
// whose blocks cannot take the kernel's shared memory (launch_potrf_warp64_group).
bool ragged_warp64() {
  const char* env = std::getenv("BATCHCHOL_RAGGED_WARP64");
  return env == nullptr || std::strcmp(env, "0") != 0;
}

template <typename T>
bool ragged_kernel_applies(RaggedKernel k, int max_n) {
  switch (k) {
    case RaggedKernel::kWarp: return warp_serves<T>() && max_n <= kSmallBin;
    case RaggedKernel::kRegisters: return max_n <= kSmallBin;
    case RaggedKernel::kShared: return shared_fits<T>(max_n);
    case RaggedKernel::kTile:
    case RaggedKernel::kTileOne:
      return tile_share_hi<T>(max_n) > 0 &&
             (max_n <= tile_share_hi<T>(max_n) || blocked_fits<T>(max_n));
    default: return blocked_fits<T>(max_n);  // the blocked families, binned's second launch
  }
}

template <typename T>
RaggedKernel choose_ragged_kernel(int max_n) {
  if (const char* forced = std::getenv("BATCHCHOL_VBATCHED_KERNEL")) {
    for (int i = 0; i < kRaggedKernelCount; ++i) {
      const auto k = static_cast<RaggedKernel>(i);
      if (std::strcmp(forced, kRaggedKernelNames[i]) == 0 && ragged_kernel_applies<T>(k, max_n))
        return k;
    }
  }
  if (max_n <= kSmallBin) return warp_serves<T>() ? RaggedKernel::kWarp : RaggedKernel::kRegisters;
  // Past the tile family's largest order the lazy blocked launches run anyway, and the
  // matrices of 33..tile_max_n cost less riding along in their last steps than in wide
  // and tile launches of their own (H100, 5,000 matrices of Nmax = 512: lazy alone beat
  // the tile dispatch by 1-7% in 10 of 12 rows, benchmarks/KERNEL-NOTES.md).
  if (max_n > tile_max_n<T>() && ragged_kernel_applies<T>(RaggedKernel::kBinned, max_n))
    return RaggedKernel::kBinned;
  if (ragged_kernel_applies<T>(RaggedKernel::kTile, max_n)) return RaggedKernel::kTile;
  if (ragged_kernel_applies<T>(RaggedKernel::kLazy, max_n)) return RaggedKernel::kBinned;
  TORCH_CHECK_VALUE(ragged_kernel_applies<T>(RaggedKernel::kShared, max_n), kPotrfV,
                    ": max_n = ", std::to_string(max_n),
                    " is larger than the CUDA kernels support (pass a tighter max_n)");
  return RaggedKernel::kShared;
}

template <typename T, int NP>
void launch_registers_ragged(const T* A, T* L, int* info, int64_t count, RaggedLayout lay,
                             bool upper, cudaStream_t stream) {
  constexpr int kPerBlock = 128 / NP;
  const size_t smem = sizeof(T) * kPerBlock * NP * (NP + 1);
  auto kernel = potrf_ragged_registers_kernel<T, NP>;
  allow_dynamic_smem(kernel, smem);
  kernel<<<ceil_div(count, kPerBlock), 128, smem, stream>>>(A, L, info, count, lay, upper);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

// The registers kernel over the sizes 0..max_small, one launch per padded order, each
// serving its bin (lay.lo / lay.hi), so that a matrix runs at the smallest order that
// holds it: a single launch at max_small's order put 32 lanes on each 3 x 3 matrix of a
// skewed batch (H100: 0.42 ms against 0.18 for per-size torch calls, 50,000 float64
// matrices). The first bin starts at 0, which also gives it the invalid matrices.
template <typename T>
void launch_registers_bins(const T* A, T* L, int* info, int64_t count, RaggedLayout lay,
                           int max_small, bool upper, cudaStream_t stream) {
  lay.lo = 0;
  lay.hi = 4;
  launch_registers_ragged<T, 4>(A, L, info, count, lay, upper, stream);
  if (max_small <= 4) return;
  lay.lo = 5;
  lay.hi = 8;
  launch_registers_ragged<T, 8>(A, L, info, count, lay, upper, stream);
  if (max_small <= 8) return;
  lay.lo = 9;
  lay.hi = 16;
  launch_registers_ragged<T, 16>(A, L, info, count, lay, upper, stream);
  if (max_small <= 16) return;
  lay.lo = 17;
  lay.hi = kSmallBin;
  launch_registers_ragged<T, kSmallBin>(A, L, info, count, lay, upper, stream);
}

// The tile groups of sg and the group of 33..64 (warp64 or wide; none when sg.groups =
// 0), largest sizes first, as launches first.. of `streams` (LaunchStreams::pole_first).
template <typename T>
void launch_groups_of_sizes(const T* A, T* L, int* info, const RaggedBatch& rb,
                            const SizeGroups& sg, bool one, bool upper,
                            const LaunchStreams& streams, int& next) {
  if (sg.groups == 0) return;
  // Groups g_wide.. have at most wide_dispatch_max_n<T>() / 32 tiles per side.
  const int g_wide = std::max(0, sg.nt_hi - wide_dispatch_max_n<T>() / kPanel);
  if (g_wide > 0 && one) {
    launch_potrf_tile_groups(A, L, info, rb, sg, 0, g_wide - 1, upper,
                             tile_warps<T>(kPanel * sg.nt_hi), streams.pole_first(next++));
  } else {
    for (int g = 0; g < g_wide; ++g) {
      launch_potrf_tile_groups(A, L, info, rb, sg, g, g, upper,
                               tile_fixed_warps<T>(kPanel * (sg.nt_hi - g)),
                               streams.pole_first(next++));
    }
  }
  for (int g = g_wide; g < sg.groups; ++g) {
    const cudaStream_t s = streams.pole_first(next++);
    const bool warp64 = kPanel * (sg.nt_hi - g) == kWarp64RaggedMaxN && ragged_warp64() &&
                        launch_potrf_warp64_group(A, L, info, rb, sg, g, upper, s);
    if (!warp64) launch_potrf_wide_group(A, L, info, rb, sg, g, upper, s);
  }
}

// The grouping of sizes 1..warp_hi and kSmallBin + 1 .. hi: `grouped` (built ahead by the
// fused prologue, ragged_prologue.h), checked against those arguments, or one built here
// (held in `own`).
const SizeGroups& grouping(const RaggedBatch& rb, const SizeGroups* grouped, int warp_hi, int hi,
                           int* info, SizeGroups& own) {
  if (grouped == nullptr) {
    own = group_by_size(rb, warp_hi, kSmallBin + 1, hi, info);
    return own;
  }
  TORCH_CHECK(grouped->holds(warp_hi, kSmallBin + 1, hi),
              "batchchol: the grouping built ahead does not match the ragged launch");
  return *grouped;
}

// The matrices of sizes 1..warp_hi (<= kSmallBin) and kSmallBin + 1 .. hi (none for
// hi <= kSmallBin), grouped by size class on the device (warp_serves<T>() only): the
// first to the warp family (three launches by order range, or one for small batches:
// warp_chol_launch.cuh); then the group of 33..64 (wide_dispatch_max_n<T>()) to one warp
// per matrix (warp64_ragged.cuh; the wide family with BATCHCHOL_RAGGED_WARP64=0: tile
// ran 2.7x slower than wide at float64 n = 64 with 8 warps a block), the others to the
// tile family, one launch per group, or with `one` a single tile launch for all of its
// groups. The grouping (group_by_size here, or the fused prologue's `grouped`) writes the
// info of the matrices of size 0 and of those with invalid metadata. With `tail`, the
// caller's launches for the sizes past hi (lazy blocked, `tail(stream, groups)`); with
// `listed` the sizes kSmallBin + 1 .. hi go to the tail too, grouped (the groups' list
// for a ListedLayout) instead of to the warp64, wide and tile launches. Every launch touches its
// own matrices only, so they go over `width` streams (stream_fanout.h), largest sizes
// first, the first alone on the caller's stream: on one stream each launch waits for the
// tail of the one before, and the small ones leave most of the GPU idle.
template <typename T, typename Tail>
void launch_size_groups(const T* A, T* L, int* info, const RaggedBatch& rb,
                        const SizeGroups* grouped, int warp_hi, int hi, bool one, bool upper,
                        int width, const Tail* tail, bool listed = false) {
  if constexpr (warp_serves<T>()) {
    // The grouping goes on the caller's stream, before the fork.
    SizeGroups own;
    const SizeGroups& sg = grouping(rb, grouped, warp_hi, hi, info, own);
    const StreamFanout fan(width);
    const LaunchStreams& streams = fan.streams();
    int next = 0;
    if (tail) (*tail)(streams.pole_first(next++), sg);
    if (!listed) launch_groups_of_sizes(A, L, info, rb, sg, one, upper, streams, next);
    // The warp part's launches: over the streams where they are all there is, else
    // together on one (they are short beside the other launches).
    const bool warp_only = sg.groups == 0 && tail == nullptr;
    launch_potrf_warp_groups(A, L, info, rb, sg, upper,
                             warp_only ? streams : single_stream(streams.pole_first(next++)));
  } else {
    TORCH_CHECK(false, kPotrfV, ": no size-class kernels for this dtype");
  }
}

template <typename T>
void launch_ragged(const T* A, T* L, int* info, const RaggedBatch& rb, bool upper,
                   const SizeGroups* grouped, cudaStream_t stream) {
  const int max_n = static_cast<int>(rb.max_n);
  RaggedLayout lay{rb.offsets.const_data_ptr<int64_t>(), rb.sizes.const_data_ptr<int>(),
                   rb.status.defined() ? rb.status.const_data_ptr<int>() : nullptr, 0, false};
  const RaggedKernel k = choose_ragged_kernel<T>(max_n);
  const int width = ragged_stream_width(fanout_width(max_n, rb.count));
  // The lazy blocked launches, passed to launch_size_groups as its tail (a lambda by
  // pointer: no std::function and its allocation per call).
  using NoTail = void (*)(cudaStream_t, const SizeGroups&);
  switch (k) {
    case RaggedKernel::kWarp:
      return launch_size_groups<T, NoTail>(A, L, info, rb, grouped, max_n, /*hi=*/0, false,
                                           upper, width, nullptr);
    case RaggedKernel::kRegisters:
      return launch_registers_bins(A, L, info, rb.count, lay, max_n, upper, stream);
    case RaggedKernel::kShared:
      return launch_shared_layout(A, L, info, rb.count, lay, max_n, upper, stream);
    case RaggedKernel::kGreedy:
      return launch_blocked_layout(A, L, info, rb.count, lay, max_n, upper, stream);
    case RaggedKernel::kLazy:
      lay.steps = (max_n + kPanel - 1) / kPanel;
      lay.lazy = true;
      return launch_blocked_layout(A, L, info, rb.count, lay, max_n, upper, stream);
    case RaggedKernel::kBinned: {
      const RaggedLayout small = lay;
      lay.lo = kSmallBin + 1;
      lay.steps = (max_n + kPanel - 1) / kPanel;
      lay.lazy = !binned_greedy_starts();
      const auto lazy = [&](cudaStream_t s, const SizeGroups&) {
        launch_blocked_layout(A, L, info, rb.count, lay, max_n, upper, s);
      };
      if constexpr (warp_serves<T>()) {
        if (!ragged_listed_blocked(max_n))
          return launch_size_groups(A, L, info, rb, grouped, kSmallBin, /*hi=*/0, false, upper,
                                    width, &lazy);
        // The lazy blocked launches over the list of the matrices past kSmallBin. A bad
        // BATCHCHOL_RAGGED_LISTED_GRID fails here, before any factorization launch.
        listed_grid_cap();
        const auto listed = [&](cudaStream_t s, const SizeGroups& sg) {
          ListedLayout ll;
          static_cast<RaggedLayout&>(ll) = lay;
          ll.counts = sg.counts();
          ll.list = sg.list();
          ll.groups = sg.groups;
          launch_blocked_layout(A, L, info, rb.count, ll, max_n, upper, s);
        };
        return launch_size_groups(A, L, info, rb, grouped, kSmallBin, max_n, false, upper, width,
                                  &listed, /*listed=*/true);
      } else {
        launch_registers_bins(A, L, info, rb.count, small, kSmallBin, upper, stream);
        return lazy(stream, SizeGroups{});
      }
    }
    case RaggedKernel::kTile:
    case RaggedKernel::kTileOne: {
      const int hi = tile_share_hi<T>(max_n);
      lay.lo = hi + 1;
      lay.steps = (max_n + kPanel - 1) / kPanel;
      lay.lazy = true;
      const auto lazy = [&](cudaStream_t s, const SizeGroups&) {
        launch_blocked_layout(A, L, info, rb.count, lay, max_n, upper, s);
      };
      return launch_size_groups(A, L, info, rb, grouped, kSmallBin, hi,
                                /*one=*/k == RaggedKernel::kTileOne, upper, width,
                                max_n > hi ? &lazy : nullptr);
    }
  }
}

// The grouping launch_ragged takes (launch_size_groups' arguments in its switch).
template <typename T>
GroupPlan ragged_group_plan(int max_n) {
  if constexpr (warp_serves<T>()) {
    switch (choose_ragged_kernel<T>(max_n)) {
      case RaggedKernel::kWarp: return {true, max_n, kSmallBin + 1, 0, /*warp_only=*/true};
      case RaggedKernel::kBinned:
        return {true, kSmallBin, kSmallBin + 1, ragged_listed_blocked(max_n) ? max_n : 0};
      case RaggedKernel::kTile:
      case RaggedKernel::kTileOne: return {true, kSmallBin, kSmallBin + 1, tile_share_hi<T>(max_n)};
      default: break;
    }
  }
  return {};
}

}  // namespace

GroupPlan potrf_group_plan(at::ScalarType dtype, int64_t max_n) {
  TORCH_CHECK(max_n >= 0 && max_n <= kMaxSize, "batchchol: bad max_n for a ragged grouping");
  GroupPlan plan;
  AT_DISPATCH_FLOATING_AND_COMPLEX_TYPES(dtype, "batchchol_potrf_group_plan", [&] {
    plan = ragged_group_plan<scalar_t>(static_cast<int>(max_n));
  });
  return plan;
}

void launch_potrf_ragged(const at::Tensor& A, at::Tensor& L, at::Tensor& info,
                         const RaggedBatch& rb, bool upper, const SizeGroups* grouped) {
  if (rb.count == 0) return;
  TORCH_CHECK(rb.count <= INT32_MAX, kPotrfV, ": batch too large for one launch");
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  AT_DISPATCH_FLOATING_AND_COMPLEX_TYPES(A.scalar_type(), "batchchol_potrf_vbatched_cuda", [&] {
    launch_ragged<scalar_t>(A.const_data_ptr<scalar_t>(), L.mutable_data_ptr<scalar_t>(),
                            info.mutable_data_ptr<int>(), rb, upper, grouped, stream);
  });
}

bool launch_potrf_ragged_one(const at::Tensor& A, const RaggedPrologue& p, const GroupPlan& plan,
                             bool upper) {
  const auto dtype = A.scalar_type();
  if (!plan.warp_only || (dtype != at::kFloat && dtype != at::kDouble)) return false;
  const char* env = std::getenv("BATCHCHOL_RAGGED_ONE");
  if (env != nullptr && std::strcmp(env, "0") == 0) return false;
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  bool done = false;
  AT_DISPATCH_FLOATING_TYPES(dtype, "batchchol_potrf_vbatched_one", [&] {
    done = launch_potrf_warp_one(A.const_data_ptr<scalar_t>(), p.L.mutable_data_ptr<scalar_t>(),
                                 p.info.mutable_data_ptr<int>(), p, upper, stream);
  });
  return done;
}

bool launch_posv_ragged_fused(const at::Tensor& A, const at::Tensor& B, at::Tensor& X,
                              at::Tensor& L, at::Tensor& info, const RaggedBatch& rb, int64_t k,
                              bool upper, const SizeGroups* grouped) {
  const auto dtype = A.scalar_type();
  if (rb.count == 0 || (dtype != at::kFloat && dtype != at::kDouble)) return false;
  TORCH_CHECK(rb.count <= INT32_MAX, kPosvV, ": batch too large for one launch");
  bool done = false;
  AT_DISPATCH_FLOATING_TYPES(A.scalar_type(), "batchchol_posv_vbatched_fused", [&] {
    using T = scalar_t;
    const int max_n = static_cast<int>(rb.max_n);
    if (choose_ragged_kernel<T>(max_n) != RaggedKernel::kWarp) return;
    // k = -1: square blocks, up to max_n columns.
    if ((k < 0 ? max_n : k) > posv_vbatched_fused_max_k(sizeof(T) == 8)) return;
    SizeGroups own;
    const SizeGroups& sg = grouping(rb, grouped, max_n, 0, info.mutable_data_ptr<int>(), own);
    const StreamFanout fan(ragged_stream_width(1));  // after the grouping; see fanout_width
    launch_posv_warp_groups(A.const_data_ptr<T>(), B.const_data_ptr<T>(), X.mutable_data_ptr<T>(),
                            L.mutable_data_ptr<T>(), info.mutable_data_ptr<int>(), rb, sg, k, upper,
                            fan.streams());
    done = true;
  });
  return done;
}

}  // namespace cuda

std::tuple<at::Tensor, at::Tensor> potrf_vbatched_cuda(const at::Tensor& A, const at::Tensor& n,
                                                       const at::Tensor& offsets,
                                                       c10::optional<int64_t> max_n, bool upper) {
  check_ragged_matrices(kPotrfV, "A", A, n, offsets);
  const c10::cuda::OptionalCUDAGuard guard(A.device());
  if (cuda::ragged_prologue_applies(n, offsets, nullptr, max_n)) {
    check_ragged_max_n(kPotrfV, *max_n);
    const cuda::GroupPlan plan = cuda::potrf_group_plan(A.scalar_type(), *max_n);
    const at::Tensor Ac = A.contiguous();
    cuda::RaggedPrologue p =
        cuda::ragged_prologue_setup(kPotrfV, Ac, n, offsets, *max_n, nullptr, plan);
    if (!cuda::launch_potrf_ragged_one(Ac, p, plan, upper)) {
      cuda::launch_ragged_prologue(p);
      cuda::launch_potrf_ragged(Ac, p.L, p.info, p.rb, upper, plan.grouped ? &p.sg : nullptr);
    }
    return {p.L, p.info};
  }
  const RaggedBatch rb = prepare_ragged(kPotrfV, A, n, offsets, max_n);
  const at::Tensor Ac = A.contiguous();
  at::Tensor L = cuda::ragged_matrix_output(Ac, rb);
  at::Tensor info = at::empty({rb.count}, A.options().dtype(at::kInt));
  cuda::launch_potrf_ragged(Ac, L, info, rb, upper);
  return {L, info};
}

TORCH_LIBRARY_IMPL(batchchol, CUDA, m) { m.impl("potrf_vbatched", &potrf_vbatched_cuda); }

}  // namespace batchchol
