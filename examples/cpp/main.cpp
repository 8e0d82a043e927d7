// Calls the batchchol operators from C++ through the dispatcher, as any LibTorch
// program would after linking libbatchchol: factor a batch of SPD matrices, solve
// with the factor, and differentiate through the factorization.
//
//   batchchol_example [cpu|cuda]      (default: cpu)
//
// Prints one line per check and PASS/FAIL; exits non-zero on any failure.
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/torch.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

namespace {

using PotrfFn = std::tuple<at::Tensor, at::Tensor>(const at::Tensor&, bool);
using PotrsFn = at::Tensor(const at::Tensor&, const at::Tensor&, bool);
using PosvFn = std::tuple<at::Tensor, at::Tensor, at::Tensor>(const at::Tensor&,
                                                              const at::Tensor&, bool);
using TrsmFn = at::Tensor(const at::Tensor&, const at::Tensor&, bool, bool, bool, bool);
using OptInt = c10::optional<int64_t>;
using PotrfVFn = std::tuple<at::Tensor, at::Tensor>(const at::Tensor&, const at::Tensor&,
                                                    const at::Tensor&, OptInt, bool);
using PosvVFn = std::tuple<at::Tensor, at::Tensor, at::Tensor>(
    const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&,
    const at::Tensor&, int64_t, OptInt, bool);

template <typename Fn>
c10::TypedOperatorHandle<Fn> op(const char* name) {
  return c10::Dispatcher::singleton().findSchemaOrThrow(name, "").typed<Fn>();
}

// Well-conditioned SPD matrices: M M^T / n + I.
torch::Tensor make_spd(int64_t batch, int64_t n, const torch::TensorOptions& opts) {
  auto M = torch::randn({batch, n, n}, opts);
  return torch::matmul(M, M.mT()) / n + torch::eye(n, opts);
}

double max_abs(const torch::Tensor& t) { return t.abs().max().item<double>(); }

// Largest over the batch of ||R|| / (||A|| ||X|| + ||B||), the normwise backward
// error of a solve A X = B with residual R = A X - B.
double backward_error(const torch::Tensor& A, const torch::Tensor& X, const torch::Tensor& B) {
  auto R = torch::matmul(A, X) - B;
  auto num = torch::linalg_matrix_norm(R, "fro");
  auto den = torch::linalg_matrix_norm(A, "fro") * torch::linalg_matrix_norm(X, "fro") +
             torch::linalg_matrix_norm(B, "fro");
  return (num / den).max().item<double>();
}

int failures = 0;

void check(const std::string& what, double value, double tol) {
  const bool ok = value <= tol;  // also false for NaN
  std::printf("  %-44s %10.3e  (tol %.0e)  %s\n", what.c_str(), value, tol, ok ? "ok" : "FAILED");
  if (!ok) ++failures;
}

// Runs one group of checks; an exception (e.g. a kernel not registered for this
// device yet) counts as a failure of the group instead of ending the program.
void run(const char* name, const std::function<void()>& body) {
  std::printf("%s\n", name);
  try {
    body();
  } catch (const std::exception& e) {
    std::string msg = e.what();
    if (auto nl = msg.find('\n'); nl != std::string::npos) msg.resize(nl);
    if (msg.size() > 240) msg = msg.substr(0, 240) + "...";
    std::printf("  error: %s  FAILED\n", msg.c_str());
    ++failures;
  }
}

void factor_and_solve(const torch::TensorOptions& opts, double tol) {
  const int64_t batch = 64, n = 24, nrhs = 3;
  auto A = make_spd(batch, n, opts);
  auto B = torch::randn({batch, n, nrhs}, opts);
  const double normA = max_abs(A);

  auto [L, info] = op<PotrfFn>("batchchol::potrf").call(A, /*upper=*/false);
  check("potrf: max |A - L L^H| / max |A|",
        max_abs(A - torch::matmul(L, L.mH())) / normA, tol);
  check("potrf: info != 0 count", info.ne(0).sum().item<double>(), 0);
  check("potrf: upper triangle of L is zero", max_abs(torch::triu(L, 1)), 0);

  auto [U, info_u] = op<PotrfFn>("batchchol::potrf").call(A, /*upper=*/true);
  check("potrf(upper): max |A - U^H U| / max |A|",
        max_abs(A - torch::matmul(U.mH(), U)) / normA, tol);

  auto X = op<PotrsFn>("batchchol::potrs").call(L, B, false);
  check("potrs: backward error of A X = B", backward_error(A, X, B), tol);

  auto [Xs, Ls, info_s] = op<PosvFn>("batchchol::posv").call(A, B, false);
  check("posv: backward error of A X = B", backward_error(A, Xs, B), tol);
  check("posv: |X_posv - X_potrs| / |X|", max_abs(Xs - X) / max_abs(X), 1e3 * tol);

  auto Y = op<TrsmFn>("batchchol::trsm").call(L, B, false, true, false, false);
  check("trsm: backward error of L Y = B", backward_error(L, Y, B), tol);

  // A matrix that is not positive definite must report the failing minor and
  // leave the others untouched.
  auto Abad = A.clone();
  Abad.index_put_({1, 5, 5}, -1.0);
  auto [Lbad, info_bad] = op<PotrfFn>("batchchol::potrf").call(Abad, false);
  auto info_cpu = info_bad.cpu();
  check("potrf: info of an indefinite matrix is 6",
        std::abs(info_cpu[1].item<double>() - 6.0), 0);
  check("potrf: info of the other matrices is 0",
        info_cpu.ne(0).sum().item<double>() - 1.0, 0);
  check("potrf: other factors unchanged", max_abs(Lbad[0] - L[0]), 0);
}

// d/dt f(A + tE) for a symmetric direction E, computed three ways: from the
// gradient of our op, from torch::linalg_cholesky's gradient, and by central
// differences. The contraction with a symmetric E makes the comparison independent
// of how either gradient treats the unread triangle.
void autograd(const torch::TensorOptions& opts) {
  const int64_t batch = 8, n = 12;
  auto A0 = make_spd(batch, n, opts);
  auto W = torch::randn({batch, n, n}, opts);
  auto E = torch::randn({batch, n, n}, opts);
  E = (E + E.mT()) / 2;
  auto potrf = op<PotrfFn>("batchchol::potrf");
  auto f = [&](const torch::Tensor& A) { return (std::get<0>(potrf.call(A, false)) * W).sum(); };

  auto A = A0.clone().requires_grad_(true);
  f(A).backward();
  TORCH_CHECK(A.grad().defined(), "no gradient reached A");
  const double ours = (A.grad() * E).sum().item<double>();

  auto At = A0.clone().requires_grad_(true);
  (torch::linalg_cholesky(At) * W).sum().backward();
  const double ref = (At.grad() * E).sum().item<double>();

  torch::NoGradGuard no_grad;
  const double h = 1e-6;
  const double fd = (f(A0 + h * E).item<double>() - f(A0 - h * E).item<double>()) / (2 * h);

  const double scale = std::max(1.0, std::abs(ref));
  check("grad . E vs torch::linalg_cholesky", std::abs(ours - ref) / scale, 1e-10);
  check("grad . E vs central difference", std::abs(ours - fd) / scale, 1e-6);
}

// A ragged batch (matrices of different sizes packed into one buffer with sizes and
// offsets): factor and solve it with the *_vbatched ops, then differentiate the sum
// of the solutions with respect to the packed matrices.
void ragged(const torch::TensorOptions& opts, double tol) {
  const std::vector<int64_t> sizes = {5, 1, 17, 40, 0, 9};
  std::vector<torch::Tensor> mats, rhs;
  std::vector<int64_t> offsets, b_offsets;
  int64_t pos = 0, bpos = 0;
  for (int64_t n : sizes) {
    mats.push_back(make_spd(1, n, opts)[0].reshape({-1}));
    rhs.push_back(torch::randn({n}, opts));
    offsets.push_back(pos);
    b_offsets.push_back(bpos);
    pos += n * n;
    bpos += n;
  }
  auto values = torch::cat(mats);
  auto b = torch::cat(rhs);
  auto n = torch::tensor(sizes, torch::kLong);
  auto off = torch::tensor(offsets, torch::kLong);
  auto boff = torch::tensor(b_offsets, torch::kLong);

  auto [L, info] = op<PotrfVFn>("batchchol::potrf_vbatched").call(values, n, off, {}, false);
  check("potrf_vbatched: info != 0 count", info.ne(0).sum().item<double>(), 0);
  auto A = values.clone().requires_grad_(true);
  auto [X, L2, info2] =
      op<PosvVFn>("batchchol::posv_vbatched").call(A, n, off, b, boff, 1, c10::nullopt, false);
  double worst = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const int64_t s = sizes[i];
    if (s == 0) continue;
    auto Ai = values.slice(0, offsets[i], offsets[i] + s * s).view({s, s});
    auto Li = L.slice(0, offsets[i], offsets[i] + s * s).view({s, s});
    auto Xi = X.detach().slice(0, b_offsets[i], b_offsets[i] + s).view({s, 1});
    worst = std::max(worst, max_abs(Ai - torch::matmul(Li, Li.mH())) / max_abs(Ai));
    worst = std::max(worst, backward_error(Ai, Xi, rhs[i].view({s, 1})));
  }
  check("potrf/posv_vbatched: worst backward error", worst, tol);
  X.sum().backward();
  TORCH_CHECK(A.grad().defined(), "no gradient reached the ragged matrices");
  check("posv_vbatched: gradient is finite", A.grad().isfinite().logical_not().sum().item<double>(),
        0);
}

}  // namespace

int main(int argc, char** argv) {
  const bool want_cuda = argc > 1 && std::strcmp(argv[1], "cuda") == 0;
  if (want_cuda && !torch::cuda::is_available()) {
    std::printf("FAIL: cuda requested but no CUDA device is available\n");
    return 2;
  }
  const torch::Device device = want_cuda ? torch::kCUDA : torch::kCPU;
  torch::manual_seed(0);
  std::printf("batchchol C++ example on %s\n", device.str().c_str());

  // Fails loudly when libbatchchol was not linked in (its registrations never ran).
  for (const char* name : {"batchchol::potrf", "batchchol::potrs", "batchchol::posv",
                           "batchchol::trsm", "batchchol::potrf_vbatched",
                           "batchchol::posv_vbatched"}) {
    if (!c10::Dispatcher::singleton().findSchema({name, ""}).has_value()) {
      std::printf("FAIL: operator %s is not registered (libbatchchol not linked?)\n", name);
      return 1;
    }
  }

  const auto f32 = torch::TensorOptions().dtype(torch::kFloat32).device(device);
  const auto f64 = torch::TensorOptions().dtype(torch::kFloat64).device(device);
  run("float32: factor and solve", [&] { factor_and_solve(f32, 1e-5); });
  run("float64: factor and solve", [&] { factor_and_solve(f64, 1e-13); });
  run("float64: autograd through potrf", [&] { autograd(f64); });
  run("float64: ragged batch (vbatched ops, autograd)", [&] { ragged(f64, 1e-13); });

  std::printf("%s (%d failed check%s)\n", failures == 0 ? "PASS" : "FAIL", failures,
              failures == 1 ? "" : "s");
  return failures == 0 ? 0 : 1;
}
