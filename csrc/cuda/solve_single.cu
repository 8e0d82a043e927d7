// Which potrs and trsm calls go to cuSOLVER's potrs and cuBLAS's trsm through ATen
// (common/single_system.cpp): a single large system, as torch runs one.
//
// Why: the library's solves for n > 128 run one warp per system; the batch supplies the
// parallelism, so one system leaves the GPU nearly idle. H100, 2026-11-25 (one system,
// one right-hand side; KERNEL-NOTES, twenty-seventh round): float64 trsm n = 256 0.138
// ms against torch.linalg.solve_triangular's 0.056, 512 0.470 vs 0.072, 2048 6.550 vs
// 0.197; potrs 256 0.216 vs torch.cholesky_solve's 0.118, 2048 10.486 vs 0.380. At n =
// 128 the library's kernels led (trsm 0.054 vs 0.055, potrs 0.076 vs 0.107).
#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <c10/cuda/CUDAGraphsC10Utils.h>

#include <cstdlib>

#include "cuda/solve_single.h"

namespace batchchol {
namespace cuda {

namespace {
constexpr int64_t kSolveSingleMinN = 192;
}  // namespace

bool solve_single_applies(int64_t batch, int64_t n) {
  if (batch != 1 || n < kSolveSingleMinN || std::getenv("BATCHCHOL_TRSM_KERNEL")) return false;
  if (single_route_off("BATCHCHOL_SOLVE_SINGLE")) return false;
  // With MAGMA preferred, torch's cholesky_solve runs MAGMA's, which reads its info back
  // to the host: keep the library's kernels (as potrf_single does).
  if (at::globalContext().linalgPreferredBackend() == at::LinalgBackend::Magma) return false;
  // Under CUDA-graph capture the library's kernels, whose capture the tests check.
  return c10::cuda::currentStreamCaptureStatusMayInitCtx() == c10::cuda::CaptureStatus::None;
}

}  // namespace cuda
}  // namespace batchchol
