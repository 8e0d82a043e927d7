// Batched kernels of trsm and potrs: independent warps, each solving one
// (system, group of CPW right-hand-side columns); several warps per block so that
// small systems still fill the SMs. Host-side helpers pick CPW and launch.
#pragma once

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "cuda/launch_utils.h"
#include "cuda/trsm_warp_solve.cuh"

namespace batchchol {
namespace cuda {

constexpr int kTrsmWarps = 4;  // warps (independent systems) per block

// The warp solves' A/B switches, read at every call: on unless the variable is "0".
inline bool trsm_switch_on(const char* name) {
  const char* env = std::getenv(name);
  return env == nullptr || std::strcmp(env, "0") != 0;
}

// BATCHCHOL_TRSM_L2FIRST=0: the MMA path's tiles (trsm_issue_tile) and the warp solves'
// chunked right-hand sides (trsm_load_rhs) without the L2 evict-first policy (also the
// way around a build whose hinted copies tools/check_sass_descriptors.py flags).
inline bool trsm_l2_first_enabled() { return trsm_switch_on("BATCHCHOL_TRSM_L2FIRST"); }

// BATCHCHOL_TRSM_FULLTILES=0: the warp and panel solves' full off-diagonal tiles staged
// with the per-entry tests of the partial ones (trsm_stage_tile, trsm_issue_tile), and
// float32 past n = 96 back on the block kernels from 16 columns (trsm_pick_kernel).
inline bool trsm_full_tiles_enabled() { return trsm_switch_on("BATCHCHOL_TRSM_FULLTILES"); }

// BATCHCHOL_TRSM_ASYNC32=0: the float32 warp solves stage their tiles through registers
// (trsm_stage_tile) instead of copying them by cp.async as float64 does (trsm_tile_start),
// and float32 keeps the block kernels below the thirty-fourth round's bounds
// (trsm_pick_kernel).
inline bool trsm_async32_enabled() { return trsm_switch_on("BATCHCHOL_TRSM_ASYNC32"); }

// BATCHCHOL_TRSM_DIAGMMA=0: the MMA path's diagonal blocks by the one-row-per-lane loop
// (trsm_diag_block) instead of trsm_diag_block_mma, and float64 at n <= 96 back on the
// block kernels (trsm_pick_kernel).
inline bool trsm_diag_mma_enabled() { return trsm_switch_on("BATCHCHOL_TRSM_DIAGMMA"); }

// Whether the warp solves of T copy their tiles by cp.async where the launcher allows.
template <typename T>
inline bool trsm_async_dtype() {
  return !IsComplex<T>::value && (sizeof(T) == 8 || trsm_async32_enabled());
}

// Canonical view of op(A) X = B (left) or X op(A) = B (right). A right solve is
// op(A)^T X^T = B^T: op(A)^T is A^T (transposed read) or conj(A) (plain read), and
// X^T's rows are B's columns (rs = 1, cs = n). The canonical matrix is lower, so the
// order is forward exactly when the stored triangle, read in that orientation, is lower.
inline TrsmView trsm_view(int64_t n, int64_t k, bool upper, bool left, bool transpose,
                   bool unit_diagonal) {
  TrsmView v;
  v.n = int(n);
  v.trans = left ? transpose : !transpose;
  v.conj = transpose;
  v.unit = unit_diagonal;
  v.rev = upper != v.trans;
  v.rs = left ? k : 1;
  v.cs = left ? 1 : n;
  // BATCHCHOL_TRSM_YCHUNKS=0: the warp solves' lanes load their own solved rows
  // (trsm_rows_chunked).
  v.chunk_rows = trsm_switch_on("BATCHCHOL_TRSM_YCHUNKS");
  // BATCHCHOL_TRSM_IOCHUNKS=0: their right-hand sides in and solved rows out by lanes
  // (YCHUNKS=0 switches these off too: trsm_rows_chunked gates both).
  v.chunk_io = trsm_switch_on("BATCHCHOL_TRSM_IOCHUNKS");
  v.l2_first = trsm_l2_first_enabled();
  v.full_tiles = trsm_full_tiles_enabled();
  v.diag_mma = trsm_diag_mma_enabled();
  return v;
}

struct TrsmBatchParams {
  int64_t batch;     // systems
  int64_t a_stride;  // elements between the A of consecutive systems (0: shared)
  int64_t b_stride;  // elements between the B (and X) of consecutive systems
  int col_begin;     // first canonical column handled by this launch
  int col_end;       // one past the last
  int groups;        // column groups per system = ceil((col_end - col_begin) / CPW)
};

// Locates this warp's work; false for the idle warps of the last block.
template <int CPW>
__device__ __forceinline__ bool trsm_work_item(const TrsmBatchParams& p, int64_t& sys, int& c0,
                                               int& ncols) {
  const int64_t work = int64_t(blockIdx.x) * kTrsmWarps + (threadIdx.x >> 5);
  if (work >= p.batch * p.groups) return false;
  sys = work / p.groups;
  const int g = int(work - sys * p.groups);
  c0 = p.col_begin + g * CPW;
  ncols = min(CPW, p.col_end - c0);
  return true;
}

// This warp's tile slot (and its staged rows after it: trsm_warp_smem_bytes).
template <typename T, int CPW, bool kMma>
__device__ __forceinline__ T* trsm_warp_smem() {
  extern __shared__ __align__(16) unsigned char trsm_smem_raw[];
  return reinterpret_cast<T*>(trsm_smem_raw +
                              (threadIdx.x >> 5) * trsm_warp_smem_bytes<T, CPW, kMma>());
}

// Whether the warp solves run their products on the MMAs where trsm_mma_blocks allows:
// BATCHCHOL_TRSM_MMA=0 keeps the FMA loop (an A/B switch, read at every call like
// BATCHCHOL_TRSM_KERNEL).
inline bool trsm_mma_enabled() { return trsm_switch_on("BATCHCHOL_TRSM_MMA"); }

// Calls f(integral_constant<bool, kMma>) with the warp solves' MMA switch for T and CPW.
template <typename T, int CPW, typename F>
void with_trsm_mma(F&& f) {
  if constexpr (trsm_mma_blocks<T, CPW>() > 0) {
    if (trsm_mma_enabled()) return f(std::true_type{});
  }
  f(std::false_type{});
}

// X = op(A)^-1 B (or B op(A)^-1), described canonically by v (see trsm_device.cuh).
template <typename T, int CPW, bool kMma>
__global__ void __launch_bounds__(kTrsmWarps * 32)
    trsm_warp_kernel(const T* __restrict__ A, const T* B, T* X, TrsmView v, TrsmBatchParams p) {
  int64_t sys;
  int c0, ncols;
  if (!trsm_work_item<CPW>(p, sys, c0, ncols)) return;  // whole warp: no block barriers below
  const int64_t off = sys * p.b_stride + c0 * v.cs;
  trsm_warp_solve<T, CPW, kMma>(A + sys * p.a_stride, B + off, X + off, v, ncols,
                                trsm_warp_smem<T, CPW, kMma>(), threadIdx.x & 31);
}

// potrs: the forward pass (v1) then the backward pass (v2) by the same warp; the
// second pass reads the first one's result (rows of other lanes: the __syncwarp at
// the end of trsm_warp_solve orders those accesses), typically from L1/L2.
template <typename T, int CPW, bool kMma>
__device__ __forceinline__ void potrs_warp_body(const T* __restrict__ L, const T* B, T* X,
                                                const TrsmView& v1, const TrsmView& v2,
                                                const TrsmBatchParams& p) {
  int64_t sys;
  int c0, ncols;
  if (!trsm_work_item<CPW>(p, sys, c0, ncols)) return;
  T* Ms = trsm_warp_smem<T, CPW, kMma>();
  const int64_t off = sys * p.b_stride + c0 * v1.cs;
  const T* Ls = L + sys * p.a_stride;
  const int lane = threadIdx.x & 31;
  trsm_warp_solve<T, CPW, kMma>(Ls, B + off, X + off, v1, ncols, Ms, lane);
  trsm_warp_solve<T, CPW, kMma>(Ls, X + off, X + off, v2, ncols, Ms, lane);
}

template <typename T, int CPW>
__global__ void __launch_bounds__(kTrsmWarps * 32)
    potrs_warp_kernel(const T* __restrict__ L, const T* B, T* X, TrsmView v1, TrsmView v2,
                      TrsmBatchParams p) {
  potrs_warp_body<T, CPW, false>(L, B, X, v1, v2, p);
}

// The products on the MMAs (trsm_mma_blocks), held to three blocks per SM by registers
// (ptxas took 187 at 16 columns, two blocks; at four it spills: potrs_warp_mma4_kernel).
template <typename T, int CPW>
__global__ void __launch_bounds__(kTrsmWarps * 32, 3)
    potrs_warp_mma_kernel(const T* __restrict__ L, const T* B, T* X, TrsmView v1, TrsmView v2,
                          TrsmBatchParams p) {
  potrs_warp_body<T, CPW, true>(L, B, X, v1, v2, p);
}

// The same at four blocks per SM (128 registers; at 16 columns ptxas spills 112 bytes),
// for batches that this puts into one wave (potrs_mma_four_blocks).
template <typename T, int CPW>
__global__ void __launch_bounds__(kTrsmWarps * 32, 4)
    potrs_warp_mma4_kernel(const T* __restrict__ L, const T* B, T* X, TrsmView v1, TrsmView v2,
                           TrsmBatchParams p) {
  potrs_warp_body<T, CPW, true>(L, B, X, v1, v2, p);
}

// Widest column group per warp: at most 128 bytes of accumulators per lane (plus
// as many for the staged solution row), which keeps the hot loop in registers.
template <typename T>
constexpr int trsm_max_cpw() {
  return !IsComplex<T>::value ? 16 : (sizeof(T) >= 16 ? 4 : 8);
}

// Calls f(integral_constant<CPW>, col_begin, col_end) for the launches that cover
// k columns: full groups of kMax columns, then one narrower group for the rest
// (so k = 65 costs 4 wide groups and one single-column group, not 5 wide ones).
template <int kMax, typename F>
void trsm_split_columns_by(int64_t k, F&& f) {
  const int64_t full = k / kMax * kMax;
  if (full > 0) f(std::integral_constant<int, kMax>{}, int64_t(0), full);
  const int64_t rem = k - full;
  if (rem == 0) return;
  if (rem == 1) {
    f(std::integral_constant<int, 1>{}, full, k);
  } else if (rem <= 2) {
    f(std::integral_constant<int, 2>{}, full, k);
  } else if (rem <= 4) {
    f(std::integral_constant<int, 4>{}, full, k);
  } else if constexpr (kMax >= 8) {  // rem < kMax here
    if (rem <= 8) {
      f(std::integral_constant<int, 8>{}, full, k);
    } else if constexpr (kMax >= 16) {
      f(std::integral_constant<int, 16>{}, full, k);
    }
  }
}

// The widest group is trsm_max_cpw<T>() columns, or max_cpw (8 or 4) when given:
// narrower groups put more warps on each system.
template <typename T, typename F>
void trsm_split_columns(int64_t k, F&& f, int max_cpw = 0) {
  constexpr int kMax = trsm_max_cpw<T>();
  if constexpr (kMax > 8) {
    if (max_cpw == 8) return trsm_split_columns_by<8>(k, f);
  }
  if constexpr (kMax > 4) {
    if (max_cpw == 4) return trsm_split_columns_by<4>(k, f);
  }
  trsm_split_columns_by<kMax>(k, f);
}

// Grid and shared memory of one launch; raises for batches beyond the grid limit.
template <typename T, int CPW, bool kMma, typename Kernel>
inline dim3 trsm_prepare_launch(Kernel kernel, TrsmBatchParams& p, int64_t col_begin,
                                int64_t col_end, size_t& smem) {
  TORCH_CHECK(col_end <= INT_MAX, "batchchol: too many right-hand sides");
  p.col_begin = int(col_begin);
  p.col_end = int(col_end);
  p.groups = int((col_end - col_begin + CPW - 1) / CPW);
  const int64_t work = p.batch * p.groups;
  const int64_t blocks = (work + kTrsmWarps - 1) / kTrsmWarps;
  TORCH_CHECK(blocks <= INT_MAX, "batchchol: batch too large for one launch");
  smem = kTrsmWarps * trsm_warp_smem_bytes<T, CPW, kMma>();
  allow_dynamic_smem(kernel, smem);
  return dim3(unsigned(blocks));
}

// TrsmView::y_keep for a warp-solve launch of `work` warps (systems x column groups) of
// CPW columns, per_sm() of its blocks resident per SM (asked only where the rule needs
// it: the occupancy lookup takes a lock, and most launches are not float64 groups of 8+
// columns). Float64: as many blocks of Y as
// fill about a quarter of the L2 for the warps in flight stay normal, the later ones go
// evict-first (at least block 0, re-read most). A quarter, not half: the tiles' and
// right-hand sides' evict-first lines take L2 space too. H100, one process
// (results/h100-2026-11-27-y-keep-tune_trsm.txt; off / keep 2 / default ms): potrs n =
// 512, 2,000 systems, 16 columns (two 8-column groups) 2.278 / 2.152 / 2.137, 32 columns
// 3.341 / 2.914 / 2.922; n = 256, 10,000 systems, 16 columns 2.760 / 2.645 / 2.644;
// trsm n = 256 32 columns 2.425 / 2.127 / 2.128, n = 512 32 columns 2.174 / 1.874 /
// 1.878; n = 128 and 8 columns within 1%. Keep 2 where a warp's block is 4 KB and
// ~1,584-2,000 warps fly (12-16 MB), keep 4 at 2 KB (part 1: n = 512 2,000 systems
// 2.189 against 2.281 for keep 2). Other types off: float32 gained no more than the
// run's noise; so are groups below 8 columns (not measured). BATCHCHOL_TRSM_YKEEP = N
// forces N, = off every block normal, = auto (or unset) this rule (an A/B switch read at
// every launch); BATCHCHOL_TRSM_L2FIRST=0 turns it off as it does the other hinted
// copies (the way around a build whose hinted copies the SASS scan flags).
template <typename T, typename PerSm>
inline int trsm_y_keep(int64_t work, int cpw, PerSm&& per_sm) {
  constexpr int kOff = 1 << 30;
  if (!trsm_l2_first_enabled()) return kOff;
  const char* env = std::getenv("BATCHCHOL_TRSM_YKEEP");
  if (env != nullptr && std::strcmp(env, "auto") != 0) {
    if (std::strcmp(env, "off") == 0) return kOff;
    char* end = nullptr;
    const long keep = std::strtol(env, &end, 10);
    TORCH_CHECK(end != env && *end == '\0' && keep >= 0,
                "batchchol: BATCHCHOL_TRSM_YKEEP must be off, auto or a block count >= 0, got '",
                env, "'");
    return int(std::min<long>(keep, kOff));
  }
  if (!std::is_same_v<T, double> || cpw < 8) return kOff;
  const auto* prop = at::cuda::getCurrentDeviceProperties();
  const int64_t in_flight = std::max<int64_t>(
      1, std::min<int64_t>(work, int64_t(per_sm()) * kTrsmWarps * prop->multiProcessorCount));
  const int64_t kept_set = int64_t(kTrsmTile) * cpw * int64_t(sizeof(T)) * in_flight;
  const int64_t quarter = int64_t(prop->l2CacheSize) / 4;
  return int(std::min<int64_t>(kOff, std::max<int64_t>(1, (quarter + kept_set / 2) / kept_set)));
}

// Whether potrs's MMA solve of `work` warps (systems x column groups) takes
// potrs_warp_mma4_kernel instead of potrs_warp_mma_kernel (both at `smem` bytes a block):
// only where four blocks per SM hold in one wave a batch that three do not. The last
// wave's few warps then cost a whole warp's time; otherwise the spill and the fourth
// block's traffic cost more than its warps hide. H100, forced, one process
// (results/h100-2026-11-27-mma4-tune_trsm.txt): float64 n = 512, 2,000 systems, 16 columns
// 2.642 -> 2.491 / 2.490 ms, 8 columns 2.140 -> 1.962 / 1.967; n = 256, 10,000 systems
// (several waves either way), 16 columns 2.920 -> 3.196 / 3.216, 8 columns 2.319 -> 2.372
// / 2.396; n = 128, 10,000 systems, 16 columns 0.964 -> 1.006 / 0.999, 8 columns 0.802 ->
// 0.699 / 0.738 (a gain no rule of these runs explains, left out).
// BATCHCHOL_POTRS_MMA_BLOCKS=3|4 forces one (an A/B switch read at every call).
template <typename Kernel>
bool potrs_mma_four_blocks(Kernel kernel3, Kernel kernel4, int64_t work, size_t smem) {
  // Before the switch: a forced four-block launch needs the attribute as much as the
  // occupancy query does (kernel3's: trsm_prepare_launch).
  allow_dynamic_smem(kernel4, smem);
  if (const char* env = std::getenv("BATCHCHOL_POTRS_MMA_BLOCKS")) {
    TORCH_CHECK(std::strcmp(env, "3") == 0 || std::strcmp(env, "4") == 0,
                "batchchol: BATCHCHOL_POTRS_MMA_BLOCKS must be '3' or '4'");
    return env[0] == '4';
  }
  const int threads = kTrsmWarps * 32;
  // Warps in one wave of one block per SM.
  const int64_t per_block =
      int64_t(kTrsmWarps) * at::cuda::getCurrentDeviceProperties()->multiProcessorCount;
  const int64_t wave3 = resident_per_sm_cached(kernel3, threads, smem) * per_block;
  const int64_t wave4 = resident_per_sm_cached(kernel4, threads, smem) * per_block;
  return work > wave3 && work <= wave4;
}

}  // namespace cuda
}  // namespace batchchol
