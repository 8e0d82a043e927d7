// A single system's potrs and trsm through ATen (LAPACK / BLAS on the CPU, cuSOLVER /
// cuBLAS on CUDA), for the backends' single-system routes (cpu/single_cpu.cpp,
// cuda/solve_single.cu): the library's kernels get their parallelism from the batch.
#pragma once

#include <ATen/core/Tensor.h>

namespace batchchol {

// Whether the route switch `name` (BATCHCHOL_POTRF_SINGLE, BATCHCHOL_SOLVE_SINGLE) is set
// to 0: the routes are on unless switched off.
bool single_route_off(const char* name);

// The ops' results (contiguous, the ops' output shapes) for one system.
at::Tensor potrs_single(const at::Tensor& L, const at::Tensor& B, bool upper);
at::Tensor trsm_single(const at::Tensor& A, const at::Tensor& B, bool upper, bool left,
                       bool transpose, bool unit_diagonal);

}  // namespace batchchol
