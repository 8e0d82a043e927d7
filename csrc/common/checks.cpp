#include "common/checks.h"

#include <ATen/ExpandUtils.h>

namespace batchchol {

namespace {

bool same_size(const c10::SymInt& a, const c10::SymInt& b) {
  return c10::sym_eq(a, b).guard_bool(__FILE__, __LINE__);
}

// Numbers (shapes, counts, device indices) become text with std::to_string (and
// Device::str), never through std::ostream (checks.h: sym_str).
std::string num(int64_t v) { return std::to_string(v); }

std::string shape_str(c10::SymIntArrayRef shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + sym_str(shape[i]);
  return out + "]";
}

}  // namespace

std::string sym_str(const c10::SymInt& s) {
  if (auto v = s.maybe_as_int()) return std::to_string(*v);
  return s.toSymNodeImplUnowned()->str();
}

namespace {

bool batch_dims_broadcast(c10::SymIntArrayRef a, c10::SymIntArrayRef b) {
  const size_t na = a.size(), nb = b.size();
  for (size_t i = 0; i < std::min(na, nb); ++i) {
    const auto& x = a[na - 1 - i];
    const auto& y = b[nb - 1 - i];
    if (!(same_size(x, y) || same_size(x, 1) || same_size(y, 1))) return false;
  }
  return true;
}

}  // namespace

void check_dtype(const char* op, const char* name, const at::Tensor& t) {
  const auto st = t.scalar_type();
  TORCH_CHECK_TYPE(
      st == at::kFloat || st == at::kDouble || st == at::kComplexFloat || st == at::kComplexDouble,
      op, ": expected ", name,
      " to be float32, float64, complex64 or complex128, but got ", c10::toString(st));
}

void check_square(const char* op, const char* name, const at::Tensor& t) {
  TORCH_CHECK_VALUE(t.dim() >= 2, op, ": expected ", name,
                    " to be a batch of square matrices of shape [*, n, n] (at least 2 "
                    "dimensions), but got ",
                    num(t.dim()), " dimension(s)");
  TORCH_CHECK_VALUE(same_size(t.sym_size(-1), t.sym_size(-2)), op, ": expected ", name,
                    " to be a batch of square matrices [*, n, n], but got shape ",
                    shape_str(t.sym_sizes()));
}

void check_same_dtype_device(const char* op, const char* a_name, const at::Tensor& a,
                             const char* b_name, const at::Tensor& b) {
  TORCH_CHECK_TYPE(a.scalar_type() == b.scalar_type(), op, ": expected ", b_name,
                   " to have the dtype of ", a_name, " (", c10::toString(a.scalar_type()),
                   "), but got ", c10::toString(b.scalar_type()));
  TORCH_CHECK(a.device() == b.device(), op, ": expected ", a_name, " and ", b_name,
              " on the same device, but got ", a.device().str(), " and ", b.device().str());
}

void check_rhs(const char* op, const char* a_name, const at::Tensor& A, const char* b_name,
               const at::Tensor& B, bool left) {
  TORCH_CHECK_VALUE(B.dim() >= 2, op, ": expected ", b_name, " to have shape ",
                    left ? "[*, n, k]" : "[*, k, n]", " (at least 2 dimensions), but got ",
                    num(B.dim()), " dimension(s)");
  const auto& n = A.sym_size(-1);
  const auto& bn = left ? B.sym_size(-2) : B.sym_size(-1);
  TORCH_CHECK_VALUE(same_size(bn, n), op, ": expected ", b_name, " of shape ",
                    left ? "[*, n, k]" : "[*, k, n]", " with n = ", sym_str(n),
                    " (from ", a_name, " of shape ", shape_str(A.sym_sizes()),
                    "), but got shape ", shape_str(B.sym_sizes()));
  const auto a_batch = A.sym_sizes().slice(0, A.dim() - 2);
  const auto b_batch = B.sym_sizes().slice(0, B.dim() - 2);
  TORCH_CHECK_VALUE(batch_dims_broadcast(a_batch, b_batch), op, ": the batch dimensions of ",
                    a_name, " ", shape_str(a_batch), " and ", b_name, " ", shape_str(b_batch),
                    " do not broadcast");
}

c10::SymDimVector broadcast_batch_shape(const at::Tensor& A, const at::Tensor& B) {
  return at::infer_size_symdimvector(A.sym_sizes().slice(0, A.dim() - 2),
                                     B.sym_sizes().slice(0, B.dim() - 2));
}

c10::SymDimVector batch_shape_with(const at::Tensor& A, c10::SymIntArrayRef tail) {
  c10::SymDimVector shape(A.sym_sizes().begin(), A.sym_sizes().end() - 2);
  shape.append(tail.begin(), tail.end());
  return shape;
}

}  // namespace batchchol
