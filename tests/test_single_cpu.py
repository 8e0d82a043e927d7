"""CPU: one matrix or system of large order goes to LAPACK / BLAS through ATen
(csrc/cpu/single_cpu.cpp) unless BATCHCHOL_POTRF_SINGLE=0 / BATCHCHOL_SOLVE_SINGLE=0;
both routes must keep the ops' contract (the factor, info with NaN and Inf pivots, a
non-finite failed factor, the unread triangle never read)."""

import itertools

import pytest
import torch

from conftest import (
    DTYPES,
    assert_solve_residual,
    check_single_matrix_info,
    fill_other_triangle,
    make_rhs,
    make_spd,
    make_tri,
    ops,
    tol,
)
from test_potrf import check_factor

N = 400  # past the route's smallest orders (384 real, 192 complex)


@pytest.fixture(params=["1", "0"], ids=["lapack", "ours"])
def route(request, monkeypatch):
    monkeypatch.setenv("BATCHCHOL_POTRF_SINGLE", request.param)
    monkeypatch.setenv("BATCHCHOL_SOLVE_SINGLE", request.param)
    return request.param == "1"


def aten_ops(fn):
    """Names of the ATen ops that fn() ran (the route calls ATen's from inside the op)."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        fn()
    return {e.name for e in prof.events()}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("shape", [(1,), ()], ids=["batch1", "matrix"])
def test_potrf_one_matrix(route, dtype, upper, shape):
    A = make_spd(shape, N, dtype, cond=100.0)
    L, info = ops.potrf(fill_other_triangle(A, upper), upper)
    check_factor(A, L, info, upper, cond=100.0)
    assert ("aten::linalg_cholesky_ex" in aten_ops(lambda: ops.potrf(A, upper))) == route
    # Two matrices keep the CPU kernels.
    two = make_spd((2,), N, dtype)
    assert "aten::linalg_cholesky_ex" not in aten_ops(lambda: ops.potrf(two, upper))


@pytest.mark.parametrize("dtype", [torch.float64, torch.complex64])
@pytest.mark.parametrize("kind", ["minor", "diag-nan", "diag-inf", "offdiag-nan"])
@pytest.mark.parametrize("where", [0, 150, N - 1])
@pytest.mark.parametrize("upper", [False, True])
def test_potrf_one_matrix_info(route, dtype, kind, where, upper):
    check_single_matrix_info(N, dtype, "cpu", kind, where, upper)


@pytest.mark.parametrize("dtype", [torch.float64, torch.complex64])
@pytest.mark.parametrize("upper,left,transpose,unit", list(itertools.product([False, True], repeat=4)), ids=str)
def test_trsm_one_system(route, dtype, upper, left, transpose, unit):
    T = make_tri((1,), N, dtype, upper=upper, unit=unit)
    B = make_rhs((1, N, 3) if left else (1, 3, N), dtype)
    # NaN where the op must not read: the other triangle, and a unit diagonal.
    X = ops.trsm(fill_other_triangle(T, upper, include_diagonal=unit), B, upper, left, transpose, unit)
    assert X.shape == B.shape and X.is_contiguous()
    op = T.mH if transpose else T
    assert_solve_residual(op.mT if not left else op, X.mT if not left else X, B.mT if not left else B,
                          what="trsm")
    ran = aten_ops(lambda: ops.trsm(T, B, upper, left, transpose, unit))
    assert ("aten::linalg_solve_triangular" in ran) == route


@pytest.mark.parametrize("dtype", [torch.float32, torch.complex128])
@pytest.mark.parametrize("upper", [False, True])
def test_posv_one_system(route, dtype, upper):
    A = make_spd((1,), N, dtype, cond=100.0)
    B = make_rhs((1, N, 2), dtype)
    X, L, info = ops.posv(A, B, upper)
    assert info.tolist() == [0]
    assert_solve_residual(A, X, B, what="posv")
    X2, info2 = ops.posv_solve(A, B, upper)
    assert info2.tolist() == [0]
    assert_solve_residual(A, X2, B, what="posv_solve")
    P = ops.potrs(L, B, upper)  # potrs keeps the CPU kernels either way
    assert_solve_residual(A, P, B, what="potrs")
    assert torch.allclose(X, X2, rtol=0, atol=tol(dtype, N, 100.0) * float(X.abs().max()))


@pytest.mark.parametrize("dtype", [torch.float64, torch.complex64])
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("k", [1, 16])
def test_potrs_one_system(route, dtype, upper, k):
    # 16 or more columns go to LAPACK's potrs; fewer stay with the CPU kernels.
    A = make_spd((1,), N, dtype, cond=100.0)
    L, _ = ops.potrf(A, upper)
    B = make_rhs((1, N, k), dtype)
    X = ops.potrs(fill_other_triangle(L, upper), B, upper)
    assert X.shape == B.shape and X.is_contiguous()
    assert_solve_residual(A, X, B, what="potrs")
    ran = aten_ops(lambda: ops.potrs(L, B, upper))
    assert ("aten::cholesky_solve" in ran) == (route and k == 16)
