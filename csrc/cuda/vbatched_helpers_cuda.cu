// CUDA kernels of the helper ops of the vbatched autograd formulas: one thread per
// output element, per-matrix sizes read from the metadata. They run in backward
// passes only, next to solves of the same order of work.
#include <ATen/Dispatch.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "common/ops_vbatched.h"
#include "common/ragged.h"
#include "cuda/launch_utils.h"
#include "cuda/ragged_launch.h"
#include "cuda/scalar_ops.cuh"

namespace batchchol {
namespace cuda {

namespace {

constexpr int kTile = 16;

struct GemmDims {
  int p_rows, p_cols, q_rows, q_cols;  // -1: n
  bool p_t, q_t;
};

__device__ __forceinline__ int dim_of(int d, int n) { return d < 0 ? n : d; }

// C_b = op(P_b) op(Q_b); grid (count, tiles), a kTile x kTile tile per block.
template <typename T>
__global__ void gemm_ragged_kernel(const T* __restrict__ P, const int64_t* __restrict__ po,
                                   const T* __restrict__ Q, const int64_t* __restrict__ qo,
                                   T* __restrict__ C, const int64_t* __restrict__ co,
                                   const int* __restrict__ sizes, const int* __restrict__ status,
                                   GemmDims d, int tiles_c) {
  const int64_t b = blockIdx.x;
  if (status[b] != 0) return;
  const int n = sizes[b];
  const int pr = dim_of(d.p_rows, n), pc = dim_of(d.p_cols, n);
  const int qr = dim_of(d.q_rows, n), qc = dim_of(d.q_cols, n);
  const int m = d.p_t ? pc : pr, inner = d.p_t ? pr : pc, cols = d.q_t ? qr : qc;
  const int i = (blockIdx.y / tiles_c) * kTile + threadIdx.y;
  const int j = (blockIdx.y % tiles_c) * kTile + threadIdx.x;
  if (i >= m || j >= cols) return;
  const T* pb = P + po[b];
  const T* qb = Q + qo[b];
  T acc = T(0);
  for (int r = 0; r < inner; ++r) {
    const T a = d.p_t ? conj_(pb[int64_t(r) * pc + i]) : pb[int64_t(i) * pc + r];
    const T c = d.q_t ? conj_(qb[int64_t(j) * qc + r]) : qb[int64_t(r) * qc + j];
    acc += a * c;
  }
  C[co[b] + int64_t(i) * cols + j] = acc;
}

template <typename T>
__global__ void tri_ragged_kernel(const T* __restrict__ X, T* __restrict__ Y,
                                  const int64_t* __restrict__ off, const int* __restrict__ sizes,
                                  const int* __restrict__ status, int mode) {
  const int64_t b = blockIdx.x;
  if (status[b] != 0) return;
  const int n = sizes[b];
  const T* x = X + off[b];
  T* y = Y + off[b];
  const int64_t nn = int64_t(n) * n;
  for (int64_t e = int64_t(blockIdx.y) * blockDim.x + threadIdx.x; e < nn;
       e += int64_t(gridDim.y) * blockDim.x) {
    const int i = int(e / n), j = int(e - int64_t(i) * n);
    const T v = x[e];
    T out = T(0);
    if (mode == kTriLower) out = j <= i ? v : T(0);
    if (mode == kTriPhi) out = j < i ? v : (j == i ? v * real_t<T>(0.5) : T(0));
    if (mode == kTriHermitianPart) out = (v + conj_(x[int64_t(j) * n + i])) * real_t<T>(0.5);
    if (mode == kTriTranspose) out = x[int64_t(j) * n + i];
    y[e] = out;
  }
}

}  // namespace

}  // namespace cuda

at::Tensor gemm_vbatched_cuda(const at::Tensor& P, const at::Tensor& p_offsets, int64_t p_rows,
                              int64_t p_cols, bool p_conj_trans, const at::Tensor& Q,
                              const at::Tensor& q_offsets, int64_t q_rows, int64_t q_cols,
                              bool q_conj_trans, const at::Tensor& n, const at::Tensor& c_offsets,
                              int64_t c_numel, c10::optional<int64_t> max_n) {
  constexpr const char* op = "batchchol._gemm_vbatched";
  check_gemm_vbatched(P, p_offsets, p_rows, p_cols, p_conj_trans, Q, q_offsets, q_rows, q_cols,
                      q_conj_trans, n, c_offsets);
  const c10::cuda::OptionalCUDAGuard guard(P.device());
  const BlockShape c_shape{p_conj_trans ? p_cols : p_rows, q_conj_trans ? q_rows : q_cols};
  const HelperBlocks hb =
      helper_block_status(op, n, max_n,
                          {{p_offsets, {p_rows, p_cols}, P.numel(), false},
                           {q_offsets, {q_rows, q_cols}, Q.numel(), false},
                           {c_offsets, c_shape, c_numel, true}});
  at::Tensor C = at::zeros({c_numel}, P.options());
  const int64_t count = n.size(0);
  if (count == 0) return C;
  // The grid covers the largest valid block (a host read: backward passes only).
  const int max_valid = int(at::where(hb.status.eq(0), hb.sizes, 0).max().item<int>());
  const int rows = int(c_shape.rows < 0 ? max_valid : c_shape.rows);
  const int cols = int(c_shape.cols < 0 ? max_valid : c_shape.cols);
  if (rows == 0 || cols == 0) return C;
  const int tiles_c = (cols + cuda::kTile - 1) / cuda::kTile;
  const int64_t tiles = int64_t((rows + cuda::kTile - 1) / cuda::kTile) * tiles_c;
  TORCH_CHECK(tiles <= 65535 && count <= INT32_MAX, op, ": blocks too large");
  const auto dev = P.device();
  // The offsets are read as dense arrays: a strided view is copied.
  const at::Tensor sz = hb.sizes.to(dev), st = hb.status.to(dev), Pc = P.contiguous(),
                   Qc = Q.contiguous(), po = p_offsets.to(dev).contiguous(),
                   qo = q_offsets.to(dev).contiguous(), co = c_offsets.to(dev).contiguous();
  const cuda::GemmDims d{int(p_rows), int(p_cols), int(q_rows), int(q_cols), p_conj_trans,
                         q_conj_trans};
  AT_DISPATCH_FLOATING_AND_COMPLEX_TYPES(P.scalar_type(), "batchchol_gemm_vbatched_cuda", [&] {
    cuda::gemm_ragged_kernel<scalar_t>
        <<<dim3(unsigned(count), unsigned(tiles)), dim3(cuda::kTile, cuda::kTile), 0,
           at::cuda::getCurrentCUDAStream()>>>(
            Pc.const_data_ptr<scalar_t>(), po.const_data_ptr<int64_t>(),
            Qc.const_data_ptr<scalar_t>(), qo.const_data_ptr<int64_t>(),
            C.mutable_data_ptr<scalar_t>(), co.const_data_ptr<int64_t>(),
            sz.const_data_ptr<int>(), st.const_data_ptr<int>(), d, tiles_c);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  });
  return C;
}

at::Tensor tri_vbatched_cuda(const at::Tensor& X, const at::Tensor& n, const at::Tensor& offsets,
                             int64_t mode, c10::optional<int64_t> max_n) {
  check_tri_vbatched(X, n, offsets, mode);
  const c10::cuda::OptionalCUDAGuard guard(X.device());
  const HelperBlocks hb = helper_block_status("batchchol._tri_vbatched", n, max_n,
                                              {{offsets, {}, X.numel(), true}});
  const at::Tensor Xc = X.contiguous();
  at::Tensor Y = cuda::zeroed_like(Xc);
  const int64_t count = n.size(0);
  if (count == 0) return Y;
  TORCH_CHECK(count <= INT32_MAX, "batchchol._tri_vbatched: too many blocks");
  const auto dev = X.device();
  const at::Tensor sz = hb.sizes.to(dev), st = hb.status.to(dev),
                   off = offsets.to(dev).contiguous();  // read as a dense array
  AT_DISPATCH_FLOATING_AND_COMPLEX_TYPES(X.scalar_type(), "batchchol_tri_vbatched_cuda", [&] {
    cuda::tri_ragged_kernel<scalar_t>
        <<<dim3(unsigned(count), 8), 256, 0, at::cuda::getCurrentCUDAStream()>>>(
            Xc.const_data_ptr<scalar_t>(), Y.mutable_data_ptr<scalar_t>(),
            off.const_data_ptr<int64_t>(), sz.const_data_ptr<int>(), st.const_data_ptr<int>(),
            int(mode));
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  });
  return Y;
}

TORCH_LIBRARY_IMPL(batchchol, CUDA, m) {
  m.impl("_gemm_vbatched", &gemm_vbatched_cuda);
  m.impl("_tri_vbatched", &tri_vbatched_cuda);
}

}  // namespace batchchol
