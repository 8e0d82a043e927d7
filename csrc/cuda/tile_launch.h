// Launchers of the tile potrf family (tile_chol.cuh): one matrix per block, its lower
// triangle in shared memory as 32 x 32 tiles; real types, n <= tile_max_n<T>().
// Buffers are contiguous [batch, n, n] (or ragged), row-major; L does not alias A.
#pragma once

#include <c10/util/Exception.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace batchchol {
struct RaggedBatch;
namespace cuda {
struct SizeGroups;

// The packed triangle plus one tile of scratch must fit the 227 KB a block can opt
// into on sm_90: 10 x 10 tiles in float32, 6 x 6 in float64.
template <typename T>
constexpr int tile_max_n() {
  return std::is_same_v<T, float> ? 320 : std::is_same_v<T, double> ? 192 : 0;
}

// Warps per block for order n: 4 while three blocks fit an SM's shared memory (float64 n
// 65..96, float32 n <= 160: the "tile4" family; float64 up to 64 takes 2, below; at 128
// registers a thread, three blocks of 8 warps would not fit the register file), 8 while
// two do (float64 n <= 128, float32 n <= 192; and float64 129..160, float32 193..224 on
// the packed stage, tile_packed.cuh), 16 beyond (H100 tuning, potrf_cuda.cu); the
// ragged dispatch's launch of several tile groups (tile-one) takes it from here, the
// fixed-size dispatch and the ragged launches of one group from tile_fixed_warps (below).
// A block waits on its one-warp pivot chain for ~40% of its time, so another matrix per
// SM gains more than the wider phases lose (H200, 10,000 matrices,
// tools/tile_phase_probe.cu, same bits, results/h200-2026-11-28-tile4-probe.txt): float64
// 80 0.767 -> 0.621 ms, 96 0.779 -> 0.638; float32 144 1.587 -> 1.500, 160 1.591 -> 1.551.
// The thresholds are sm_90's (228 KB of shared memory per SM): on a GPU with less,
// tile4's orders may fit only two four-warp blocks per SM, fewer warps than the eight-warp
// blocks gave there (not measured). Float64 up to 64 (two tile columns, the fixed-size
// dispatch only: the ragged one gives that group to warp64): 2 warps ("tile2"), six blocks
// per SM by shared memory where 4 warps fit four by registers (H200, tools/ab_env.py,
// same bits, results/h200-2026-11-28-tile2-ab.txt: 56 0.328 -> 0.320 ms, 64 0.313 ->
// 0.302; at three tile columns, three blocks either way, it lost: 96 0.689 -> 0.940).
template <typename T>
constexpr int tile_warps(int n) {
  if (std::is_same_v<T, double> && n <= 64) return 2;
  if (n <= (std::is_same_v<T, float> ? 160 : 96)) return 4;
  return n <= (std::is_same_v<T, float> ? 224 : 160) ? 8 : 16;
}

// Whether order nt (tile columns) runs the packed stage (tile_packed.cuh) in blocks of
// `warps` warps (tile_warps gives 8 at float64's five tile columns and float32's seven;
// tile_fixed_warps 4 at float64's four with the MMA update; tile4 forced there packs
// with the FMA update too, a build the default dispatch does not take: 168 registers, 40
// bytes of stack). tile_potrf_packed's last warp must hold no panel rows at step 1: nt
// <= warps + 1.
template <typename T>
constexpr bool tile_packs(int nt, int warps) {
  if (std::is_same_v<T, double>) return (nt == 4 && warps == 4) || (nt == 5 && warps == 8);
  return std::is_same_v<T, float> && nt == 7 && warps == 8;
}

// Blocks per SM the tile kernels of nt tile columns are built for (__launch_bounds__'
// second argument, which caps a thread's registers at 64 K / (blocks x NT)): the register
// file's share at 128 registers a thread, 512 / NT, except four-warp blocks (tile4) in two
// cases. Float32's on the unpacked stage up to four tile columns, built for 7 at 72
// registers: their stage, not the registers, then bounds the blocks per SM (float32 65..96:
// 30 KB, 7 blocks; 97..128: 46 KB, 5; four either way at 128 registers), and ptxas fits the
// chain, the panel solve and the FMA update in 72 with less local memory (24 bytes of stack
// against 64). H200, 10,000 matrices, same bits
// (results/h200-2026-11-28-round47-tile-min-blocks-ab.txt), previous build / built for 7,
// one process: 97 0.843 / 0.778 ms, 112 0.876 / 0.808, 128 0.903 / 0.838; five tile columns
// (three blocks by the stage either way) 129 1.531 / 1.589, 160 1.621 / 1.671, so they keep
// the previous build. Other runs there: built for 4 / 6, 128 0.918 / 0.859; 6 / 7, 128
// 0.854 / 0.837, tile4 forced at 65 0.447 / 0.419, 96 0.483 / 0.463. Float64's on the
// packed stage (four tile columns, three blocks per SM by the stage), built for 3: 168
// registers and no stack with the MMA update where the build for 4 spills (128 registers,
// 64 bytes of stack; 128: 1.122 against 1.309 ms, ...-round48-tile4-packed-probe.txt).
// Float64's on the unpacked stage (65..96, three blocks per SM by the stage) gained
// 0.4-1.2% built for three (168 registers, 65 / 80 / 96): not taken.
template <typename T, int NT, bool kPacked>
constexpr int tile_min_blocks(int nt) {
  if (NT == 128 && std::is_same_v<T, float> && !kPacked) return nt <= 4 ? 7 : 512 / NT;
  if (NT == 128 && std::is_same_v<T, double> && kPacked) return 3;
  return 512 / NT;
}

// The fused posv's (tile_posv.cu, the unpacked stage only): its stage holds the
// right-hand sides too, so float32 four-warp blocks fit at most four per SM from four
// tile columns, where an 80-register build lost (posv_solve, one column, built for 4 / 6,
// one process: 97 8.25 / 8.46 ms, 128 1.705 / 1.730), and seven at three (float32
// 65..96), where it won (6 / 7: 65 4.25 / 3.97, 96 4.38 / 4.23; 4 / 6 in another run, 65
// 4.85 / 4.27; before, potrf on wide + potrs: 65 6.13, 96 6.27; same file). So at 97..128
// posv runs another build than potrf (the same source and arithmetic: its factor is
// potrf's bit for bit, which test_tile_fused_posv checks).
template <typename T, int NT>
constexpr int tile_posv_min_blocks(int nt) {
  return std::is_same_v<T, float> && NT == 128 && nt <= 3 ? 7 : 512 / NT;
}

// Calls f(integral_constant<int, B>{}) for B = blocks, one of the values
// tile_min_blocks<T, NT, kPacked> takes (its value at one tile column or at the most, the
// kernels' builds; tile_posv_min_blocks's are among the unpacked stage's).
template <typename T, int NT, bool kPacked, typename F>
void with_tile_min_blocks(int blocks, F&& f) {
  constexpr int kFew = tile_min_blocks<T, NT, kPacked>(1);
  constexpr int kMany = tile_min_blocks<T, NT, kPacked>(tile_max_n<float>() / 32);
  if constexpr (kFew != kMany) {
    if (blocks == kFew) return f(std::integral_constant<int, kFew>{});
  }
  TORCH_INTERNAL_ASSERT(blocks == kMany, "batchchol: no tile build for ", blocks, " blocks");
  f(std::integral_constant<int, kMany>{});
}

// Whether the tiles of order n fit the shared memory a block of the current device may
// opt into (the unpacked stage, the larger).
bool tile_fits(int n, size_t elem_size);

// Whether the tile families' float64 trailing updates run on the MMAs: on sm_80 and later
// (the current device), unless BATCHCHOL_TILE_MMA is 0 (an A/B switch, read at every
// call). The size dispatch gives tile its float64 orders 129..160 only then.
bool tile_float64_mma();

// The width of a launch whose matrices all have order n's tile count (the fixed-size
// dispatch, the ragged one's launch of one group): tile_warps's, except float64 97..128 (four
// tile columns), which run four-warp blocks on the packed stage (tile_packs) where the
// trailing updates run on the MMAs: 74.5 KB, three blocks per SM, where the unpacked
// stage's 90 KB fit two (of 8 warps, or of 4: 1.359 ms for 128, same file). Built for
// three (tile_min_blocks), same bits. H200, 10,000 matrices, 8 warps unpacked / 4 packed:
// tools/tile_packed_probe.cu (results/h200-2026-11-28-round48-tile4-packed-probe.txt), 97
// 1.244 / 1.058 ms, 112 1.274 / 1.090, 128 1.287 / 1.122; tools/ab_env.py, one process
// (...-round48-tile4-packed-ab.txt), 97 1.257 / 1.072, 112 1.283 / 1.100, 128 1.308 /
// 1.140. Not with the FMA update (BATCHCHOL_TILE_MMA=0: 100 1.450 / 1.480, 128 1.462 /
// 1.526, same file). The ragged dispatch's launches of one tile group take it too since
// their list kernel calls the factorization instead of inlining it (tile_potrf.cu:
// inlined, the packed list build spilled and lost, Nmax = 128 uniform 50,000 matrices
// 3.947 -> 4.442 ms; called, 10,000 matrices of 97..128 1.750 ms with eight warps, 1.431
// with four packed; results/h200-2026-11-28-round49-list-call-ab.txt). The ragged
// launch of several groups (tile-one) keeps tile_warps.
template <typename T>
int tile_fixed_warps(int n) {
  if (tile_packs<T>((n + 31) / 32, 4) && tile_float64_mma()) return 4;
  return tile_warps<T>(n);
}

// Calls f(integral_constant<int, NT>{}, integral_constant<bool, kMma>{},
// integral_constant<bool, kPacked>{}) for NT = 32 * warps threads (2, 4, 8 or 16 warps),
// kMma for float64 where tile_float64_mma() holds, kPacked where `packed` (the callers'
// tile_packs: 8 warps, or 4 in float64, whose four tile columns tile_fixed_warps gives
// with the MMA update and a forced tile4 with either update; the fused posv passes
// false: it has no packed form). The kMma instances exist on every architecture the
// build targets (a launched template's arguments must not depend on __CUDA_ARCH__);
// below sm_80 dmma_m8n8k4 traps. Shared by the potrf launches (tile_potrf.cu) and the
// fused posv's (tile_posv.cu).
template <typename T, typename F>
void with_tile_variant(int warps, bool packed, F&& f) {
  const auto threads = [&](auto mma) {
    if (warps == 16) return f(std::integral_constant<int, 512>{}, mma, std::false_type{});
    if (warps == 4) {
      if constexpr (std::is_same_v<T, double>) {
        if (packed) return f(std::integral_constant<int, 128>{}, mma, std::true_type{});
      }
      TORCH_INTERNAL_ASSERT(!packed, "batchchol: no packed four-warp tile build here");
      return f(std::integral_constant<int, 128>{}, mma, std::false_type{});
    }
    if (warps == 2) return f(std::integral_constant<int, 64>{}, mma, std::false_type{});
    if (packed) return f(std::integral_constant<int, 256>{}, mma, std::true_type{});
    f(std::integral_constant<int, 256>{}, mma, std::false_type{});
  };
  if constexpr (std::is_same_v<T, double>) {
    if (tile_float64_mma()) return threads(std::true_type{});
  }
  threads(std::false_type{});
}

// warps: 2, 4, 8 or 16 warps per block; the orders and widths of tile_packs (above) run
// the packed stage.
void launch_potrf_tile(const float* A, float* L, int* info, int64_t batch, int n, bool upper,
                       int warps, cudaStream_t stream);
void launch_potrf_tile(const double* A, double* L, int* info, int64_t batch, int n, bool upper,
                       int warps, cudaStream_t stream);

// Ragged batches: the matrices of groups [g_lo, g_hi] of tg (ragged_bins.h), in one
// launch sized for group g_lo's tile count (packed as tile_packs says for that count and
// warps); their info entries are written, nothing else of the batch is touched.
void launch_potrf_tile_groups(const float* A, float* L, int* info, const RaggedBatch& rb,
                              const SizeGroups& tg, int g_lo, int g_hi, bool upper, int warps,
                              cudaStream_t stream);
void launch_potrf_tile_groups(const double* A, double* L, int* info, const RaggedBatch& rb,
                              const SizeGroups& tg, int g_lo, int g_hi, bool upper, int warps,
                              cudaStream_t stream);

// The fused posv (tile_posv.cu, tile_solve.cuh): float64 up to 128, float32 up to 192, on
// the unpacked stage with 4 or 8 warps (not where potrf runs tile4 on the packed stage,
// float64 97..128: posv_tile_warps); the packed stage would need the factor's first tile
// column back after its slot is reused.
template <typename T>
constexpr int tile_posv_max_n() {
  return std::is_same_v<T, float> ? 192 : std::is_same_v<T, double> ? 128 : 0;
}

// Shared memory of the fused posv: potrf's stage and the k right-hand sides.
size_t tile_posv_smem_bytes(int n, int k, size_t elem_size);

// B, X [batch, n, k]; L null (posv_solve) or the factor as launch_potrf_tile writes it;
// warps: 4 or 8, as potrf's family for n (posv_tile_warps).
void launch_posv_tile(const float* A, const float* B, float* X, float* L, int* info,
                      int64_t batch, int n, int k, bool upper, int warps, cudaStream_t stream);
void launch_posv_tile(const double* A, const double* B, double* X, double* L, int* info,
                      int64_t batch, int n, int k, bool upper, int warps, cudaStream_t stream);

}  // namespace cuda
}  // namespace batchchol
