// CPU kernels of the helper ops of the vbatched autograd formulas. Plain loops: they
// run in backward passes, where the solves dominate.
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <torch/library.h>

#include "common/ops_vbatched.h"
#include "common/ragged.h"
#include "cpu/dense_kernels.h"

namespace batchchol {

namespace {

int64_t dim_of(int64_t d, int64_t n) { return d == kSizeN ? n : d; }

template <typename T>
T cj(T v, bool conj) {
  if constexpr (cpu::is_complex_v<T>) return conj ? std::conj(v) : v;
  return v;
}

}  // namespace

at::Tensor gemm_vbatched_cpu(const at::Tensor& P, const at::Tensor& p_offsets, int64_t p_rows,
                             int64_t p_cols, bool p_conj_trans, const at::Tensor& Q,
                             const at::Tensor& q_offsets, int64_t q_rows, int64_t q_cols,
                             bool q_conj_trans, const at::Tensor& n, const at::Tensor& c_offsets,
                             int64_t c_numel, c10::optional<int64_t> max_n) {
  check_gemm_vbatched(P, p_offsets, p_rows, p_cols, p_conj_trans, Q, q_offsets, q_rows, q_cols,
                      q_conj_trans, n, c_offsets);
  const BlockShape c_shape{p_conj_trans ? p_cols : p_rows, q_conj_trans ? q_rows : q_cols};
  // Host metadata (the CPU backend): invalid blocks raise here.
  const HelperBlocks hb = helper_block_status(
      "batchchol._gemm_vbatched", n, max_n,
      {{p_offsets, {p_rows, p_cols}, P.numel(), false},
       {q_offsets, {q_rows, q_cols}, Q.numel(), false},
       {c_offsets, c_shape, c_numel, true}});
  at::Tensor C = at::zeros({c_numel}, P.options());
  const at::Tensor Pc = P.contiguous(), Qc = Q.contiguous();
  // The offsets are read as dense arrays: a strided view is copied.
  const at::Tensor poc = p_offsets.contiguous(), qoc = q_offsets.contiguous(),
                   coc = c_offsets.contiguous();
  const int32_t* sz = hb.sizes.const_data_ptr<int32_t>();
  const int64_t* po = poc.const_data_ptr<int64_t>();
  const int64_t* qo = qoc.const_data_ptr<int64_t>();
  const int64_t* co = coc.const_data_ptr<int64_t>();
  AT_DISPATCH_FLOATING_AND_COMPLEX_TYPES(P.scalar_type(), "batchchol_gemm_vbatched_cpu", [&] {
    const scalar_t* p = Pc.const_data_ptr<scalar_t>();
    const scalar_t* q = Qc.const_data_ptr<scalar_t>();
    scalar_t* c = C.mutable_data_ptr<scalar_t>();
    at::parallel_for(0, n.size(0), 1, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        const int64_t nb = sz[b];
        const int64_t pr = dim_of(p_rows, nb), pc = dim_of(p_cols, nb);
        const int64_t qr = dim_of(q_rows, nb), qc = dim_of(q_cols, nb);
        const int64_t m = p_conj_trans ? pc : pr, inner = p_conj_trans ? pr : pc;
        const int64_t cols = q_conj_trans ? qr : qc;
        const scalar_t* pb = p + po[b];
        const scalar_t* qb = q + qo[b];
        scalar_t* cb = c + co[b];
        for (int64_t i = 0; i < m; ++i)
          for (int64_t r = 0; r < inner; ++r) {
            const scalar_t a = p_conj_trans ? cj(pb[r * pc + i], true) : pb[i * pc + r];
            for (int64_t j = 0; j < cols; ++j)
              cb[i * cols + j] += a * (q_conj_trans ? cj(qb[j * qc + r], true) : qb[r * qc + j]);
          }
      }
    });
  });
  return C;
}

at::Tensor tri_vbatched_cpu(const at::Tensor& X, const at::Tensor& n, const at::Tensor& offsets,
                            int64_t mode, c10::optional<int64_t> max_n) {
  check_tri_vbatched(X, n, offsets, mode);
  const HelperBlocks hb = helper_block_status("batchchol._tri_vbatched", n, max_n,
                                              {{offsets, {}, X.numel(), true}});
  at::Tensor Y = at::zeros_like(X, at::MemoryFormat::Contiguous);
  const at::Tensor Xc = X.contiguous();
  const at::Tensor offc = offsets.contiguous();  // read as a dense array
  const int32_t* sz = hb.sizes.const_data_ptr<int32_t>();
  const int64_t* off = offc.const_data_ptr<int64_t>();
  AT_DISPATCH_FLOATING_AND_COMPLEX_TYPES(X.scalar_type(), "batchchol_tri_vbatched_cpu", [&] {
    const scalar_t* x = Xc.const_data_ptr<scalar_t>();
    scalar_t* y = Y.mutable_data_ptr<scalar_t>();
    at::parallel_for(0, n.size(0), 1, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        const int64_t nb = sz[b];
        const scalar_t* xb = x + off[b];
        scalar_t* yb = y + off[b];
        for (int64_t i = 0; i < nb; ++i)
          for (int64_t j = 0; j < nb; ++j) {
            const scalar_t v = xb[i * nb + j];
            scalar_t out = scalar_t(0);
            if (mode == kTriLower) out = j <= i ? v : scalar_t(0);
            if (mode == kTriPhi) out = j < i ? v : (j == i ? v * scalar_t(0.5) : scalar_t(0));
            if (mode == kTriHermitianPart) out = (v + cj(xb[j * nb + i], true)) * scalar_t(0.5);
            if (mode == kTriTranspose) out = xb[j * nb + i];
            yb[i * nb + j] = out;
          }
      }
    });
  });
  return Y;
}

TORCH_LIBRARY_IMPL(batchchol, CPU, m) {
  m.impl("_gemm_vbatched", &gemm_vbatched_cpu);
  m.impl("_tri_vbatched", &tri_vbatched_cpu);
}

}  // namespace batchchol
