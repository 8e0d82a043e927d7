// Size dispatch of the warp family: each n runs the kernels of the smallest padded
// order NP >= n (warp_order, warp_chol_launch.h: exact up to 8, then steps of 2, 4, 8),
// with P lanes per matrix from warp_lanes (warp_chol_launch.h; potrf keeps a lane's rows
// within ~100 registers, posv takes more registers for more systems per warp at some orders):
//   float32: NP <= 4: P = 1, <= 8: 2, <= 16: 4, <= 32: 8 (16 at NP = 32 for potrf)
//   float64: NP <= 4: P = 1, <= 8: 2, <= 16: 8, <= 32: 16 (posv: 8 up to 24)
// and, past 32 (float32 to 64, float64 to 48), one warp per matrix with a run-time
// column loop (warp64_chol.cuh).
// Ragged batches (n <= 32) run the same orders with potrf's lanes (ragged_warp_lanes),
// grouped by order class on the device (launch_potrf_warp_groups_impl below).
// Included by one instantiation unit per op and dtype (warp_potrf_f32.cu, ...).
#pragma once

#include <c10/cuda/CUDAException.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <cstdlib>
#include <cstdint>
#include <string>
#include <type_traits>

#include "cuda/launch_utils.h"
#include "common/ragged.h"
#include "cuda/ragged_bins.h"
#include "cuda/stream_fanout.h"
#include "cuda/warp64_chol.cuh"
#include "cuda/warp64_ragged.cuh"
#include "cuda/warp_chol_kernels.cuh"
#include "cuda/warp_chol_launch.h"
#include "cuda/warp_chol_ragged.cuh"
#include "cuda/warp_ragged_one.cuh"

namespace batchchol {
namespace cuda {

template <int V>
using Int = std::integral_constant<int, V>;

// BATCHCHOL_WARP_P32=8 or 16 overrides the lanes per matrix of float32 NP = 32 (a
// tuning switch, read at every call like BATCHCHOL_POTRF_KERNEL); 0: the table.
inline int float32_np32_lanes() {
  const char* env = std::getenv("BATCHCHOL_WARP_P32");
  return env != nullptr ? std::atoi(env) : 0;
}

// Calls go(Int<warp_order(c)>{}) (0 <= c < kWarpOrderClasses).
template <typename G>
void with_order_class(int c, G&& go) {
  switch (c) {
    case 0: return go(Int<warp_order(0)>{});
    case 1: return go(Int<warp_order(1)>{});
    case 2: return go(Int<warp_order(2)>{});
    case 3: return go(Int<warp_order(3)>{});
    case 4: return go(Int<warp_order(4)>{});
    case 5: return go(Int<warp_order(5)>{});
    case 6: return go(Int<warp_order(6)>{});
    case 7: return go(Int<warp_order(7)>{});
    case 8: return go(Int<warp_order(8)>{});
    case 9: return go(Int<warp_order(9)>{});
    case 10: return go(Int<warp_order(10)>{});
    case 11: return go(Int<warp_order(11)>{});
    case 12: return go(Int<warp_order(12)>{});
    case 13: return go(Int<warp_order(13)>{});
    case 14: return go(Int<warp_order(14)>{});
    case 15: return go(Int<warp_order(15)>{});
    default: break;
  }
  TORCH_CHECK(false, "batchchol: no warp order class ", std::to_string(c));
}

// Calls f(Int<NP>{}, Int<P>{}) for order class c: NP = warp_order(c) and P lanes per
// matrix from the table.
template <typename T, bool kPosv, typename F>
void with_class_order(int c, F&& f) {
  with_order_class(c, [&](auto np) {
    constexpr int NP = decltype(np)::value;
    if constexpr (sizeof(T) == 4 && NP == 32) {
      const int lanes = float32_np32_lanes();
      if (lanes == 8) return f(np, Int<8>{});
      if (lanes == 16) return f(np, Int<16>{});
    }
    f(np, Int<warp_lanes<T, kPosv>(NP)>{});
  });
}

// Calls f(Int<NP>{}, Int<P>{}) for the padded order serving n (1 <= n <= 32).
template <typename T, bool kPosv, typename F>
void with_padded_order(int n, F&& f) {
  TORCH_CHECK(n >= 1 && n <= 32, "batchchol: n = ", std::to_string(n),
              " is outside the warp kernels' range");
  with_class_order<T, kPosv>(warp_order_class(n), f);
}

// Warps per block: blocks of at least ~16 KB of staged matrices (fewer, larger copies
// per barrier), at most 8 warps.
template <typename T, int P>
int warp_blocks_warps(const StageLayout& lay) {
  const int warp_bytes = (32 / P) * lay.ms * int(sizeof(T));
  return std::max(1, std::min(8, 16384 / warp_bytes));
}

template <typename T>
bool stage_vectorizable(const void* a, const void* b, int n) {
  const auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  return (int64_t(n) * n * sizeof(T)) % 16 == 0 && aligned(a) && (b == nullptr || aligned(b));
}

// Calls f(Int<W>{}) with the width of the warp64 kernel for order n (32 < n <=
// warp64_max_width): in float32 the order rounded up to 40, 48 or 64, so that the fixed
// update widths of the steps (warp64_steps) and the rows' registers follow n; float64
// runs 48 throughout. The widths only cut scratch entries past n: every width gives the
// same bits. H200, potrf, the issue's 256 MB batches, widest / by order, ms
// (benchmarks/results/h200-2026-11-28-round45-warp64-widths-ab.txt): float32 33 0.765 /
// 0.689, 36 0.525 / 0.462, 40 0.435 / 0.338, 44 0.391 / 0.341, 48 0.370 / 0.287;
// posv_solve (100,000 systems, one column) 36 1.396 / 1.114, 48 1.774 / 1.410. Float64 at
// 40 wide: 33 0.629 / 0.635, 36 0.476 / 0.496, 40 0.414 / 0.391 (the 40-wide kernel's
// 176 registers against 240 give 11 one-warp blocks per SM instead of 8, yet it lost at
// two of three orders: not kept).
// BATCHCHOL_WARP64_FULL (tests, tuning; read at every call): the widest kernel at every
// order.
template <typename T, typename F>
void with_warp64_width(int n, F&& f) {
  static_assert(warp_chol_max_n<T>() <= warp64_max_width<T>(),
                "an order of the warp family past its widest warp64 kernel");
  TORCH_CHECK(n > 32 && n <= warp64_max_width<T>(), "batchchol: n = ", std::to_string(n),
              " is outside the warp64 kernels' range");
  if constexpr (warp64_max_width<T>() == 64) {
    const bool full = std::getenv("BATCHCHOL_WARP64_FULL") != nullptr;
    if (n <= 40 && !full) return f(Int<40>{});
    if (n > 48 || full) return f(Int<64>{});
  }
  f(Int<48>{});
}

// One warp per matrix for 32 < n <= warp64_max_width (warp64_chol.cuh): the stage
// layout and launch shape (threads, shared memory) of either kernel.
// packed: the packed stage (stage_copy.cuh) at n = 64 with 16-byte copies, half the
// shared memory of the square one, which held the float32 kernels there at 12 one-warp
// blocks per SM against 16 by their 128 registers. H100, 2026-11-24
// (results/h100-2026-11-24-warp64-packed-ab.txt): potrf 10,000 matrices 0.237 -> 0.213
// ms, posv_solve 100,000 systems 2.457 -> 2.071 ms. Not below 64 (the square stage is
// under the limit there, and the packed copies place most elements one by one: n = 48
// 0.459 -> 0.581 ms, 34 0.645 -> 0.860).
template <typename T>
struct Warp64Launch {
  StageLayout lay;
  int threads;
  size_t smem;
  bool packed;
  Warp64Launch(int n, bool vec)
      : lay(vec && n == 64 ? make_packed_stage_layout(n) : make_stage_layout<32>(n)),
        packed(vec && n == 64) {
    threads = 32 * warp_blocks_warps<T, 32>(lay);
    smem = size_t(threads / 32) * (lay.ms + kWarp64ColBuf) * sizeof(T);
  }
  unsigned blocks(int64_t batch) const { return ceil_div(batch, threads / 32); }
};

// Launches the warp64 kernel pick(Int<W>, std::bool_constant<kPacked>) returns (potrf's
// or posv's; W from with_warp64_width, packed at n = 64 with 16-byte copies) over the
// batch: args..., then the stage layout, upper and vec, the tail both kernels share.
template <typename T, typename Pick, typename... Args>
void launch_warp64(Pick pick, int n, bool vec, int64_t batch, bool upper, cudaStream_t stream,
                   Args... args) {
  const Warp64Launch<T> w(n, vec);
  with_warp64_width<T>(n, [&](auto width) {
    auto kernel = pick(width, std::false_type{});
    if constexpr (decltype(width)::value == 64) {  // the packed stage is for n = 64 alone
      if (w.packed) kernel = pick(width, std::true_type{});
    }
    allow_dynamic_smem(kernel, w.smem);
    kernel<<<w.blocks(batch), w.threads, w.smem, stream>>>(args..., w.lay, upper, vec);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  });
}

// Where potrf stages its chunk packed (stage_copy.cuh): float64 orders 25..32 with
// 16-byte copies (n even), the only ones whose square stage (17 KB per one-warp block
// at 32) holds the SM to fewer warps than their registers do (12 against 16 at 32).
// H100, 2026-11-24 (results/h100-2026-11-24-stage-packed-ab.txt, 32,768 to 42,800
// matrices): n = 32 0.281 -> 0.251 ms, 30 0.336 -> 0.307, 28 0.281 -> 0.255; at 24 (16
// blocks by registers already) 0.271 -> 0.276, so not there.
template <typename T, int NP, int P>
constexpr bool warp_potrf_packed() {
  return sizeof(T) == 8 && P == 16 && NP >= 28;
}

template <typename T>
void launch_potrf_warp_impl(const T* A, T* L, int* info, int64_t batch, int n, bool upper,
                            cudaStream_t stream) {
  if (n > 32) {
    const auto pick = [](auto width, auto packed) {
      return potrf_warp64_kernel<T, decltype(width)::value, decltype(packed)::value>;
    };
    launch_warp64<T>(pick, n, stage_vectorizable<T>(A, L, n), batch, upper, stream, A, L, info,
                     batch);
    return;
  }
  with_padded_order<T, false>(n, [&](auto np, auto p) {
    constexpr int NP = decltype(np)::value, P = decltype(p)::value;
    const bool vec = stage_vectorizable<T>(A, L, n);
    const auto launch = [&](auto kernel, const StageLayout& lay) {
      const int threads = 32 * warp_blocks_warps<T, P>(lay);
      const int per_block = threads / P;
      const size_t smem = size_t(per_block) * lay.ms * sizeof(T);
      allow_dynamic_smem(kernel, smem);
      kernel<<<ceil_div(batch, per_block), threads, smem, stream>>>(A, L, info, batch, lay,
                                                                    upper, vec);
      C10_CUDA_KERNEL_LAUNCH_CHECK();
    };
    if constexpr (warp_potrf_packed<T, NP, P>()) {
      if (vec) {
        return launch(potrf_warp_kernel<T, NP, P, true>, make_packed_stage_layout(n));
      }
    }
    launch(potrf_warp_kernel<T, NP, P>, make_stage_layout<P>(n));
  });
}

// Register budget of the warp posv (255: posv_warp_kernel, bounded by its 256 threads;
// less: posv_warp_kernel_capped, __maxnreg__). Float64 NP = 16 took 139
// registers, 14 one-warp blocks per SM; at 128 it takes 112 without spilling, 18 blocks:
// H100, 100,000 systems, posv_solve 0.166 -> 0.143 ms (k = 1), 0.250 -> 0.218 (k = 4),
// posv 0.233 -> 0.211 (results/h100-2026-11-23-posv-cap-times.txt). Float32 from NP = 7:
// with the pivot by rsqrt_ (scalar_ops.cuh) ptxas schedules the fused steps with 85-255
// registers (178-255 from NP = 14; the division's slow-path branches had held the steps
// apart), which cost the one-warp blocks half their residency (100,000 systems,
// posv_solve n = 16 0.072 -> 0.095 ms); capped at what the division's version used
// (rounded to 8; 160 instead of its 168 at NP = 28 / 32, where 168 spilled 4 bytes and
// 160 keeps the same 12 warps per SM) they keep it, and the shorter chain wins (0.074 ->
// 0.066 ms, n = 32 0.296 -> 0.271; results/h100-2026-11-25-rsqrt-pivot-ab.txt). The
// warp posv is built for float and double only (warp_posv_f32.cu, warp_posv_f64.cu).
template <typename T, int NP, int P>
constexpr int posv_warp_max_regs() {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "real types only");
  if constexpr (std::is_same_v<T, double>) {
    return NP == 16 ? 128 : 255;
  } else if constexpr (NP <= 6) {
    return 255;
  } else if constexpr (NP <= 10) {
    return NP == 7 ? 80 : 72;  // 72 spilled 24 bytes at NP = 7
  } else if constexpr (NP <= 12) {
    return 80;
  } else if constexpr (NP <= 16) {
    return 96;
  } else if constexpr (NP <= 24 || P == 16) {
    return 128;
  } else {
    return 160;
  }
}

// 16-byte vectors each thread has in flight while posv_warp_kernel stages its chunk (the
// staging default is 4): 8 at the padded orders 16 and 32, whose kernels load, factor
// and solve in lockstep waves, so that a wave's loads are all issued at once. H100,
// 100,000 systems, posv_solve, three interleaved rounds
// (results/h100-2026-11-24-posv-loads-ab.txt): float64 n = 16 0.149-0.156 -> 0.134-0.143
// ms, n = 32 0.84-0.87 -> 0.76-0.79, float32 n = 16 0.088-0.089 -> 0.080-0.089, n = 32
// 0.36-0.37 -> 0.35-0.36; 2 was slower everywhere. The other orders were not measured.
template <int NP>
constexpr int posv_warp_load_vectors() {
  return NP == 16 || NP == 32 ? 8 : 4;
}

template <typename T>
bool launch_posv_warp_impl(const T* A, const T* B, T* X, T* L, int* info, int64_t batch, int n,
                           int k, bool upper, cudaStream_t stream) {
  if (n < 1 || n > warp_posv_max_n<T>()) return false;
  if constexpr (warp_posv_max_n<T>() > 32) {
    if (n > 32) {
      const auto pick = [](auto width, auto packed) {
        return posv_warp64_kernel<T, decltype(width)::value, decltype(packed)::value>;
      };
      launch_warp64<T>(pick, n, stage_vectorizable<T>(A, L, n), batch, upper, stream, A, B, X,
                       L, info, batch, k);
      return true;
    }
  }
  with_padded_order<T, true>(n, [&](auto np, auto p) {
    constexpr int NP = decltype(np)::value, P = decltype(p)::value;
    const StageLayout lay = make_stage_layout<P>(n);
    const int threads = 32 * warp_blocks_warps<T, P>(lay);
    const int per_block = threads / P;
    const size_t smem = size_t(per_block) * lay.ms * sizeof(T);
    const auto launch = [&](auto kernel) {
      allow_dynamic_smem(kernel, smem);
      kernel<<<ceil_div(batch, per_block), threads, smem, stream>>>(
          A, B, X, L, info, batch, k, lay, upper, stage_vectorizable<T>(A, L, n));
      C10_CUDA_KERNEL_LAUNCH_CHECK();
    };
    constexpr int kRegs = posv_warp_max_regs<T, NP, P>();
    constexpr int kLoadU = posv_warp_load_vectors<NP>();
    if constexpr (kRegs < 255) {
      launch(posv_warp_kernel_capped<T, NP, P, kRegs, kLoadU>);
    } else {
      launch(posv_warp_kernel<T, NP, P, kLoadU>);
    }
  });
  return true;
}

// Ragged batches: sg's warp part in three launches, order classes 0..7 (n <= 8),
// 8..11 (n <= 16) and 12..15 (n <= 32): each launch's registers and staging are its
// largest class's, so the small orders keep the occupancy of their own sizes. A launch
// whose classes are all above sg's is skipped. Small batches that reach the largest
// range take one launch for all classes instead (kWarpOneLaunchMax, warp_chol_launch.h);
// for potrf with the fused prologue, the smallest of those take the one-launch kernel
// (launch_potrf_warp_one_impl below) before they get here.
// The grid is what is resident at once (the warps loop over the tasks; the counts are on
// the device); the residency per SM is computed once per launch shape, on the first
// call's device.
template <typename T, int C_LO, int C_HI, bool kSolve>
void launch_warp_classes(const WarpListArgs<T>& args, const RaggedBatch& rb, const SizeGroups& sg,
                         cudaStream_t stream) {
  if (C_LO >= sg.warp_classes) return;
  constexpr int threads = kWarpRangeThreads;
  const size_t smem = size_t(threads / 32) * warp_range_elems<T, C_LO, C_HI>() * sizeof(T);
  auto kernel = warp_classes_kernel<T, C_LO, C_HI, kSolve>;
  allow_dynamic_smem(kernel, smem);
  static const int per_sm = resident_per_sm(kernel, threads, smem);
  const int64_t blocks = resident_grid(per_sm, ceil_div(rb.count, threads / 32));
  kernel<<<static_cast<unsigned>(blocks), threads, smem, stream>>>(args);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

template <typename T, bool kSolve>
void launch_warp_groups(const WarpListArgs<T>& args, const RaggedBatch& rb, const SizeGroups& sg,
                        const LaunchStreams& streams) {
  static_assert(kWarpOrderClasses == 16, "the launch ranges cover classes 0..15");
  // With max_n <= 16 the largest range is skipped anyway, and the one launch would run
  // the small orders at its registers.
  if (rb.count <= kWarpOneLaunchMax && sg.warp_classes > 12) {
    launch_warp_classes<T, 0, 15, kSolve>(args, rb, sg, streams[0]);
    return;
  }
  launch_warp_classes<T, 12, 15, kSolve>(args, rb, sg, streams[0]);
  launch_warp_classes<T, 8, 11, kSolve>(args, rb, sg, streams[1]);
  launch_warp_classes<T, 0, 7, kSolve>(args, rb, sg, streams[2]);
}

template <typename T>
WarpListArgs<T> warp_list_args(const T* A, T* L, int* info, const RaggedBatch& rb,
                               const SizeGroups& sg, bool upper) {
  WarpListArgs<T> args{};
  args.A = A;
  args.L = L;
  args.info = info;
  args.offsets = rb.offsets.const_data_ptr<int64_t>();
  args.sizes = rb.sizes.const_data_ptr<int>();
  args.counts = sg.counts();
  args.list = sg.list();
  args.stride = sg.stride;
  args.g0 = sg.warp_group(0);
  args.upper = upper;
  return args;  // B, X, b_offsets null: factor only
}

template <typename T>
void launch_potrf_warp_groups_impl(const T* A, T* L, int* info, const RaggedBatch& rb,
                                   const SizeGroups& sg, bool upper,
                                   const LaunchStreams& streams) {
  launch_warp_groups<T, false>(warp_list_args(A, L, info, rb, sg, upper), rb, sg, streams);
}

// The one-launch potrf (warp_ragged_one.cuh) where it serves the call (see
// launch_potrf_warp_one in warp_chol_launch.h); false, launching nothing, otherwise.
template <typename T>
bool launch_potrf_warp_one_impl(const T* A, T* L, int* info, const RaggedPrologue& p,
                                bool upper, cudaStream_t stream) {
  const SizeGroups& sg = p.sg;
  if (p.args.grp.counts == nullptr || sg.groups != 0 || sg.stride == 0 ||
      sg.warp_classes <= 12 || p.rb.count > warp_one_max_count<T>())
    return false;
  const cudaDeviceProp* prop = at::cuda::getCurrentDeviceProperties();
  constexpr int threads = kWarpOneThreads;
  const size_t smem =
      size_t(threads / 32) * warp_range_elems<T, 0, kWarpOrderClasses - 1>() * sizeof(T);
  if (!prop->cooperativeLaunch) return false;
  // Left to the separate launches under graph capture, where no host time is saved.
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  C10_CUDA_CHECK(cudaStreamIsCapturing(stream, &capture));
  if (capture != cudaStreamCaptureStatusNone) return false;
  WarpListArgs<T> args = warp_list_args(A, L, info, p.rb, sg, upper);
  PrologueArgs pa = p.args;
  // Blocks: one per task slot up to what is resident, but at least the check phase's and
  // as many as the separate settle kernel takes for a whole clear of L.
  int64_t needed = std::max<int64_t>(p.args.nflags, ceil_div(p.rb.count, threads / 32));
  if (p.args.gap.out != nullptr) {
    needed = std::max<int64_t>(
        needed, std::min<int64_t>(ceil_div(p.args.gap.numel * p.args.gap.words, threads),
                                  4 * prop->multiProcessorCount));
  }
  const auto launch = [&](auto index) {  // index: a value of the sizes' type
    const auto kernel = warp_potrf_one_kernel<T, decltype(index)>;
    // The dynamic and static shared memory together must fit a block, and a block an SM.
    static const size_t static_smem = static_smem_bytes(kernel);
    if (smem + static_smem > max_dynamic_smem()) return false;
    allow_dynamic_smem(kernel, smem);
    const int per_sm = occupancy_per_sm_cached(kernel, threads, smem);
    if (per_sm == 0) return false;
    const int64_t blocks = resident_grid(per_sm, needed);
    if (blocks < p.args.nflags) return false;
    void* params[] = {&pa, &args};
    C10_CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(kernel),
                                               dim3(static_cast<unsigned>(blocks)), dim3(threads),
                                               params, smem, stream));
    return true;
  };
  return p.args.sizes64 ? launch(int64_t{}) : launch(int32_t{});
}

template <typename T>
void launch_posv_warp_groups_impl(const T* A, const T* B, T* X, T* L, int* info,
                                  const RaggedBatch& rb, const SizeGroups& sg, int64_t k,
                                  bool upper, const LaunchStreams& streams) {
  TORCH_CHECK(k >= -1 && k <= INT32_MAX, "batchchol: bad right-hand-side count");
  WarpListArgs<T> args = warp_list_args(A, L, info, rb, sg, upper);
  args.B = B;
  args.X = X;
  args.b_offsets = rb.b_offsets.const_data_ptr<int64_t>();
  args.k = static_cast<int>(k);
  launch_warp_groups<T, true>(args, rb, sg, streams);
}

// Ragged batches: group g of sg (sizes 33..64) on potrf_warp64_list_kernel, the grid
// what is resident at once (the group's count is on the device). Returns false,
// launching nothing, where a block's shared memory does not fit the device.
template <typename T>
bool launch_potrf_warp64_group_impl(const T* A, T* L, int* info, const RaggedBatch& rb,
                                    const SizeGroups& sg, int g, bool upper,
                                    cudaStream_t stream) {
  TORCH_CHECK(g >= 0 && g < sg.groups && sg.stride == 0 &&
                  32 * (sg.nt_hi - g) == kWarp64RaggedMaxN,
              "batchchol: the warp64 list kernel does not serve tile group ", g);
  constexpr int threads = kWarp64RaggedThreads;
  const size_t smem = size_t(threads / 32) * kWarp64RaggedWarpElems * sizeof(T);
  if (smem > max_dynamic_smem()) return false;
  auto kernel = potrf_warp64_list_kernel<T>;
  allow_dynamic_smem(kernel, smem);
  const int64_t blocks = resident_blocks(kernel, threads, smem, ceil_div(rb.count, threads / 32));
  kernel<<<static_cast<unsigned>(blocks), threads, smem, stream>>>(
      A, L, info, rb.offsets.const_data_ptr<int64_t>(), rb.sizes.const_data_ptr<int>(),
      sg.counts(), sg.list(), g, upper);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return true;
}

}  // namespace cuda
}  // namespace batchchol
