// CPU: a single large matrix or system on LAPACK / BLAS through ATen (single_cpu.cpp).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

#include "common/single_system.h"  // potrs_single, trsm_single

namespace batchchol::cpu {

// Whether a CPU potrf / trsm / posv (potrs: with 16 or more columns) of `batch` matrices
// or systems (after broadcasting) of order n goes to ATen: one, n >= 384 (real) or 192
// (complex), unless the environment variable `switch_env` (BATCHCHOL_POTRF_SINGLE for
// potrf, BATCHCHOL_SOLVE_SINGLE for the solves) is 0.
bool single_applies(int64_t batch, int64_t n, bool complex, const char* switch_env);

// potrf of A, one matrix (any batch shape of one element): returns L (contiguous, A's
// shape) and sets info (one int32, the library's convention, NaN and Inf pivots included).
at::Tensor potrf_single(const at::Tensor& A, bool upper, at::Tensor& info);

}  // namespace batchchol::cpu
