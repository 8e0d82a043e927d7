// The tile potrf kernels (the fixed-size one in tile_factor.cuh, the ragged one here) and
// their launches.
#include <c10/cuda/CUDAException.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <string>
#include <type_traits>

#include "cuda/async_copy.cuh"
#include "cuda/batch_layout.cuh"
#include "cuda/launch_utils.h"
#include "cuda/ragged_bins.h"
#include "cuda/tile_factor.cuh"
#include "cuda/tile_launch.h"

namespace batchchol {
namespace cuda {
namespace {

// Ragged batches: block i factors matrices i, i + grid, ... of tile groups [g_lo, g_hi] of
// a SizeGroups list (ragged_bins.h), whose groups hold at most nt_max tiles per side. The
// group sizes are on the device, so a grid covering the whole batch has a block per
// matrix of every size, nearly all of them leaving at once in a skewed batch, yet
// passing through the SMs at two blocks per SM (order 128, eight warps then): 0.32 of
// 0.42 ms of kernels for 500 matrices of order 128 among 50,000 float64 ones. The grid is
// capped at kTileListWaves waves of resident blocks instead (H100, GPU time per call: that
// skewed batch 396 -> 290 us, uniform 1..128 7.94 -> 7.87 ms, but 10,000 matrices all of
// order 128 3.03 -> 3.12 ms; results/h100-2026-11-24-tile-grid-cap-ab.txt). (A first
// persistent grid, one block per SM looping, ran 17% slower at equal sizes.)
constexpr int kTileListWaves = 4;

// One matrix of a list, as a call (kCall) rather than inlined into the list kernel's
// loop. Inlined, the loop's index and the matrix's order, offset and tile count stay live
// through the factorization in registers (the fixed-size kernel reads its order from the
// launch parameters) and the allocation spills: float64 four-warp packed blocks 76 bytes
// of spill stores against none in the fixed-size kernel; ncu, 10,000 matrices of order
// 128: 2.8-3.4 M local spill requests, 2.21-2.28 ms against 1.46 for the fixed-size
// kernel (ncu's clocks), 0.27-0.28 issued warps per scheduler against 0.41. As a call,
// the loop's state is saved once per matrix and the callee allocates as a kernel of its
// own.
template <typename T, int NT, bool kMma, bool kPacked>
__device__ __noinline__ void tile_factor_listed(const TileSmem<T, kPacked> sm, int* info_s,
                                                const T* A, T* L, int n, int nt, bool upper,
                                                int* info, int b) {
  tile_factor_matrix<T, NT, kMma, kPacked>(sm, info_s, A, L, n, nt, upper, info, b);
}

// Whether the list kernel of NT threads calls tile_factor_listed: every build but the
// sixteen-warp one. H200, tools/ab_env-style A/B in one process, same bits
// (results/h200-2026-11-28-round49-list-call-ab.txt), 10,000 matrices, inlined / called,
// ms: float64 65..96 1.166 / 0.937 (four warps), 129..160 3.454 / 2.493 (eight, packed),
// float32 65..96 0.667 / 0.546, 129..160 2.486 / 1.762, 193..224 4.245 / 3.499; sixteen
// warps lost as a call: float64 161..192 4.697 / 5.003-5.065, float32 225..256 5.983 /
// 6.154.
constexpr bool tile_list_calls(int threads) { return threads != 512; }

template <typename T, int NT, bool kMma, bool kPacked, int kMinBlocks, bool kCall>
__global__ void __launch_bounds__(NT, kMinBlocks)
    potrf_tile_list_kernel(const T* __restrict__ A, T* __restrict__ L, int* __restrict__ info,
                           const int64_t* __restrict__ offsets, const int* __restrict__ sizes,
                           const int* __restrict__ counts, const int* __restrict__ list, int g_lo,
                           int g_hi, int nt_max, bool upper) {
  extern __shared__ __align__(16) unsigned char tile_smem_raw[];
  __shared__ int info_s;
  const TileSmem<T, kPacked> sm(tile_smem_raw, nt_max);
  int begin, end;
  group_range(counts, g_lo, g_hi, begin, end);
  for (int i = begin + int(blockIdx.x); i < end; i += int(gridDim.x)) {
    const int b = list[i];
    const int n = sizes[b];
    const int64_t o = offsets[b];
    const int nt = (n + kTile - 1) / kTile;
    if constexpr (kCall) {
      tile_factor_listed<T, NT, kMma, kPacked>(sm, &info_s, A + o, L + o, n, nt, upper, info, b);
    } else {
      tile_factor_matrix<T, NT, kMma, kPacked>(sm, &info_s, A + o, L + o, n, nt, upper, info, b);
    }
    __syncthreads();  // the stage is refilled by the next matrix
  }
}

template <typename T, int NT, bool kMma, bool kPacked>
void launch_tile(const T* A, T* L, int* info, int64_t batch, int n, bool upper,
                 cudaStream_t stream) {
  const int nt = (n + kTile - 1) / kTile;
  const size_t smem = tile_smem_bytes(n, sizeof(T), kPacked);
  TORCH_CHECK(smem <= max_dynamic_smem(), "batchchol: the tile potrf kernel needs ",
              std::to_string(smem), " bytes of shared memory for n = ", std::to_string(n));
  with_tile_min_blocks<T, NT, kPacked>(tile_min_blocks<T, NT, kPacked>(nt), [&](auto blocks) {
    auto kernel = potrf_tile_kernel<T, NT, kMma, kPacked, decltype(blocks)::value>;
    allow_dynamic_smem(kernel, smem);
    kernel<<<static_cast<unsigned>(batch), NT, smem, stream>>>(A, L, info, n, nt, upper);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  });
}

template <typename T, int NT, bool kMma, bool kPacked>
void launch_tile_list(const T* A, T* L, int* info, const RaggedBatch& rb, const SizeGroups& tg,
                      int g_lo, int g_hi, bool upper, cudaStream_t stream) {
  const int nt_max = tg.nt_hi - g_lo;
  const size_t smem = tile_smem_bytes(kTile * nt_max, sizeof(T), kPacked);
  TORCH_CHECK(smem <= max_dynamic_smem(), "batchchol: the tile potrf kernel needs ",
              std::to_string(smem), " bytes of shared memory for ", std::to_string(nt_max),
              " tiles");
  constexpr int kMaxNt = tile_max_n<float>() / kTile;
  TORCH_CHECK(nt_max >= 1 && nt_max <= kMaxNt, "batchchol: ", std::to_string(nt_max),
              " tiles per side exceed the tile family");
  // Residency per tile count (each count has one build), asked once per process (as the
  // warp launches do): the query is host work on every call otherwise, and the grid size
  // only sets how many matrices each block loops over (on a host with GPUs of different
  // kinds, the first one's value sizes every grid: a cost in speed, not in results).
  static std::atomic<int> per_sm_of[kMaxNt + 1] = {};
  const int build = tile_min_blocks<T, NT, kPacked>(nt_max);  // the kernel's blocks per SM
  with_tile_min_blocks<T, NT, kPacked>(build, [&](auto blocks) {
    auto kernel = potrf_tile_list_kernel<T, NT, kMma, kPacked, decltype(blocks)::value,
                                         tile_list_calls(NT)>;
    allow_dynamic_smem(kernel, smem);
    int per_sm = per_sm_of[nt_max].load(std::memory_order_relaxed);
    if (per_sm == 0) {
      per_sm = resident_per_sm(kernel, NT, smem);
      per_sm_of[nt_max].store(per_sm, std::memory_order_relaxed);
    }
    const int64_t grid =
        std::min<int64_t>(rb.count, kTileListWaves * resident_grid(per_sm, INT32_MAX));
    kernel<<<static_cast<unsigned>(grid), NT, smem, stream>>>(
        A, L, info, rb.offsets.const_data_ptr<int64_t>(), rb.sizes.const_data_ptr<int>(),
        tg.counts(), tg.list(), g_lo, g_hi, nt_max, upper);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  });
}

template <typename T>
void launch_tile_any(const T* A, T* L, int* info, int64_t batch, int n, bool upper, int warps,
                     cudaStream_t stream) {
  TORCH_CHECK(n >= 1 && n <= tile_max_n<T>(), "batchchol: the tile potrf kernels do not serve n = ",
              std::to_string(n));
  const bool packed = tile_packs<T>((n + kTile - 1) / kTile, warps);
  const auto launch = [&](auto threads, auto mma, auto pack) {
    launch_tile<T, decltype(threads)::value, decltype(mma)::value, decltype(pack)::value>(
        A, L, info, batch, n, upper, stream);
  };
  with_tile_variant<T>(warps, packed, launch);
}

template <typename T>
void launch_tile_groups_any(const T* A, T* L, int* info, const RaggedBatch& rb,
                            const SizeGroups& tg, int g_lo, int g_hi, bool upper, int warps,
                            cudaStream_t stream) {
  TORCH_CHECK(0 <= g_lo && g_lo <= g_hi && g_hi < tg.groups && tg.stride == 0 &&
                  kTile * tg.nt_hi <= tile_max_n<T>(),
              "batchchol: bad tile groups for the tile potrf kernels");
  const bool packed = tile_packs<T>(tg.nt_hi - g_lo, warps);
  const auto launch = [&](auto threads, auto mma, auto pack) {
    launch_tile_list<T, decltype(threads)::value, decltype(mma)::value, decltype(pack)::value>(
        A, L, info, rb, tg, g_lo, g_hi, upper, stream);
  };
  with_tile_variant<T>(warps, packed, launch);
}

}  // namespace

bool tile_float64_mma() { return float64_mma_on("BATCHCHOL_TILE_MMA"); }

bool tile_fits(int n, size_t elem_size) {
  // The kernel's one static int (info_s) comes out of the same budget.
  return tile_smem_bytes(n, elem_size) + 16 <= max_dynamic_smem();
}

void launch_potrf_tile(const float* A, float* L, int* info, int64_t batch, int n, bool upper,
                       int warps, cudaStream_t stream) {
  launch_tile_any(A, L, info, batch, n, upper, warps, stream);
}

void launch_potrf_tile(const double* A, double* L, int* info, int64_t batch, int n, bool upper,
                       int warps, cudaStream_t stream) {
  launch_tile_any(A, L, info, batch, n, upper, warps, stream);
}

void launch_potrf_tile_groups(const float* A, float* L, int* info, const RaggedBatch& rb,
                              const SizeGroups& tg, int g_lo, int g_hi, bool upper, int warps,
                              cudaStream_t stream) {
  launch_tile_groups_any(A, L, info, rb, tg, g_lo, g_hi, upper, warps, stream);
}

void launch_potrf_tile_groups(const double* A, double* L, int* info, const RaggedBatch& rb,
                              const SizeGroups& tg, int g_lo, int g_hi, bool upper, int warps,
                              cudaStream_t stream) {
  launch_tile_groups_any(A, L, info, rb, tg, g_lo, g_hi, upper, warps, stream);
}

}  // namespace cuda
}  // namespace batchchol
