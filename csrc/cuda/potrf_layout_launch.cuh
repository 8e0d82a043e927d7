// Launch sequences of the potrf kernel families that serve both fixed-size and
// ragged batches (the Layout, batch_layout.cuh, says where each matrix is).
#pragma once

#include <c10/cuda/CUDAException.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <limits>
#include <type_traits>

#include "cuda/launch_utils.h"
#include "cuda/potrf_kernels.cuh"
#include "cuda/potrf_left_kernels.cuh"

namespace batchchol {
namespace cuda {

// Whether a family can serve matrices up to order max_n: the shared kernel holds the
// largest matrix in shared memory; the blocked family's bound on its tile count per
// matrix (65535) bounds n (n^2 < 2^31: the update's 32-bit offsets).
template <typename T>
bool shared_fits(int max_n) {
  return sizeof(T) * static_cast<size_t>(max_n) * smem_pitch(max_n) <= max_dynamic_smem();
}

template <typename T>
bool blocked_fits(int max_n) {
  constexpr int tile = update_tile<T>();
  const int64_t t = (int64_t(max_n) + tile - 1) / tile;
  return t * (t + 1) / 2 <= 65535;
}

// The left-looking kernels hold a panel of up to 4 passes of 128 rows; their stage of
// max_n x 33 elements must fit in shared memory.
// (complex<double> only up to 2 passes: 4 passes of 16-byte accumulators spill).
template <typename T>
bool left_fits(int max_n) {
  const int passes = sizeof(T) >= 16 ? 2 : 4;
  return max_n <= passes * kLeftPassRows &&
         sizeof(T) * size_t(left_stage_rows(max_n)) * kLeftPitch <= max_dynamic_smem();
}

// Launches potrf_left_kernel for the panels [begin, end) of matrices of up to `rows`
// rows in those panels (the update passes and the stage are sized for them).
template <typename T, typename Layout>
void launch_left_panels(const T* A, T* L, int* info, int64_t batch, Layout lay, int rows,
                        int begin, int end, bool upper, cudaStream_t stream) {
  const size_t smem = sizeof(T) * size_t(left_stage_rows(rows)) * kLeftPitch;
  auto go = [&](auto kernel) {
    allow_dynamic_smem(kernel, smem);
    kernel<<<batch, kLeftThreads, smem, stream>>>(A, L, info, lay, begin, end, upper);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  };
  if (rows <= kLeftPassRows) return go(potrf_left_kernel<T, 1, Layout>);
  if (rows <= 2 * kLeftPassRows || sizeof(T) >= 16) return go(potrf_left_kernel<T, 2, Layout>);
  go(potrf_left_kernel<T, 4, Layout>);
}

// Left-looking factorization: one launch for every panel (loop-inclusive), or with
// `split` one launch per panel (loop-exclusive), each sized to the rows left.
template <typename T, typename Layout>
void launch_left_layout(const T* A, T* L, int* info, int64_t batch, Layout lay, int max_n,
                        bool upper, bool split, cudaStream_t stream) {
  const int panels = (max_n + kPanel - 1) / kPanel;
  if (!split) return launch_left_panels(A, L, info, batch, lay, max_n, 0, panels, upper, stream);
  for (int pk = 0; pk < panels; ++pk)
    launch_left_panels(A, L, info, batch, lay, max_n - pk * kPanel, pk, pk + 1, upper, stream);
}

// Panels per group of the blocked family's two-level update (blocked_update_kernel):
// BATCHCHOL_BLOCKED_GROUP (a tuning switch, read at every call; clamped to 1..8, which
// bounds the strip updates' width), else the table for strip (left = false) or
// left-looking groups. Larger groups cut the passes over the trailing matrix but
// lengthen the rank-32 strip updates, or the left-looking updates of the later panels.
template <typename T>
int blocked_group_panels(int max_n, bool left) {
  if (const char* env = std::getenv("BATCHCHOL_BLOCKED_GROUP"))
    return std::clamp(std::atoi(env), 1, 8);
  // H200, 2026-11-25 (kernel times per group size of 2 / 3 / 4 panels, with a matrix's
  // update tiles adjacent in the grid; benchmarks/KERNEL-NOTES.md, twenty-fifth round):
  // float64 n = 224, 10,000 matrices: 7.21 / 6.61 / 7.19 ms; 256: 8.88 / 9.02 / 9.18;
  // 320, 4,000: 6.13 / 6.17 / 6.23; 384: 9.45 / 9.37 / 9.50; 448, 2,000: 7.13 / 6.97 /
  // 7.06; 512: 9.76 / 9.46 / 9.56; float32 384, 448, 512: 4 best (512: 7.26 / 7.29 /
  // 7.18). Earlier (H100, tenth and eleventh rounds, the batch outermost in the grid):
  // 2 up to n = 256, 4 beyond.
  // Left-looking groups (H100, 2026-11-25, kernel times at group sizes 2 / 3 / 4 / 6;
  // KERNEL-NOTES, twenty-sixth round): float64 n = 224, 10,000 matrices: 7.57 / 7.06 /
  // 7.33 / 8.61 ms; 256: 8.87 / 9.52 / 9.36 / 10.22; 384, 4,000: 9.69 / 9.81 / 9.69 /
  // 10.54; 512, 2,000: 10.08 / 10.01 / 9.88 / 10.50; float32 384, 4,000: 6.84 / 7.06 /
  // 6.64 / 6.96; 512: 6.95 / 6.97 / 6.53 / 6.48 (8: 6.62).
  if constexpr (std::is_same_v<T, double>) {
    if (max_n > 192 && max_n <= 224) return 3;  // seven panel steps
    if (max_n <= 320) return 2;
    return left ? 4 : 3;
  }
  return max_n <= 256 ? 2 : 4;
}

// Whether the panels of a group after its first are updated left-looking by their own
// step's diagonal and panel kernels (FirstTouch::left, blocked_left.cuh) instead of by a
// rank-32 strip update after each panel: BATCHCHOL_BLOCKED_LEFT = 0 / 1 (a tuning switch,
// read at every call), else left-looking. Real types only (the panel kernel's W buffer
// shares L11's, sized for them). H100, 2026-11-25, strips -> left-looking with the same
// groups (tools/ab_env.py; KERNEL-NOTES, twenty-sixth round): float32 n = 512 7.54 ->
// 6.62 ms, 384 18.13 -> 15.29; float64 512 10.36 -> 10.12, 384 25.34 -> 23.99, 256
// 9.68 -> 8.97, 224 7.37 -> 7.18.
template <typename T>
bool blocked_left_groups() {
  if constexpr (!std::is_floating_point_v<T>) {
    return false;
  } else {
    if (const char* env = std::getenv("BATCHCHOL_BLOCKED_LEFT")) return std::atoi(env) != 0;
    return true;
  }
}

// BATCHCHOL_RAGGED_LISTED_GRID = N (a positive integer; read at every call) caps the
// listed launches' grids at N blocks (the panel launch keeps one slot per row chunk), so
// that a test or compute-sanitizer sees blocks and warps loop over a list of a few
// dozen matrices on any GPU; racecheck spent minutes on the thousands that the capped
// grids of an H100 need before they loop. Unset: no cap beyond blocked_grid's waves.
inline int64_t listed_grid_cap() {
  const char* env = std::getenv("BATCHCHOL_RAGGED_LISTED_GRID");
  if (env == nullptr || *env == '\0') return std::numeric_limits<int64_t>::max();
  char* end = nullptr;
  errno = 0;
  const long long cap = std::strtoll(env, &end, 10);
  TORCH_CHECK_VALUE(errno == 0 && *end == '\0' && cap >= 1 && cap <= INT32_MAX,
                    "BATCHCHOL_RAGGED_LISTED_GRID must be a positive integer, got '", env, "'");
  return cap;
}

// Whether the left-looking updates of the panel kernel (BATCHCHOL_BLOCKED_PANEL_MMA) or
// of the diagonal kernel (BATCHCHOL_BLOCKED_DIAG_MMA) run on the float64 MMAs
// (panel_left_update_dmma, diag_left_update_dmma: blocked_left.cuh): float64 on sm_80
// and later, unless the switch is 0 (A/B switches, read at every call).
template <typename T>
bool blocked_left_mma(const char* name) {
  if constexpr (!left_update_has_mma<T>()) {
    return false;
  } else {
    return float64_mma_on(name);
  }
}

// Waves of the kernel's residency in a listed launch's grid: kListedWaves, or
// BATCHCHOL_RAGGED_LISTED_WAVES (a tuning switch, read at every call; clamped to 1..64).
// H100, potrf_vbatched Nmax = 512, 5,000 matrices (results/h100-2026-11-28-listed-waves-ab.txt):
// 2 -> 8 waves float64 uniform 9.224 -> 9.054 ms, gaussian 7.550 -> 7.490, 384+-0 10.693 ->
// 10.530, skewed 1.142 -> 1.124; float32 uniform 6.831 -> 6.768, skewed 0.990 -> 0.996;
// 8 -> 32 lost (float64 skewed 1.109 -> 1.206, uniform 9.048 -> 9.154).
constexpr int kListedWaves = 8;
inline int listed_waves() {
  if (const char* env = std::getenv("BATCHCHOL_RAGGED_LISTED_WAVES"))
    return std::clamp(std::atoi(env), 1, 64);
  return kListedWaves;
}

// The listed launches' grid limits, read from the switches once per launch sequence.
struct ListedGrid {
  int waves = kListedWaves;
  int64_t cap = std::numeric_limits<int64_t>::max();
  static ListedGrid from_env() { return {listed_waves(), listed_grid_cap()}; }
};

// Blocks of a blocked-family launch that wants `needed` (a block per work item of every
// matrix of the batch): all of them, or for a listed layout (batch_layout.cuh), whose
// blocks loop over the items of the matrices on its list, at most lg.waves waves of the
// kernel's residency and lg.cap blocks.
template <typename Layout, typename Kernel>
unsigned blocked_grid(Kernel kernel, int threads, int64_t needed, const ListedGrid& lg) {
  if constexpr (!Layout::kListed) {
    return static_cast<unsigned>(needed);
  } else {
    const int64_t grid =
        resident_grid(lg.waves * resident_per_sm_cached(kernel, threads, 0), needed);
    return static_cast<unsigned>(std::min(grid, lg.cap));
  }
}

// One update launch of `tiles` tile slots per matrix. The grid runs a matrix's tiles
// next to each other: they share the matrix's slices of L21, which then come from L2.
// With the batch outermost in the schedule (grid (batch, tiles)) every tile's slices came
// from DRAM: the float64 n = 512 group update moved ~7 GB, the slices 5.4 of them.
// Batches whose slot count passes the grid's limit go in chunks of whole matrices.
template <typename T, typename Layout>
void launch_blocked_update(FirstTouch<T> ft, T* L, int64_t batch, Layout lay, int step,
                           int rank_panels, int col_span, int col_tiles, int tiles,
                           const ListedGrid& lg, cudaStream_t stream) {
  if constexpr (Layout::kListed) {
    auto kernel = blocked_update_kernel<T, Layout>;
    const unsigned grid = blocked_grid<Layout>(kernel, kUpdateThreads, batch * tiles, lg);
    kernel<<<grid, kUpdateThreads, 0, stream>>>(ft, L, lay, step, rank_panels, col_span,
                                                col_tiles, tiles, 0);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return;
  }
  const int64_t chunk = std::numeric_limits<int32_t>::max() / tiles;
  for (int64_t b0 = 0; b0 < batch; b0 += chunk) {
    const int64_t count = std::min(chunk, batch - b0);
    // count * tiles <= INT32_MAX, within grid.x's limit.
    blocked_update_kernel<T><<<static_cast<unsigned>(count * tiles), kUpdateThreads, 0, stream>>>(
        ft, L, lay, step, rank_panels, col_span, col_tiles, tiles, b0);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }
}

// One launch per 32-wide panel step for the diagonal factor and the panel solve; the
// trailing update in two levels: within a group of panels, each panel takes the
// products with the group's earlier ones (left-looking, in its own step's diagonal and
// panel kernels; real types), or after each panel a rank-32 update of the columns up
// to the end of its group (strips: complex types, or BATCHCHOL_BLOCKED_LEFT=0); after a
// group's last panel one update of the rest with the whole group. max_n bounds every
// matrix; a lazy ragged layout's steps must be ceil(max_n / 32). Groups are aligned to
// steps, not to each matrix's start: the updates clamp their panels at column 0.
//
// Lower factors skip the init pass (a read of A's lower triangle and a write of all of
// L before the first panel): each entry's first touch reads A instead of L (FirstTouch:
// a matrix's first step, or with left-looking groups every step of its first group,
// and the update that first reaches the columns past its first group), and the
// diagonal and panel kernels write the zeros above the diagonal. Upper factors (A's
// upper triangle, read transposed) keep the init pass.
template <typename T, typename Layout>
void launch_blocked_layout(const T* A, T* L, int* info, int64_t batch, Layout lay, int max_n,
                           bool upper, cudaStream_t stream) {
  constexpr int tile = update_tile<T>();
  const int steps = (max_n + kPanel - 1) / kPanel;
  const bool left = blocked_left_groups<T>();
  const int group = blocked_group_panels<T>(max_n, left);
  const FirstTouch<T> ft{upper ? nullptr : A, group, steps, left};
  const bool panel_mma = left && blocked_left_mma<T>("BATCHCHOL_BLOCKED_PANEL_MMA");
  const bool diag_mma = left && blocked_left_mma<T>("BATCHCHOL_BLOCKED_DIAG_MMA");
  const ListedGrid lg = Layout::kListed ? ListedGrid::from_env() : ListedGrid{};
  if (upper) {
    auto kernel = blocked_init_kernel<T, Layout>;
    kernel<<<blocked_grid<Layout>(kernel, 256, batch, lg), 256, 0, stream>>>(A, L, info, lay,
                                                                             upper);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }
  // At least one step: the step-0 diagonal launch also sets the info of the matrices
  // that no panel reaches, which may be all of them (max_n = 0, every matrix invalid;
  // a listed layout holds none: its grouping set their info).
  for (int step = 0; step < std::max(steps, 1); ++step) {
    const auto launch_diag = [&](auto diag) {
      diag<<<blocked_grid<Layout>(diag, 32 * diag_warps<T>(), ceil_div(batch, diag_warps<T>()),
                                  lg),
             32 * diag_warps<T>(), 0, stream>>>(ft, L, info, batch, lay, step);
      C10_CUDA_KERNEL_LAUNCH_CHECK();
    };
    if (diag_mma)
      launch_diag(blocked_diag_kernel<T, Layout, left_update_has_mma<T>()>);
    else
      launch_diag(blocked_diag_kernel<T, Layout>);
    // Rows below this step's panel, for the matrix that has the most: with lazy
    // starts every matrix is at most (steps - step - 1) panels from its end.
    const int rest = std::max(max_n, steps * kPanel * int(lay.first_step_varies())) -
                     (step + 1) * kPanel;
    if (rest <= 0) continue;
    const unsigned chunks = ceil_div(rest, panel_rows<T>());
    const auto launch_panel = [&](auto panel) {
      unsigned slots = static_cast<unsigned>(batch);
      if constexpr (Layout::kListed)
        slots =
            std::max(1u, blocked_grid<Layout>(panel, panel_rows<T>(), batch * chunks, lg) / chunks);
      panel<<<dim3(slots, chunks), panel_rows<T>(), 0, stream>>>(ft, L, lay, step);
      C10_CUDA_KERNEL_LAUNCH_CHECK();
    };
    if (panel_mma)
      launch_panel(blocked_panel_kernel<T, Layout, left_update_has_mma<T>()>);
    else
      launch_panel(blocked_panel_kernel<T, Layout>);
    const int row_tiles = (rest + tile - 1) / tile;
    const int group_end = std::min(steps, (step / group + 1) * group);
    if (step + 1 < group_end) {
      if (left) continue;  // the next panels' own steps apply this one
      // The columns of this group's next panels.
      const int span = (group_end - step - 1) * kPanel;
      const int col_tiles = (span + tile - 1) / tile;
      launch_blocked_update(ft, L, batch, lay, step, 1, span, col_tiles, row_tiles * col_tiles, lg,
                            stream);
    } else {
      // The rest, with every panel of the group.
      launch_blocked_update(ft, L, batch, lay, step, step + 1 - step / group * group, max_n, 0,
                            row_tiles * (row_tiles + 1) / 2, lg, stream);
    }
  }
  if (upper) {
    auto kernel = blocked_to_upper_kernel<T, Layout>;
    kernel<<<blocked_grid<Layout>(kernel, 256, batch, lg), 256, 0, stream>>>(L, lay);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }
}

// One block per matrix, the matrix in shared memory (sized for max_n).
template <typename T, typename Layout>
void launch_shared_layout(const T* A, T* L, int* info, int64_t batch, Layout lay, int max_n,
                          bool upper, cudaStream_t stream) {
  const int pitch = smem_pitch(max_n);
  const size_t smem = sizeof(T) * static_cast<size_t>(max_n) * pitch;
  auto kernel = potrf_shared_kernel<T, Layout>;
  allow_dynamic_smem(kernel, smem);
  kernel<<<batch, 256, smem, stream>>>(A, L, info, lay, pitch, upper);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace cuda
}  // namespace batchchol
