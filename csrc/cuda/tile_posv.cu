// The tile family's fused posv (tile_solve.cuh) and its launch: tile_potrf on the
// unpacked stage, the right-hand sides beside it in shared memory.
#include <c10/cuda/CUDAException.h>
#include <c10/util/Exception.h>

#include <climits>
#include <string>
#include <type_traits>

#include "cuda/launch_utils.h"
#include "cuda/tile_chol.cuh"
#include "cuda/tile_launch.h"
#include "cuda/tile_solve.cuh"
#include "cuda/tile_stage.cuh"

namespace batchchol {
namespace cuda {
namespace {

// The fused posv keeps the whole factor on the unpacked stage: no order in range packs
// at its widths, 8 warps or float32's 4 (float64 97..128 packs at 4: posv_tile_warps
// gives those orders 8 or none, and the launch checks).
template <typename T>
constexpr bool tile_posv_never_packs() {
  for (int nt = 1; nt <= tile_posv_max_n<T>() / kTile; ++nt) {
    if (tile_packs<T>(nt, 8) || (std::is_same_v<T, float> && tile_packs<T>(nt, 4))) return false;
  }
  return true;
}
static_assert(tile_posv_never_packs<double>() && tile_posv_never_packs<float>(),
              "the tile posv's orders would run the packed stage");

// One system per block: B, X [batch, n, k]; L may be null (posv_solve: the factor never
// leaves the chip), else it receives potrf's factor (the same steps: the same bits).
template <typename T, int NT, bool kMma, int kMinBlocks>
__global__ void __launch_bounds__(NT, kMinBlocks)
    posv_tile_kernel(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ X,
                     T* __restrict__ L, int* __restrict__ info, int n, int nt, int k, bool upper) {
  extern __shared__ __align__(16) unsigned char tile_smem_raw[];
  __shared__ int info_s;
  const TileSmem<T> sm(tile_smem_raw, nt);
  T* const y = sm.cb + kChainBuf;
  const int64_t b = blockIdx.x;
  const int64_t nn = int64_t(n) * n, nk = int64_t(n) * k;
  const int npad = kTile * nt;
  tile_stage_in<T, NT>(sm.s, A + b * nn, n, nt, upper);
  // Consecutive threads read consecutive entries of B (row-major n x k).
  for (int e = threadIdx.x; e < npad * k; e += NT) {
    const int r = e / k, c = e - r * k;
    y[c * npad + r] = r < n ? B[b * nk + e] : T(0);
  }
  __syncthreads();
  const TilePosvOut<T> out{{L == nullptr ? nullptr : L + b * nn, sm.s, n, nt, upper}, y, k};
  const int inf = tile_potrf<T, kMma>(sm.s, sm.col, sm.cb, nt, &info_s, out);
  if (threadIdx.x == 0) info[b] = inf;
  if (L != nullptr) out.l_out.segment(nt - 1, threadIdx.x, NT);
  // The last tile column's forward solve, then the backward one, a warp per column (each
  // warp reads only the column it solves and the stage, final since tile_potrf's last
  // barrier).
  for (int c = threadIdx.x / kTile; c < k; c += NT / kTile) {
    tile_forward_column(sm.s, y + c * npad, nt, nt - 1);
    tile_backward<T, tile_posv_max_n<T>() / kTile>(sm.s, y + c * npad, X + b * nk, n, nt, k, c,
                                                    inf != 0);
  }
}

template <typename T>
void launch_posv_tile_any(const T* A, const T* B, T* X, T* L, int* info, int64_t batch, int n,
                          int k, bool upper, int warps, cudaStream_t stream) {
  const int nt = (n + kTile - 1) / kTile;
  TORCH_CHECK(n >= 1 && n <= tile_posv_max_n<T>() && k >= 1 && batch <= INT32_MAX &&
                  (warps == 4 || warps == 8) && !tile_packs<T>(nt, warps),
              "batchchol: the tile posv kernel does not serve n = ", std::to_string(n),
              ", k = ", std::to_string(k), " with ", std::to_string(warps), " warps");
  const size_t smem = tile_posv_smem_bytes(n, k, sizeof(T));
  TORCH_CHECK(smem <= max_dynamic_smem(), "batchchol: the tile posv kernel needs ",
              std::to_string(smem), " bytes of shared memory for n = ", std::to_string(n));
  // Only the 4- and 8-warp instances on the unpacked stage are built (the check above).
  const auto launch = [&](auto threads, auto mma, auto) {
    constexpr int NT = decltype(threads)::value;
    if constexpr (NT == 128 || NT == 256) {
      with_tile_min_blocks<T, NT, false>(tile_posv_min_blocks<T, NT>(nt), [&](auto blocks) {
        auto kernel = posv_tile_kernel<T, NT, decltype(mma)::value, decltype(blocks)::value>;
        allow_dynamic_smem(kernel, smem);
        kernel<<<static_cast<unsigned>(batch), NT, smem, stream>>>(A, B, X, L, info, n, nt, k,
                                                                   upper);
        C10_CUDA_KERNEL_LAUNCH_CHECK();
      });
    }
  };
  with_tile_variant<T>(warps, /*packed=*/false, launch);
}

}  // namespace

size_t tile_posv_smem_bytes(int n, int k, size_t elem_size) {
  const int nt = (n + kTile - 1) / kTile;
  return tile_smem_bytes(n, elem_size) + size_t(kTile) * nt * k * elem_size;
}

void launch_posv_tile(const float* A, const float* B, float* X, float* L, int* info,
                      int64_t batch, int n, int k, bool upper, int warps, cudaStream_t stream) {
  launch_posv_tile_any(A, B, X, L, info, batch, n, k, upper, warps, stream);
}

void launch_posv_tile(const double* A, const double* B, double* X, double* L, int* info,
                      int64_t batch, int n, int k, bool upper, int warps, cudaStream_t stream) {
  launch_posv_tile_any(A, B, X, L, info, batch, n, k, upper, warps, stream);
}

}  // namespace cuda
}  // namespace batchchol
