"""CUDA only: trsm, potrs, posv and posv_solve of a single large system, which go to
cuBLAS / cuSOLVER through ATen (csrc/cuda/solve_single.cu) unless
BATCHCHOL_SOLVE_SINGLE=0: both routes against torch.linalg, reading only the named
triangle (NaNs in the other one, and on a unit diagonal), and which kernels ran."""

import itertools

import pytest
import torch

from conftest import HAS_CUDA, assert_backward_error, assert_solve_residual, cuda_kernel_names, make_spd, ops, tol
from test_cuda_graph import sync_debug_error
from test_cuda_solve_kernels import COND, make_triangle, per_system_error

pytestmark = [pytest.mark.cuda, pytest.mark.skipif(not HAS_CUDA, reason="no CUDA")]

N = 260  # past the route's smallest order (192) and a 32-wide tile boundary
FLAGS = list(itertools.product([False, True], repeat=4))  # upper, left, transpose, unit


@pytest.fixture(params=["1", "0"], ids=["aten", "ours"])
def route(request, monkeypatch):
    monkeypatch.setenv("BATCHCHOL_SOLVE_SINGLE", request.param)
    return request.param == "1"


def library_ran(fn):
    """Whether the library's solve kernels ran (warp-per-system or panel, past n = 128)."""
    return any("_warp_kernel" in name or "_panel_kernel" in name for name in cuda_kernel_names(fn))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.complex64])
@pytest.mark.parametrize("upper,left,transpose,unit", FLAGS, ids=str)
@pytest.mark.parametrize("shape", [(1,), ()], ids=["batch1", "matrix"])
def test_trsm_single(route, dtype, upper, left, transpose, unit, shape):
    gen = torch.Generator("cuda").manual_seed(3)
    clean, A = make_triangle(1, N, dtype, upper, unit, gen)
    B = torch.randn((1, N, 5) if left else (1, 5, N), dtype=clean.dtype, device="cuda", generator=gen)
    if shape == ():
        clean, A, B = clean[0], A[0], B[0]
    X = ops.trsm(A, B.to(dtype), upper, left, transpose, unit)
    assert X.shape == B.shape and X.is_contiguous() and X.dtype == dtype
    T, up = (clean.mH, not upper) if transpose else (clean, upper)
    ref = torch.linalg.solve_triangular(T, B.to(dtype).to(clean.dtype), upper=up, left=left)
    err = per_system_error(X.reshape(1, *X.shape[-2:]), ref.reshape(1, *ref.shape[-2:]))
    assert err <= tol(dtype, N, COND), err
    assert library_ran(lambda: ops.trsm(A, B.to(dtype), upper, left, transpose, unit)) != route


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.complex128])
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("k", [1, 17])
def test_potrs_single(route, dtype, upper, k):
    gen = torch.Generator("cuda").manual_seed(5)
    clean, L = make_triangle(1, N, dtype, upper, False, gen)
    B = torch.randn(1, N, k, dtype=clean.dtype, device="cuda", generator=gen)
    X = ops.potrs(L, B.to(dtype), upper)
    assert X.shape == B.shape and X.is_contiguous()
    ref = torch.cholesky_solve(B.to(dtype).to(clean.dtype), clean, upper=upper)
    assert per_system_error(X, ref) <= tol(dtype, N, COND**2)
    assert library_ran(lambda: ops.potrs(L, B.to(dtype), upper)) != route


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.complex64])
@pytest.mark.parametrize("upper", [False, True])
def test_posv_single(route, dtype, upper):
    A = make_spd((1,), N, dtype, "cuda", cond=100.0)
    B = torch.randn(1, N, 3, dtype=dtype, device="cuda")
    X, L, info = ops.posv(A, B, upper)
    assert info.tolist() == [0]
    assert_solve_residual(A, X, B, what="posv")
    assert_backward_error(A, L, upper)
    X2, info2 = ops.posv_solve(A, B, upper)
    assert info2.tolist() == [0]
    assert_solve_residual(A, X2, B, what="posv_solve")
    # A failed matrix still reports its pivot.
    A[0, 9, 9] = float("nan")
    _, info3 = ops.posv_solve(A, B, upper)
    assert info3.tolist() == [10]


def test_route_only_for_one_system(monkeypatch):
    monkeypatch.setenv("BATCHCHOL_SOLVE_SINGLE", "1")
    gen = torch.Generator("cuda").manual_seed(9)
    _, A = make_triangle(2, N, torch.float64, False, False, gen)
    B = torch.randn(2, N, 2, dtype=torch.float64, device="cuda")
    assert library_ran(lambda: ops.trsm(A, B, False, True, False, False))
    assert library_ran(lambda: ops.potrs(A, B, False))
    # One matrix shared by two right-hand-side blocks is two systems.
    assert library_ran(lambda: ops.potrs(A[:1], B, False))


def test_no_route_with_magma_preferred(monkeypatch):
    # torch's MAGMA cholesky_solve reads its info back to the host: the library's kernels
    # stay (potrf_single makes the same choice).
    monkeypatch.setenv("BATCHCHOL_SOLVE_SINGLE", "1")
    gen = torch.Generator("cuda").manual_seed(13)
    _, L = make_triangle(1, N, torch.float64, False, False, gen)
    B = torch.randn(1, N, 2, dtype=torch.float64, device="cuda")
    previous = torch.backends.cuda.preferred_linalg_library()
    try:
        torch.backends.cuda.preferred_linalg_library("magma")
        assert library_ran(lambda: ops.potrs(L, B, False))
        assert library_ran(lambda: ops.trsm(L, B, False, True, False, False))
        A = make_spd((1,), N, torch.float64, "cuda")
        assert any("blocked_" in name for name in cuda_kernel_names(lambda: ops.potrf(A, False)))
    finally:
        torch.backends.cuda.preferred_linalg_library(previous)
    assert not library_ran(lambda: ops.potrs(L, B, False))


@pytest.mark.parametrize(
    "a_shape,b_shape", [((), (1, 1)), ((1, 1), ())], ids=["A2d-B4d", "A4d-B2d"])
def test_single_system_broadcast_shapes(route, a_shape, b_shape):
    # One system after broadcasting: the output has the broadcast shape, contiguous.
    gen = torch.Generator("cuda").manual_seed(17)
    clean, A = make_triangle(1, N, torch.float64, False, False, gen)
    A, clean = A[0].reshape(*a_shape, N, N), clean[0]
    B = torch.randn(*b_shape, N, 3, dtype=torch.float64, device="cuda", generator=gen)
    shape = (*torch.broadcast_shapes(a_shape, b_shape), N, 3)
    ref = torch.linalg.solve_triangular(clean, B.reshape(N, 3), upper=False)
    X = ops.trsm(A, B, False, True, False, False)
    assert X.shape == shape and X.is_contiguous()
    assert per_system_error(X.reshape(1, N, 3), ref.reshape(1, N, 3)) <= tol(torch.float64, N, COND)
    P = ops.potrs(A, B, False)
    assert P.shape == shape and P.is_contiguous()
    ref = torch.cholesky_solve(B.reshape(N, 3), clean)
    assert per_system_error(P.reshape(1, N, 3), ref.reshape(1, N, 3)) <= tol(torch.float64, N, COND**2)


@pytest.mark.parametrize("dtype", [torch.float64, torch.complex64])
def test_single_system_no_host_sync(route, dtype):
    gen = torch.Generator("cuda").manual_seed(19)
    _, L = make_triangle(1, N, dtype, False, False, gen)
    B = torch.randn(1, N, 2, dtype=dtype, device="cuda")
    A = make_spd((1,), N, dtype, "cuda")
    calls = [lambda: ops.potrs(L, B, False), lambda: ops.trsm(L, B, False, True, True, False),
             lambda: ops.posv_solve(A, B, False), lambda: ops.posv(A, B, True)]
    for call in calls:
        call()  # warm-up: cuBLAS / cuSOLVER handles and workspaces
    with sync_debug_error():
        for call in calls:
            call()
