// POTRF on CUDA: kernel choice by size, launches, and the op registration.
#include <ATen/Dispatch.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "common/batching.h"
#include "common/checks.h"
#include "common/ops.h"
#include "cuda/launch_utils.h"
#include "cuda/potrf_kernels.cuh"
#include "cuda/potrf_layout_launch.cuh"
#include "cuda/potrf_launch.h"
#include "cuda/potrf_single.h"
#include "cuda/tile_launch.h"
#include "cuda/warp_chol_launch.h"
#include "cuda/wide_launch.h"

#include <cstdlib>
#include <cstring>
#include <type_traits>

namespace batchchol {
namespace cuda {

namespace {

// n <= 32: NP lanes per matrix, NP the next power of two (shuffle segment width).
template <typename T, int NP>
void launch_registers(const T* A, T* L, int* info, int64_t batch, int n, bool upper,
                      cudaStream_t stream) {
  constexpr int kPerBlock = 128 / NP;
  const size_t smem = sizeof(T) * kPerBlock * n * smem_pitch(n);
  auto kernel = potrf_registers_kernel<T, NP>;
  allow_dynamic_smem(kernel, smem);
  kernel<<<ceil_div(batch, kPerBlock), 128, smem, stream>>>(A, L, info, batch, n, upper);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

// Kernel families, in the order of the sizes they serve: warp (warp_chol_kernels.cuh and,
// past 32, warp64_chol.cuh; real dtypes up to 64 in float32, 48 in float64) and
// registers for small n; wide (only where forced, or where the tiles do not fit;
// wide_chol.cuh); tile2, tile4, tile and tile16 (2, 4, 8 and 16 warps a block, real
// dtypes up to 192 / 320, tile_chol.cuh; by default float64 49..64, 65..128 (97..128 on
// the packed stage, tile_packed.cuh, with the MMA update; without it tile takes them),
// 129..160 (packed) and none, float32 none, 65..160, 161..224 (193..224 packed) and
// 225..320);
// left-looking in one launch or one launch per panel (potrf_left_kernels.cuh); shared
// and blocked (potrf_kernels.cuh).
enum class PotrfKernel {
  kWarp, kRegisters, kWide, kTile2, kTile4, kTile, kTile16, kLeft, kLeftSplit, kShared, kBlocked
};
constexpr PotrfKernel kAllPotrfKernels[] = {
    PotrfKernel::kWarp,  PotrfKernel::kRegisters, PotrfKernel::kWide,
    PotrfKernel::kTile2, PotrfKernel::kTile4,     PotrfKernel::kTile,
    PotrfKernel::kTile16, PotrfKernel::kLeft,     PotrfKernel::kLeftSplit,
    PotrfKernel::kShared, PotrfKernel::kBlocked};

const char* potrf_kernel_name(PotrfKernel k) {
  switch (k) {
    case PotrfKernel::kWarp: return "warp";
    case PotrfKernel::kRegisters: return "registers";
    case PotrfKernel::kWide: return "wide";
    case PotrfKernel::kTile2: return "tile2";
    case PotrfKernel::kTile4: return "tile4";
    case PotrfKernel::kTile: return "tile";
    case PotrfKernel::kTile16: return "tile16";
    case PotrfKernel::kLeft: return "left";
    case PotrfKernel::kLeftSplit: return "left-split";
    case PotrfKernel::kShared: return "shared";
    case PotrfKernel::kBlocked: return "blocked";
  }
  return "?";
}

template <typename T>
bool potrf_kernel_applies(PotrfKernel k, int n) {
  switch (k) {
    case PotrfKernel::kWarp: return n <= warp_chol_max_n<T>();  // past 32: warp64
    case PotrfKernel::kRegisters: return n <= 32;
    case PotrfKernel::kWide: return n >= kWideMinN && n <= wide_max_n<T>();
    case PotrfKernel::kTile2:
    case PotrfKernel::kTile4:
    case PotrfKernel::kTile:
    case PotrfKernel::kTile16: return n <= tile_max_n<T>() && tile_fits(n, sizeof(T));
    case PotrfKernel::kLeft:
    case PotrfKernel::kLeftSplit: return left_fits<T>(n);
    case PotrfKernel::kShared: return shared_fits<T>(n);
    case PotrfKernel::kBlocked: return blocked_fits<T>(n);
  }
  return false;
}

// Float64 orders past 128 that the tile family takes (five tile columns: two blocks of
// eight warps per SM on the packed stage, tile_packed.cuh; tuning below); blocked past
// them.
constexpr int kF64TileTo = 160;
template <typename T>
constexpr bool f64_tile_order_past_128(int n) {
  return std::is_same_v<T, double> && n > 128 && n <= kF64TileTo;
}

// The family used for order n: the tuned table, or BATCHCHOL_POTRF_KERNEL when it names
// a family that supports n.
template <typename T>
PotrfKernel choose_potrf_kernel(int n) {
  // BATCHCHOL_POTRF_KERNEL forces a kernel family (benchmarks/tune_potrf.py uses it).
  if (const char* forced = std::getenv("BATCHCHOL_POTRF_KERNEL")) {
    for (PotrfKernel k : kAllPotrfKernels) {
      if (std::strcmp(forced, potrf_kernel_name(k)) == 0 && potrf_kernel_applies<T>(k, n)) return k;
    }
  }
  // H100, 2026-11-22 (benchmarks/tune_potrf.py, results/h100-2026-11-22-wide-*): the
  // warp family wins at every n <= 32, and in float32 up to 64 (its one-warp kernel
  // ties wide at 64, 0.498 vs 0.489 ms, and beats blocked from n = 33, 0.92 vs 1.91).
  // wide: float64 33..64 (n = 64 0.49-0.52 vs blocked 0.96-0.98 ms) and float32
  // 65..128 (n = 128 1.52 vs 3.01 ms with per-warp update widths, ...-wide-perwarp-*;
  // float32 97..128 on tile4 since the forty-first round, 65..96 since the forty-seventh,
  // float64 53..64 since the forty-second, 49..64 on tile2 since the forty-third:
  // below). Float64
  // 33..48 on warp64 since the forty-fifth (H200, the issue's 256 MB batches, wide /
  // warp64 ms: 33 0.735 / 0.611, 40 0.517 / 0.414, 48 0.422 / 0.343;
  // results/h200-2026-11-28-round45-warp64-f64-ab.txt).
  if (potrf_kernel_applies<T>(PotrfKernel::kWarp, n)) return PotrfKernel::kWarp;
  if (n <= 32) return PotrfKernel::kRegisters;
  // Wide only where the tiles do not fit (a device with less shared memory): it had held
  // float64 33..48 until the forty-fifth round (warp64 to 48, then tile2: the tile
  // kernels' time is flat over a tile column while wide's grows with n; H200, wide first;
  // ...-tile4-ab.txt, tile4: 48 0.416 vs 0.417 ms, 56 0.345 vs 0.322, 64 0.342 vs 0.310;
  // ...-packed-ab.txt, tile4: 52 0.380 vs 0.374; ...-tile2-ab.txt, tile2 (tile_warps): 40
  // 0.529 vs 0.586, 48 0.435 vs 0.425, 52 0.392 vs 0.373) and float32 65..96 until the
  // forty-seventh, when tile4's float32 blocks were built for seven per SM
  // (tile_min_blocks; H200, 10,000 matrices, one process, wide / tile4: 65 0.533 / 0.428
  // ms, 72 0.485 / 0.434, 80 0.541 / 0.450, 88 0.567 / 0.464, 96 0.533 / 0.466;
  // results/h200-2026-11-28-round47-tile-min-blocks-ab.txt). posv keeps its fused kernel
  // on wide at float64 up to kPosvWideMaxN (posv_fuses_wide).
  if (potrf_kernel_applies<T>(PotrfKernel::kWide, n) &&
      !potrf_kernel_applies<T>(PotrfKernel::kTile4, n))
    return PotrfKernel::kWide;
  // tile (whole lower triangle in shared memory): 4 warps while three blocks fit an SM
  // (tile4; 2 for float64's two tile columns, tile2; float64 97..128 on tile4's packed
  // stage with the MMA update since the forty-eighth round), 8 while two do, 16 once one
  // does (tile_fixed_warps, tile_launch.h). Since the
  // pivot chain left its square roots to the end (2026-11-24) tile beat blocked at every
  // float64 order from 65 to 128 (H100, tune_potrf: 96 1.15 vs 1.54 ms, 128 1.75 vs
  // 2.46) and tile16 every float32 order from 193 (256 6.38 vs 7.20; float32 65..96
  // on tile4 too since the forty-seventh round, above). Float64 129..160
  // (five tile columns) went to blocked, whose update runs on the MMAs, then from 145 to
  // tile16 once the tile updates did too (thirty-ninth round, ...-tile16-crossover-ab:
  // 144 3.07 / 3.06 ms, 160 3.14 / 3.31 for blocked), one block per SM. The packed stage
  // fits two eight-warp blocks at float64 129..160 and float32 193..224 (forty-second
  // round, H200, results/h200-2026-11-28-packed-ab.txt, same bits as tile16: float64 160
  // 2.86 -> 2.38 ms, 144 2.83 -> 2.35, float32 224 4.54 -> 3.38, 208 4.52 -> 3.34;
  // against blocked, float64 136 2.84 -> 2.34, 160 3.09 -> 2.41). Blocked keeps float64
  // 129..160 without the MMA update (below sm_80, or BATCHCHOL_TILE_MMA=0: tile16 160
  // took 3.62 ms there), and every float64 order from 161, where tile16's single block
  // per SM lost (176 4.16 vs 4.06, 192 4.23 vs 4.29: too close to call; blocked's
  // left-looking groups, twenty-sixth round). A device with less shared memory per block
  // than sm_90 falls through to blocked where the tiles do not fit.
  const bool tile_past_128 = f64_tile_order_past_128<T>(n) && tile_float64_mma();
  const bool blocked_range = std::is_same_v<T, double> && n > 128 && !tile_past_128;
  if (potrf_kernel_applies<T>(PotrfKernel::kTile, n) && !blocked_range) {
    const int warps = tile_fixed_warps<T>(n);
    if (warps == 16) return PotrfKernel::kTile16;
    if (warps == 2) return PotrfKernel::kTile2;
    return warps == 4 ? PotrfKernel::kTile4 : PotrfKernel::kTile;
  }
  // Otherwise the multi-launch blocked family (it also beat shared at every n > 32 on
  // an H200; benchmarks/KERNEL-NOTES.md).
  return potrf_kernel_applies<T>(PotrfKernel::kBlocked, n) ? PotrfKernel::kBlocked
                                                           : PotrfKernel::kShared;
}

}  // namespace

template <typename T>
void launch_potrf(const T* A, T* L, int* info, int64_t batch, int n, bool upper,
                  cudaStream_t stream) {
  TORCH_CHECK(batch <= INT32_MAX, "batchchol.potrf: batch too large for one launch");
  const PotrfKernel choice = choose_potrf_kernel<T>(n);
  switch (choice) {
    case PotrfKernel::kWarp:
      if constexpr (warp_chol_max_n<T>() > 0) {
        return launch_potrf_warp(A, L, info, batch, n, upper, stream);
      }
      break;
    case PotrfKernel::kRegisters:
      if (n <= 2) return launch_registers<T, 2>(A, L, info, batch, n, upper, stream);
      if (n <= 4) return launch_registers<T, 4>(A, L, info, batch, n, upper, stream);
      if (n <= 8) return launch_registers<T, 8>(A, L, info, batch, n, upper, stream);
      if (n <= 16) return launch_registers<T, 16>(A, L, info, batch, n, upper, stream);
      return launch_registers<T, 32>(A, L, info, batch, n, upper, stream);
    case PotrfKernel::kWide:
      if constexpr (wide_max_n<T>() > 0) {
        return launch_potrf_wide(A, L, info, batch, n, upper, stream);
      }
      break;
    case PotrfKernel::kTile2:
    case PotrfKernel::kTile4:
    case PotrfKernel::kTile:
    case PotrfKernel::kTile16:
      if constexpr (tile_max_n<T>() > 0) {
        const int warps = choice == PotrfKernel::kTile16 ? 16
                          : choice == PotrfKernel::kTile4 ? 4
                          : choice == PotrfKernel::kTile2 ? 2
                                                          : 8;
        return launch_potrf_tile(A, L, info, batch, n, upper, warps, stream);
      }
      break;
    case PotrfKernel::kLeft:
    case PotrfKernel::kLeftSplit:
      return launch_left_layout(A, L, info, batch, DenseLayout{n}, n, upper,
                                /*split=*/choice == PotrfKernel::kLeftSplit, stream);
    case PotrfKernel::kShared:
      return launch_shared_layout(A, L, info, batch, DenseLayout{n}, n, upper, stream);
    case PotrfKernel::kBlocked:
      return launch_blocked_layout(A, L, info, batch, DenseLayout{n}, n, upper, stream);
  }
  TORCH_CHECK(false, "batchchol.potrf: n = ", std::to_string(n),
              " is larger than the CUDA kernels support");
}

template <typename T>
bool posv_fuses_wide(int n) {
  const PotrfKernel choice = choose_potrf_kernel<T>(n);
  if (choice == PotrfKernel::kWide) return true;
  return std::is_same_v<T, double> && n >= kWideMinN && n <= kPosvWideMaxN &&
         (choice == PotrfKernel::kWarp || choice == PotrfKernel::kTile2);
}

// tile_warps's two-warp blocks are the fixed-size dispatch's alone: the ragged one gives
// float64's two-tile-column group to warp64 (wide with BATCHCHOL_RAGGED_WARP64=0).
static_assert(wide_dispatch_max_n<double>() >= 64,
              "tile2's orders would reach the ragged tile launches");

template <typename T>
int posv_tile_warps(int n) {
  if constexpr (tile_posv_max_n<T>() > 0) {
    // (posv_fuses_wide holds only where potrf runs wide, warp or tile2, so never here.)
    if (n <= 32 || n > tile_posv_max_n<T>()) return 0;
    const PotrfKernel choice = choose_potrf_kernel<T>(n);
    // Where potrf packs its four-warp blocks (float64 97..128 with the MMA update), potrf
    // + potrs beat the fused kernel, which has no packed form (eight unpacked warps there):
    // H200, posv_solve, one column, fused / not (BATCHCHOL_POSV_FUSED_MAX_K=0), one
    // process: 100,000 systems, 97 14.66 / 13.45 ms, 112 14.90 / 13.61, 128 15.07 / 14.52;
    // 20,000 of 128 3.056 / 2.988; at 96, where potrf runs unpacked tile4, 7.46 / 8.71
    // (results/h200-2026-11-28-round48-tile4-packed-ab.txt).
    if (choice == PotrfKernel::kTile4) return tile_packs<T>((n + 31) / 32, 4) ? 0 : 4;
    if (choice == PotrfKernel::kTile) return 8;
  }
  return 0;
}

template <typename T>
bool potrf_single_candidate(int n) {
  return choose_potrf_kernel<T>(n) == PotrfKernel::kBlocked || f64_tile_order_past_128<T>(n);
}

#define BATCHCHOL_INSTANTIATE(T)                                                          \
  template void launch_potrf<T>(const T*, T*, int*, int64_t, int, bool, cudaStream_t); \
  template bool posv_fuses_wide<T>(int);                                                 \
  template int posv_tile_warps<T>(int);                                                  \
  template bool potrf_single_candidate<T>(int);
BATCHCHOL_INSTANTIATE(float)
BATCHCHOL_INSTANTIATE(double)
BATCHCHOL_INSTANTIATE(c10::complex<float>)
BATCHCHOL_INSTANTIATE(c10::complex<double>)
#undef BATCHCHOL_INSTANTIATE

}  // namespace cuda

std::tuple<at::Tensor, at::Tensor> potrf_cuda(const at::Tensor& A_in, bool upper) {
  check_matrix_op(kPotrf, "A", A_in);
  const c10::cuda::OptionalCUDAGuard guard(A_in.device());
  const at::Tensor A = flatten_batch(A_in);
  const int64_t batch = A.size(0);
  const int64_t n = A.size(-1);
  TORCH_CHECK_VALUE(n <= INT32_MAX / 2, kPotrf, ": n = ", std::to_string(n), " is too large");
  at::Tensor L = at::empty(A_in.sizes(), A_in.options().memory_format(at::MemoryFormat::Contiguous));
  std::vector<int64_t> batch_shape(A_in.sizes().begin(), A_in.sizes().end() - 2);
  at::Tensor info = at::empty(batch_shape, A_in.options().dtype(at::kInt));
  if (batch == 0) return {L, info};
  if (n == 0) {
    info.zero_();
    return {L, info};
  }
  if (cuda::potrf_single_applies(A, batch, n)) {
    cuda::potrf_single(A, upper, L, info);
    return {L, info};
  }
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  AT_DISPATCH_FLOATING_AND_COMPLEX_TYPES(A.scalar_type(), "batchchol_potrf_cuda", [&] {
    cuda::launch_potrf<scalar_t>(A.const_data_ptr<scalar_t>(), L.mutable_data_ptr<scalar_t>(),
                                 info.mutable_data_ptr<int>(), batch, static_cast<int>(n), upper,
                                 stream);
  });
  return {L, info};
}

TORCH_LIBRARY_IMPL(batchchol, CUDA, m) { m.impl("potrf", &potrf_cuda); }

}  // namespace batchchol
