#include "common/ragged.h"

#include <algorithm>
#include <climits>
#include <string>
#include <vector>

#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "common/checks.h"
#ifdef BATCHCHOL_WITH_CUDA
#include "cuda/ragged_status_launch.h"
#endif

namespace batchchol {

namespace {

std::string num(int64_t v) { return std::to_string(v); }

void check_index_tensor(const char* op, const char* name, const at::Tensor& t, bool allow_int32,
                        const at::Tensor& values) {
  const auto st = t.scalar_type();
  TORCH_CHECK_TYPE(st == at::kLong || (allow_int32 && st == at::kInt), op, ": expected ", name,
                   allow_int32 ? " to be int32 or int64" : " to be int64", ", but got ",
                   c10::toString(st));
  TORCH_CHECK_VALUE(t.dim() == 1, op, ": expected ", name, " to be 1-D, but got ",
                    num(t.dim()), " dimension(s)");
  TORCH_CHECK(t.device().is_cpu() || t.device() == values.device(), op, ": expected ", name,
              " on the CPU or on the device of the values (", values.device().str(),
              "), but got ", t.device().str());
}

void check_values(const char* op, const char* name, const at::Tensor& values) {
  check_dtype(op, name, values);
  TORCH_CHECK_VALUE(values.dim() == 1, op, ": expected ", name,
                    " to be a 1-D buffer of matrices, but got ", num(values.dim()),
                    " dimension(s)");
}

at::Tensor block_extent(const at::Tensor& n, BlockShape s) {
  const at::Tensor rows = s.rows == kSizeN ? n : at::full_like(n, s.rows);
  const at::Tensor cols = s.cols == kSizeN ? n : at::full_like(n, s.cols);
  return rows * cols;
}

// code where the block lies outside [0, numel), 0 elsewhere. Written so that no sum can
// overflow (extent >= 0 and at most 2^62: sizes are capped at kMaxSize, k at 2^31).
at::Tensor range_status(const at::Tensor& offsets, const at::Tensor& extent, int64_t numel,
                        int32_t code) {
  const auto bad =
      offsets.lt(0).logical_or(extent.gt(numel)).logical_or(offsets.gt(extent.neg().add(numel)));
  return at::where(bad, code, 0).to(at::kInt);
}

// code for each non-empty block (among those with status 0) that starts before an
// earlier-starting block ends. Sorting keeps it O(count log count) and sync-free.
at::Tensor overlap_status(const at::Tensor& offsets, const at::Tensor& extent,
                          const at::Tensor& status, int32_t code) {
  const int64_t count = offsets.size(0);
  at::Tensor out = at::zeros({count}, offsets.options().dtype(at::kInt));
  if (count < 2) return out;
  const auto live = extent.gt(0).logical_and(status.eq(0));
  const auto key = at::where(live, offsets, INT64_MAX);
  auto [start, order] = key.sort(/*stable=*/true, /*dim=*/0, /*descending=*/false);
  const auto end = at::where(live, offsets.add(extent), INT64_MIN).index_select(0, order);
  const auto reach = std::get<0>(end.cummax(0));
  const auto clash = start.slice(0, 1).lt(reach.slice(0, 0, count - 1))
                         .logical_and(live.index_select(0, order).slice(0, 1));
  out.index_put_({order.slice(0, 1)}, at::where(clash, code, 0).to(at::kInt));
  return out;
}

// Host metadata goes to the GPU through pinned memory: an asynchronous copy that
// does not wait for the work already queued on the stream.
at::Tensor to_device(const at::Tensor& t, const at::Device& dev) {
  if (t.device() == dev) return t;
  if (t.device().is_cpu() && !dev.is_cpu()) return t.pin_memory().to(dev, /*non_blocking=*/true);
  return t.to(dev);
}

at::Tensor first_nonzero(const at::Tensor& a, const at::Tensor& b) {
  return at::where(a.ne(0), a, b);
}

[[noreturn]] void raise_status(const char* op, int64_t i, int32_t code, const at::Tensor& n,
                               const at::Tensor& offsets, const at::Tensor& b_offsets,
                               int64_t max_n, int64_t numel, int64_t b_numel) {
  const int64_t ni = n[i].item<int64_t>();
  const std::string who = "matrix " + num(i) + " (n = " + num(ni);
  switch (code) {
    case kNegativeSize:
      TORCH_CHECK_VALUE(false, op, ": ", who, ") has a negative size");
    case kSizeAboveMaxN:
      TORCH_CHECK_VALUE(false, op, ": ", who, ") is larger than max_n = ", num(max_n));
    case kMatrixOutOfRange:
      TORCH_CHECK_VALUE(false, op, ": ", who, ", offset ", num(offsets[i].item<int64_t>()),
                        ") does not lie within the matrix buffer of ", num(numel),
                        " elements");
    case kMatrixOverlap:
      TORCH_CHECK_VALUE(false, op, ": ", who, ", offset ", num(offsets[i].item<int64_t>()),
                        ") overlaps another matrix of the buffer");
    case kRhsOutOfRange:
      TORCH_CHECK_VALUE(false, op, ": the right-hand side of ", who, ", offset ",
                        num(b_offsets[i].item<int64_t>()),
                        ") does not lie within the right-hand-side buffer of ", num(b_numel),
                        " elements");
    default:
      TORCH_CHECK_VALUE(false, op, ": the right-hand side of ", who, ", offset ",
                        num(b_offsets[i].item<int64_t>()),
                        ") overlaps another right-hand side of the buffer");
  }
}

// prepare_ragged's status for host metadata, as plain loops: the codes of the tensor
// version (which serves GPU-side metadata), without its per-op dispatch cost, and
// with the overlap sort only when the blocks are out of order.
std::vector<int32_t> host_block_status(const int64_t* n, const int64_t* off, int64_t count,
                                       BlockShape shape, int64_t numel, int64_t limit,
                                       int32_t range_code, int32_t overlap_code) {
  std::vector<int32_t> st(count, 0);
  std::vector<int64_t> ext(count, 0), live;
  live.reserve(count);
  for (int64_t i = 0; i < count; ++i) {
    if (n[i] < 0) {
      st[i] = kNegativeSize;
    } else if (n[i] > limit) {
      st[i] = kSizeAboveMaxN;
    } else {
      const int64_t rows = shape.rows == kSizeN ? n[i] : shape.rows;
      const int64_t cols = shape.cols == kSizeN ? n[i] : shape.cols;
      ext[i] = rows * cols;  // < 2^62: n <= kMaxSize, k < 2^31
      if (off[i] < 0 || ext[i] > numel || off[i] > numel - ext[i]) st[i] = range_code;
    }
    if (st[i] == 0 && ext[i] > 0) live.push_back(i);
  }
  const auto by_start = [&](int64_t a, int64_t b) { return off[a] < off[b]; };
  if (!std::is_sorted(live.begin(), live.end(), by_start))
    std::stable_sort(live.begin(), live.end(), by_start);
  int64_t reach = INT64_MIN;
  for (const int64_t i : live) {
    if (off[i] < reach) st[i] = overlap_code;  // starts before an earlier block ends
    reach = std::max(reach, off[i] + ext[i]);
  }
  return st;
}

}  // namespace

void check_ragged_matrices(const char* op, const char* name, const at::Tensor& values,
                           const at::Tensor& sizes, const at::Tensor& offsets) {
  check_values(op, name, values);
  check_index_tensor(op, "n", sizes, /*allow_int32=*/true, values);
  check_index_tensor(op, "offsets", offsets, /*allow_int32=*/false, values);
  TORCH_CHECK_VALUE(sizes.sym_size(0) == offsets.sym_size(0), op,
                    ": expected one offset per size, but got ", sym_str(sizes.sym_size(0)),
                    " sizes and ", sym_str(offsets.sym_size(0)), " offsets");
}

void check_ragged_rhs(const char* op, const at::Tensor& A_values, const at::Tensor& sizes,
                      const char* name, const at::Tensor& values, const at::Tensor& offsets,
                      int64_t k) {
  check_values(op, name, values);
  check_same_dtype_device(op, "A", A_values, name, values);
  check_index_tensor(op, "b_offsets", offsets, /*allow_int32=*/false, A_values);
  TORCH_CHECK_VALUE(sizes.sym_size(0) == offsets.sym_size(0), op,
                    ": expected one right-hand-side offset per matrix, but got ",
                    sym_str(sizes.sym_size(0)), " sizes and ", sym_str(offsets.sym_size(0)),
                    " right-hand-side offsets");
  TORCH_CHECK_VALUE(k >= -1 && k <= INT32_MAX, op,
                    ": expected 0 <= k < 2^31 right-hand sides (or -1 for n_i x n_i blocks), "
                    "but got ",
                    num(k));
}

namespace {

struct TensorStatus {
  at::Tensor nc, off, b_off, status, b_status;  // on the sizes' device
};

// The status of every matrix (and of its right-hand side), as tensor ops that run on
// the metadata's device without a host sync.
TensorStatus tensor_status(const at::Tensor& sizes, const at::Tensor& offsets, int64_t numel,
                           const at::Tensor* b_offsets, BlockShape b_shape, int64_t b_numel,
                           int64_t limit) {
  TensorStatus ts;
#ifdef BATCHCHOL_WITH_CUDA
  // CUDA metadata: the same codes from a few kernels (ragged_status_cuda.cu).
  if (sizes.is_cuda() && sizes.size(0) <= cuda::kRaggedFastStatusMax) {
    ts.off = offsets.to(sizes.device());
    const cuda::StatusOperand a{ts.off, kSizeN, kSizeN, numel, kMatrixOutOfRange, kMatrixOverlap};
    if (b_offsets) ts.b_off = b_offsets->to(sizes.device());
    const cuda::StatusOperand b{ts.b_off, b_shape.rows, b_shape.cols, b_numel, kRhsOutOfRange,
                                kRhsOverlap};
    cuda::BlockStatus st = cuda::block_status_cuda(sizes, limit, a, b_offsets ? &b : nullptr);
    ts.nc = st.clamped;
    ts.status = b_offsets ? st.merged : st.status;
    ts.b_status = st.b_status;
    return ts;
  }
#endif
  const at::Tensor n = sizes.to(at::kLong);
  // Sizes beyond the limit are invalid; clamping keeps the extents below from overflowing.
  ts.nc = n.clamp(0, limit);
  const at::Tensor status_of_size = at::where(n.lt(0), int32_t(kNegativeSize),
                                              at::where(n.gt(limit), int32_t(kSizeAboveMaxN), 0))
                                        .to(at::kInt);
  ts.off = offsets.to(n.device());
  const at::Tensor a_ext = block_extent(ts.nc, {});
  at::Tensor a_status =
      first_nonzero(status_of_size, range_status(ts.off, a_ext, numel, kMatrixOutOfRange));
  a_status = first_nonzero(a_status, overlap_status(ts.off, a_ext, a_status, kMatrixOverlap));
  ts.status = a_status;
  if (b_offsets) {
    ts.b_off = b_offsets->to(n.device());
    const at::Tensor b_ext = block_extent(ts.nc, b_shape);
    ts.b_status =
        first_nonzero(status_of_size, range_status(ts.b_off, b_ext, b_numel, kRhsOutOfRange));
    ts.b_status = first_nonzero(ts.b_status, overlap_status(ts.b_off, b_ext, ts.b_status, kRhsOverlap));
    ts.status = first_nonzero(a_status, ts.b_status);
  }
  return ts;
}

// batchchol::_ragged_status: tensor_status as an op, so that tests can hold the
// device-side checks against the host-side ones on any device.
std::tuple<at::Tensor, at::Tensor> ragged_status_op(const at::Tensor& n, const at::Tensor& offsets,
                                                    int64_t numel, const at::Tensor& b_offsets,
                                                    int64_t b_numel, int64_t k,
                                                    c10::optional<int64_t> max_n) {
  const TensorStatus ts = tensor_status(n, offsets, numel, &b_offsets, rhs_block_shape(k, true),
                                        b_numel, max_n.value_or(kMaxSize));
  // The CUDA kernels put both statuses in slices of one buffer; the op's outputs are
  // tensors of their own (no aliasing, no storage offset, as its fake kernel says).
  if (ts.b_status.is_alias_of(ts.status)) return {ts.status.clone(), ts.b_status.clone()};
  return {ts.status, ts.b_status};
}

RaggedBatch prepare_ragged_host(const char* op, const at::Tensor& values, const at::Tensor& sizes,
                                const at::Tensor& offsets, c10::optional<int64_t> max_n,
                                const RaggedRhs* rhs, RaggedBatch& rb) {
  const at::Tensor n = sizes.to(at::kLong).contiguous();
  const at::Tensor off = offsets.contiguous();
  const at::Tensor b_off = rhs ? rhs->offsets.contiguous() : at::Tensor();
  const int64_t limit = max_n.value_or(kMaxSize);
  const int64_t* np = n.const_data_ptr<int64_t>();
  const auto a = host_block_status(np, off.const_data_ptr<int64_t>(), rb.count, {},
                                   values.numel(), limit, kMatrixOutOfRange, kMatrixOverlap);
  std::vector<int32_t> b;
  if (rhs) {
    b = host_block_status(np, b_off.const_data_ptr<int64_t>(), rb.count, rhs->shape,
                          rhs->values.numel(), limit, kRhsOutOfRange, kRhsOverlap);
  }
  rb.max_n = 0;
  for (int64_t i = 0; i < rb.count; ++i) {
    const int32_t code = a[i] != 0 ? a[i] : (rhs ? b[i] : 0);
    if (code != 0)
      raise_status(op, i, code, n, off, b_off, limit, values.numel(),
                   rhs ? rhs->values.numel() : 0);
    rb.max_n = std::max(rb.max_n, np[i]);
  }
  rb.host_checked = true;
  const auto dev = values.device();
  rb.sizes = to_device(n.to(at::kInt), dev);
  rb.offsets = to_device(off, dev);
  if (rhs) rb.b_offsets = to_device(b_off, dev);
  return rb;
}

}  // namespace

void check_ragged_max_n(const char* op, int64_t max_n) {
  TORCH_CHECK_VALUE(max_n >= 0 && max_n <= kMaxSize, op, ": expected 0 <= max_n <= ",
                    num(kMaxSize), ", but got ", num(max_n));
}

RaggedBatch prepare_ragged(const char* op, const at::Tensor& values, const at::Tensor& sizes,
                           const at::Tensor& offsets, c10::optional<int64_t> max_n,
                           const RaggedRhs* rhs) {
  if (max_n) check_ragged_max_n(op, *max_n);
  // The device ops below run on the values' device (the checks put the metadata there
  // or on the CPU).
  const c10::OptionalDeviceGuard guard(values.device());
  RaggedBatch rb;
  rb.count = sizes.size(0);
  const bool on_host =
      sizes.device().is_cpu() && offsets.device().is_cpu() && (!rhs || rhs->offsets.device().is_cpu());
  if (on_host) return prepare_ragged_host(op, values, sizes, offsets, max_n, rhs, rb);
  // GPU-side metadata: the same checks as tensor ops on the device, into a status.
  const int64_t limit = max_n.value_or(kMaxSize);
  const TensorStatus ts = tensor_status(sizes, offsets, values.numel(), rhs ? &rhs->offsets : nullptr,
                                        rhs ? rhs->shape : BlockShape{},
                                        rhs ? rhs->values.numel() : 0, limit);
  const at::Tensor& nc = ts.nc;
  const at::Tensor& status = ts.status;
  const at::Tensor& off = ts.off;
  const at::Tensor& b_off = ts.b_off;
  const at::Tensor& b_status = ts.b_status;

  // The kernels are sized by the largest valid matrix: max_n, or read when max_n is not
  // given (a host sync for GPU-side sizes).
  rb.max_n = max_n.value_or(0);
  if (rb.count > 0 && !max_n) rb.max_n = at::where(status.eq(0), nc, 0).max().item<int64_t>();
  rb.status = status.to(values.device());
  if (rhs) rb.rhs_status = b_status.to(values.device());
  const auto dev = values.device();
  rb.sizes = to_device(nc.to(at::kInt), dev);
  // The kernels index the offsets as dense arrays: a strided view (every other entry of
  // a larger tensor, say) is copied.
  rb.offsets = to_device(off, dev).contiguous();
  if (rhs) rb.b_offsets = to_device(b_off, dev).contiguous();
  return rb;
}

RaggedBatch prepare_ragged_solve(const char* op, const char* a_name, const at::Tensor& A,
                                 const at::Tensor& sizes, const at::Tensor& offsets,
                                 const at::Tensor& B, const at::Tensor& b_offsets, int64_t k,
                                 c10::optional<int64_t> max_n, bool left) {
  check_ragged_matrices(op, a_name, A, sizes, offsets);
  check_ragged_rhs(op, A, sizes, "B", B, b_offsets, k);
  const RaggedRhs rhs{B, b_offsets, rhs_block_shape(k, left)};
  return prepare_ragged(op, A, sizes, offsets, max_n, &rhs);
}

TORCH_LIBRARY_IMPL(batchchol, CompositeExplicitAutograd, m) {
  m.impl("_ragged_status", &ragged_status_op);
}

HelperBlocks helper_block_status(const char* op, const at::Tensor& n,
                                 c10::optional<int64_t> max_n,
                                 std::initializer_list<BlockOperand> operands) {
  TORCH_CHECK_VALUE(!max_n || (*max_n >= 0 && *max_n <= kMaxSize), op,
                    ": expected 0 <= max_n <= ", num(kMaxSize));
  const at::Tensor n64 = n.to(at::kLong);
  const int64_t limit = max_n.value_or(kMaxSize);
  const at::Tensor nc = n64.clamp(0, limit);
  at::Tensor status = at::where(n64.lt(0), int32_t(kNegativeSize),
                                at::where(n64.gt(limit), int32_t(kSizeAboveMaxN), 0))
                          .to(at::kInt);
  bool on_host = n.device().is_cpu();
  std::vector<std::pair<at::Tensor, at::Tensor>> written;
  for (const auto& o : operands) {
    on_host = on_host && o.offsets.device().is_cpu();
    const at::Tensor off = o.offsets.to(n64.device());
    const at::Tensor ext = block_extent(nc, o.shape);
    status = first_nonzero(status, range_status(off, ext, o.numel, kMatrixOutOfRange));
    if (o.written) written.emplace_back(off, ext);
  }
  for (const auto& [off, ext] : written)
    status = first_nonzero(status, overlap_status(off, ext, status, kMatrixOverlap));
  if (on_host) {
    const auto bad = status.ne(0).nonzero();
    TORCH_CHECK_VALUE(bad.size(0) == 0, op, ": block ",
                      bad.size(0) ? num(bad[0][0].item<int64_t>()) : std::string(),
                      " has a negative size, a size above max_n, lies outside its buffer or "
                      "overlaps another output block");
  }
  return {status, nc.to(at::kInt)};
}

}  // namespace batchchol
