// CPU kernels of the ragged-batch ops: the per-matrix routines of dense_kernels.h,
// one matrix per iteration of a parallel loop over the batch. On the CPU the
// metadata is always on the host, so prepare_ragged has validated every matrix.
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <torch/library.h>

#include <vector>

#include "common/ops_vbatched.h"
#include "common/ragged.h"
#include "cpu/batch_loop.h"
#include "cpu/dense_kernels.h"

namespace batchchol {

namespace {

// Parallel loop over the matrices with a grain sized by the largest one.
template <typename F>
void for_each_matrix(const RaggedBatch& rb, double flops_per_unit_n3, F&& f) {
  const double n = static_cast<double>(rb.max_n);
  at::parallel_for(0, rb.count, cpu::batch_grain(flops_per_unit_n3 * n * n * n + n * n), f);
}

// Columns of system i's right-hand side: k, or n_i for k = -1 (square blocks).
inline int64_t rhs_cols(int64_t k, int64_t n) { return k < 0 ? n : k; }

}  // namespace

std::tuple<at::Tensor, at::Tensor> potrf_vbatched_cpu(const at::Tensor& A, const at::Tensor& n,
                                                      const at::Tensor& offsets,
                                                      c10::optional<int64_t> max_n, bool upper) {
  check_ragged_matrices(kPotrfV, "A", A, n, offsets);
  const RaggedBatch rb = prepare_ragged(kPotrfV, A, n, offsets, max_n);
  at::Tensor L = at::zeros_like(A, at::MemoryFormat::Contiguous);
  at::Tensor info = at::zeros({rb.count}, A.options().dtype(at::kInt));
  if (rb.count == 0) return {L, info};
  const at::Tensor Ac = A.contiguous();
  const int32_t* sz = rb.sizes.const_data_ptr<int32_t>();
  const int64_t* off = rb.offsets.const_data_ptr<int64_t>();
  AT_DISPATCH_FLOATING_AND_COMPLEX_TYPES(A.scalar_type(), "batchchol_potrf_vbatched_cpu", [&] {
    const scalar_t* a = Ac.const_data_ptr<scalar_t>();
    scalar_t* l = L.mutable_data_ptr<scalar_t>();
    int32_t* inf = info.mutable_data_ptr<int32_t>();
    for_each_matrix(rb, 1.0 / 3.0, [&](int64_t b0, int64_t b1) {
      std::vector<cpu::real_t<scalar_t>> scratch(rb.max_n);
      for (int64_t i = b0; i < b1; ++i)
        inf[i] = sz[i] ? cpu::factor_into(a + off[i], l + off[i], sz[i], upper, scratch.data()) : 0;
    });
  });
  return {L, info};
}

at::Tensor potrs_vbatched_cpu(const at::Tensor& L, const at::Tensor& n, const at::Tensor& offsets,
                              const at::Tensor& B, const at::Tensor& b_offsets, int64_t k,
                              c10::optional<int64_t> max_n, bool upper) {
  const RaggedBatch rb =
      prepare_ragged_solve(kPotrsV, "L", L, n, offsets, B, b_offsets, k, max_n, /*left=*/true);
  at::Tensor X = at::zeros_like(B, at::MemoryFormat::Contiguous);
  if (rb.count == 0 || k == 0) return X;
  const at::Tensor Lc = L.contiguous(), Bc = B.contiguous();
  const int32_t* sz = rb.sizes.const_data_ptr<int32_t>();
  const int64_t* off = rb.offsets.const_data_ptr<int64_t>();
  const int64_t* boff = rb.b_offsets.const_data_ptr<int64_t>();
  AT_DISPATCH_FLOATING_AND_COMPLEX_TYPES(L.scalar_type(), "batchchol_potrs_vbatched_cpu", [&] {
    const scalar_t* l = Lc.const_data_ptr<scalar_t>();
    const scalar_t* b = Bc.const_data_ptr<scalar_t>();
    scalar_t* x = X.mutable_data_ptr<scalar_t>();
    for_each_matrix(rb, 2.0 * rhs_cols(k, rb.max_n) / std::max<int64_t>(rb.max_n, 1), [&](int64_t b0, int64_t b1) {
      for (int64_t i = b0; i < b1; ++i) {
        const int64_t ki = rhs_cols(k, sz[i]);
        std::copy(b + boff[i], b + boff[i] + sz[i] * ki, x + boff[i]);
        cpu::potrs_inplace(l + off[i], sz[i], x + boff[i], ki, upper);
      }
    });
  });
  return X;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> posv_vbatched_cpu(
    const at::Tensor& A, const at::Tensor& n, const at::Tensor& offsets, const at::Tensor& B,
    const at::Tensor& b_offsets, int64_t k, c10::optional<int64_t> max_n, bool upper) {
  const RaggedBatch rb =
      prepare_ragged_solve(kPosvV, "A", A, n, offsets, B, b_offsets, k, max_n, /*left=*/true);
  at::Tensor L = at::zeros_like(A, at::MemoryFormat::Contiguous);
  at::Tensor X = at::zeros_like(B, at::MemoryFormat::Contiguous);
  at::Tensor info = at::zeros({rb.count}, A.options().dtype(at::kInt));
  if (rb.count == 0) return {X, L, info};
  const at::Tensor Ac = A.contiguous(), Bc = B.contiguous();
  const int32_t* sz = rb.sizes.const_data_ptr<int32_t>();
  const int64_t* off = rb.offsets.const_data_ptr<int64_t>();
  const int64_t* boff = rb.b_offsets.const_data_ptr<int64_t>();
  AT_DISPATCH_FLOATING_AND_COMPLEX_TYPES(A.scalar_type(), "batchchol_posv_vbatched_cpu", [&] {
    const scalar_t* a = Ac.const_data_ptr<scalar_t>();
    const scalar_t* b = Bc.const_data_ptr<scalar_t>();
    scalar_t* l = L.mutable_data_ptr<scalar_t>();
    scalar_t* x = X.mutable_data_ptr<scalar_t>();
    int32_t* inf = info.mutable_data_ptr<int32_t>();
    for_each_matrix(rb, 1.0 / 3.0, [&](int64_t b0, int64_t b1) {
      std::vector<cpu::real_t<scalar_t>> scratch(rb.max_n);
      for (int64_t i = b0; i < b1; ++i) {
        if (sz[i] == 0) continue;
        const int64_t ki = rhs_cols(k, sz[i]);
        inf[i] = cpu::factor_into(a + off[i], l + off[i], sz[i], upper, scratch.data());
        std::copy(b + boff[i], b + boff[i] + sz[i] * ki, x + boff[i]);
        cpu::potrs_inplace(l + off[i], sz[i], x + boff[i], ki, upper);
      }
    });
  });
  return {X, L, info};
}

at::Tensor trsm_vbatched_cpu(const at::Tensor& A, const at::Tensor& n, const at::Tensor& offsets,
                             const at::Tensor& B, const at::Tensor& b_offsets, int64_t k_arg,
                             c10::optional<int64_t> max_n, bool upper, bool left, bool transpose,
                             bool unit_diagonal) {
  const RaggedBatch rb =
      prepare_ragged_solve(kTrsmV, "A", A, n, offsets, B, b_offsets, k_arg, max_n, left);
  at::Tensor X = at::zeros_like(B, at::MemoryFormat::Contiguous);
  if (rb.count == 0 || k_arg == 0) return X;
  const at::Tensor Ac = A.contiguous(), Bc = B.contiguous();
  const int32_t* sz = rb.sizes.const_data_ptr<int32_t>();
  const int64_t* off = rb.offsets.const_data_ptr<int64_t>();
  const int64_t* boff = rb.b_offsets.const_data_ptr<int64_t>();
  // As in trsm_cpu: a right solve is a left solve with A^T (or conj(A)) on B^T.
  const bool trans = left ? transpose : !transpose;
  const int64_t max_k = rhs_cols(k_arg, rb.max_n);
  AT_DISPATCH_FLOATING_AND_COMPLEX_TYPES(A.scalar_type(), "batchchol_trsm_vbatched_cpu", [&] {
    const scalar_t* a = Ac.const_data_ptr<scalar_t>();
    const scalar_t* b = Bc.const_data_ptr<scalar_t>();
    scalar_t* x = X.mutable_data_ptr<scalar_t>();
    for_each_matrix(rb, double(max_k) / std::max<int64_t>(rb.max_n, 1), [&](int64_t b0, int64_t b1) {
      std::vector<scalar_t> work(left ? 0 : rb.max_n * max_k);
      for (int64_t i = b0; i < b1; ++i) {
        const int64_t ni = sz[i], k = rhs_cols(k_arg, ni);
        const bool via_workspace = !left && k > 1;
        const scalar_t* bi = b + boff[i];
        scalar_t* xi = x + boff[i];
        if (!via_workspace) {
          std::copy(bi, bi + ni * k, xi);
          cpu::trsm_left(a + off[i], ni, xi, k, !upper, trans, transpose, unit_diagonal);
          continue;
        }
        scalar_t* w = work.data();
        for (int64_t c = 0; c < k; ++c)
          for (int64_t r = 0; r < ni; ++r) w[r * k + c] = bi[c * ni + r];
        cpu::trsm_left(a + off[i], ni, w, k, !upper, trans, transpose, unit_diagonal);
        for (int64_t c = 0; c < k; ++c)
          for (int64_t r = 0; r < ni; ++r) xi[c * ni + r] = w[r * k + c];
      }
    });
  });
  return X;
}

TORCH_LIBRARY_IMPL(batchchol, CPU, m) {
  m.impl("potrf_vbatched", &potrf_vbatched_cpu);
  m.impl("potrs_vbatched", &potrs_vbatched_cpu);
  m.impl("posv_vbatched", &posv_vbatched_cpu);
  m.impl("trsm_vbatched", &trsm_vbatched_cpu);
}

}  // namespace batchchol
