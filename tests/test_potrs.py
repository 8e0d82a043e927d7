"""batchchol.potrs: solves with a given Cholesky factor, broadcasting, layouts."""

import pytest
import torch

from conftest import (
    DTYPES,
    NON_CONTIGUOUS_KINDS,
    assert_close_rel,
    assert_solve_residual,
    cond2,
    fill_other_triangle,
    make_rhs,
    make_spd,
    non_contiguous,
    ops,
    reconstruct,
    to_ref,
    tol,
)


def factor(A, upper):
    # The factor comes from torch so that potrs is tested on its own.
    return torch.linalg.cholesky(A, upper=upper)


def check_potrs(L, B, X, upper, c=10.0):
    """X against torch.cholesky_solve in float64 and the residual with A = L L^H."""
    n = L.shape[-1]
    Lr = to_ref(L)
    Lr = Lr.triu() if upper else Lr.tril()
    expected = torch.cholesky_solve(to_ref(B), Lr, upper=upper)
    assert X.shape == expected.shape, (X.shape, expected.shape)
    assert X.dtype == B.dtype and X.device == B.device
    A = reconstruct(Lr, upper)
    assert_close_rel(X, expected, tol(B.dtype, n, cond2(A), c=c), "X vs torch.cholesky_solve")
    assert_solve_residual(A, X, torch.broadcast_to(to_ref(B), X.shape), c=c)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 2, 5, 16, 32, 33, 65])
@pytest.mark.parametrize("k", [1, 3, 33])
@pytest.mark.parametrize("upper", [False, True])
def test_potrs_matches_torch(device, dtype, n, k, upper):
    A = make_spd((3,), n, dtype, device, cond=100.0)
    L = factor(A, upper)
    B = make_rhs((3, n, k), dtype, device)
    X = ops.potrs(L, B, upper)
    check_potrs(L, B, X, upper)


@pytest.mark.parametrize("dtype", DTYPES)
def test_potrs_order_129(device, dtype):
    # Past the 128 boundary, a single case per dtype keeps the CPU suite fast.
    n = 129
    L = factor(make_spd((2,), n, dtype, device, cond=100.0), False)
    B = make_rhs((2, n, 5), dtype, device)
    check_potrs(L, B, ops.potrs(L, B, False), False)


@pytest.mark.parametrize(
    "l_batch,b_batch",
    [
        ((), ()),
        ((), (3,)),
        ((3,), ()),
        ((3,), (3,)),
        ((2, 1), (1, 3)),
        ((1, 3), (2, 1)),
        ((4,), (2, 4)),
        ((2, 4), (4,)),
        ((2, 3), (1,)),
        ((1,), (2, 3)),
        ((2, 1, 3), (4, 1)),
    ],
    ids=str,
)
@pytest.mark.parametrize("upper", [False, True])
def test_potrs_broadcast(device, l_batch, b_batch, upper):
    n, k = 4, 2
    L = factor(make_spd(l_batch, n, torch.float64, device), upper)
    B = make_rhs(b_batch + (n, k), torch.float64, device)
    X = ops.potrs(L, B, upper)
    assert X.shape == torch.broadcast_shapes(l_batch, b_batch) + (n, k)
    check_potrs(L, B, X, upper)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "l_shape,b_shape",
    [
        ((0, 3, 3), (0, 3, 2)),
        ((0, 3, 3), (1, 3, 2)),
        ((1, 3, 3), (0, 3, 2)),
        ((3, 3), (0, 3, 2)),
        ((2, 0, 0), (2, 0, 4)),
        ((0, 0), (0, 1)),
        ((2, 3, 3), (2, 3, 0)),
        ((3, 3), (3, 0)),
    ],
    ids=str,
)
def test_potrs_empty(device, dtype, l_shape, b_shape):
    L = torch.eye(l_shape[-1], dtype=dtype, device=device).expand(l_shape).clone()
    B = torch.ones(b_shape, dtype=dtype, device=device)
    X = ops.potrs(L, B, False)
    expected = torch.cholesky_solve(B.cpu(), L.cpu())
    assert X.shape == expected.shape and X.dtype == dtype
    torch.testing.assert_close(X.cpu(), expected)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", NON_CONTIGUOUS_KINDS)
@pytest.mark.parametrize("upper", [False, True])
def test_potrs_non_contiguous(device, dtype, kind, upper):
    n, k = 6, 3
    L = factor(make_spd((4,), n, dtype, device), upper)
    B = make_rhs((4, n, k), dtype, device)
    X_ref = ops.potrs(L, B, upper)
    for Li, Bi in [(non_contiguous(L, kind), B), (L, non_contiguous(B, kind)),
                   (non_contiguous(L, kind), non_contiguous(B, kind))]:
        X = ops.potrs(Li, Bi, upper)
        check_potrs(L, B, X, upper)
        assert_close_rel(X, X_ref, tol(dtype, n, cond2(reconstruct(L, upper))), kind)


@pytest.mark.parametrize("dtype", [torch.float64, torch.complex128])
def test_potrs_expanded_inputs(device, dtype):
    n, k = 5, 2
    L = factor(make_spd((), n, dtype, device), False).expand(3, n, n)
    B = make_rhs((n, k), dtype, device).expand(3, n, k)
    X = ops.potrs(L, B, False)
    check_potrs(L, B, X, False)
    # Row-vector-like B whose columns are a stride-0 broadcast.
    b = make_rhs((3, n, 1), dtype, device).expand(3, n, 4)
    X = ops.potrs(L, b, False)
    check_potrs(L, b, X, False)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("upper", [False, True])
def test_potrs_reads_only_its_triangle(device, dtype, upper):
    n = 6
    L = factor(make_spd((2,), n, dtype, device), upper)
    garbage = fill_other_triangle(L, upper, float("nan"))
    B = make_rhs((2, n, 2), dtype, device)
    X = ops.potrs(garbage, B, upper)
    check_potrs(L, B, X, upper)


@pytest.mark.parametrize("dtype", DTYPES)
def test_potrs_does_not_modify_inputs(device, dtype):
    L = factor(make_spd((2,), 5, dtype, device), False)
    B = make_rhs((2, 5, 3), dtype, device)
    L0, B0 = L.clone(), B.clone()
    X = ops.potrs(L, B, False)
    assert torch.equal(L, L0) and torch.equal(B, B0)
    assert X.data_ptr() != B.data_ptr()


@pytest.mark.parametrize("dtype", [torch.float64, torch.complex128])
@pytest.mark.parametrize("cond", [1e4, 1e8])
def test_potrs_ill_conditioned(device, dtype, cond):
    n = 10
    L = factor(make_spd((3,), n, dtype, device, cond=cond), False)
    B = make_rhs((3, n, 4), dtype, device)
    X = ops.potrs(L, B, False)
    check_potrs(L, B, X, False)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_potrs_nan_in_one_system_stays_there(device, dtype):
    n = 5
    L = factor(make_spd((3,), n, dtype, device), False)
    B = make_rhs((3, n, 2), dtype, device)
    B[1, 2, 0] = float("nan")
    X = ops.potrs(L, B, False)
    assert bool(torch.isnan(X[1, :, 0]).any())
    check_potrs(L[[0, 2]], B[[0, 2]], X[[0, 2]], False)
    check_potrs(L[1], B[1, :, 1:], X[1, :, 1:], False)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n,k", [(128, 64), (300, 7)])
def test_potrs_large(device, dtype, n, k):
    L = factor(make_spd((2,), n, dtype, device, cond=1e3), False)
    B = make_rhs((2, n, k), dtype, device)
    X = ops.potrs(L, B, False)
    check_potrs(L, B, X, False)
