"""batchchol.posv: fused factor-and-solve, its three outputs and failure handling."""

import pytest
import torch

from conftest import (
    DTYPES,
    NON_CONTIGUOUS_KINDS,
    assert_backward_error,
    assert_close_rel,
    assert_solve_residual,
    break_minor,
    cond2,
    fill_other_triangle,
    hermitian_from_triangle,
    make_rhs,
    make_spd,
    non_contiguous,
    ops,
    to_ref,
    tol,
)


def check_posv(A, B, X, L, info, upper, c=10.0):
    n = A.shape[-1]
    Ah = hermitian_from_triangle(A, upper)
    out_batch = torch.broadcast_shapes(A.shape[:-2], B.shape[:-2])
    assert X.shape == out_batch + B.shape[-2:] and X.dtype == A.dtype
    assert L.shape == A.shape and L.dtype == A.dtype and L.is_contiguous()
    assert info.shape == A.shape[:-2] and info.dtype == torch.int32
    assert bool((info == 0).all()), info
    cond = cond2(Ah)
    expected = torch.linalg.solve(Ah, to_ref(B))
    assert_close_rel(X, expected, tol(A.dtype, n, cond, c=c), "X vs torch.linalg.solve")
    assert_solve_residual(Ah, X, torch.broadcast_to(to_ref(B), X.shape), c=c)
    if A.numel():
        assert_backward_error(A, L, upper, c=c, what="posv L")
        L_ref = torch.linalg.cholesky(Ah, upper=upper)
        assert_close_rel(L, L_ref, tol(A.dtype, n, cond, c=c), "L vs torch.linalg.cholesky")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 16, 17, 32, 33, 64, 65, 129])
@pytest.mark.parametrize("k", [1, 33])
@pytest.mark.parametrize("upper", [False, True])
def test_posv_matches_torch(device, dtype, n, k, upper):
    A = make_spd((3,), n, dtype, device, cond=100.0)
    B = make_rhs((3, n, k), dtype, device)
    X, L, info = ops.posv(A, B, upper)
    check_posv(A, B, X, L, info, upper)


@pytest.mark.parametrize(
    "dtype,n,cond",
    [(torch.float64, n, 1e12) for n in (16, 40, 64, 96, 128, 160)]
    + [(torch.float32, n, 1e4) for n in (16, 64, 128, 192)],
)
@pytest.mark.parametrize("k", [1, 4])
def test_posv_ill_conditioned(device, dtype, n, cond, k):
    # Near the end of each dtype's range (cond(A) n eps 0.004-0.2) posv_solve and posv keep
    # the normwise backward error within 10 n eps and the forward error within the
    # condition number's bound, whichever kernel family the size and the column count
    # run (warp, wide, the tile posv, potrf + potrs).
    A = make_spd((16,), n, dtype, device, cond=cond)
    B = make_rhs((16, n, k), dtype, device)
    Xs, info_s = ops.posv_solve(A, B, False)
    X, L, info = ops.posv(A, B, False)
    assert bool((info == 0).all()) and bool((info_s == 0).all())
    Ah = to_ref(A)
    expected = torch.linalg.solve(Ah, to_ref(B))
    bound = tol(dtype, n, cond2(Ah))
    for what, out in (("posv_solve", Xs), ("posv", X)):
        assert_solve_residual(Ah, out, to_ref(B), what=what)
        assert_close_rel(out, expected, bound, what)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [3, 16, 40])
def test_posv_many_systems(device, dtype, n):
    A = make_spd((37,), n, dtype, device)
    bad = [1, 20]
    for j in bad:
        A[j, n - 1, n - 1] = -1.0
    B = make_rhs((37, n, 2), dtype, device)
    X, L, info = ops.posv(A, B, False)
    assert info[bad].tolist() == [n] * len(bad)
    good = [j for j in range(37) if j not in bad]
    check_posv(A[good], B[good], X[good], L[good], info[good], False)


@pytest.mark.parametrize("dtype", [torch.float32, torch.complex128])
def test_posv_consistent_with_potrf_potrs(device, dtype):
    n = 9
    A = make_spd((4,), n, dtype, device)
    B = make_rhs((4, n, 3), dtype, device)
    X, L, info = ops.posv(A, B, False)
    L2, info2 = ops.potrf(A, False)
    X2 = ops.potrs(L2, B, False)
    assert torch.equal(info, info2)
    t = tol(dtype, n, cond2(A))
    assert_close_rel(L, L2, t, "posv L vs potrf")
    assert_close_rel(X, X2, t, "posv X vs potrf+potrs")


@pytest.mark.parametrize(
    "a_batch,b_batch",
    [
        ((), (3,)),
        ((3,), ()),
        ((2, 1), (1, 3)),
        ((1, 3), (2, 1)),
        ((4,), (2, 4)),
        ((2, 4), (4,)),
        ((1,), (2, 3)),
        ((2, 1, 3), (4, 1)),
    ],
    ids=str,
)
@pytest.mark.parametrize("upper", [False, True])
def test_posv_broadcast(device, a_batch, b_batch, upper):
    n, k = 4, 2
    A = make_spd(a_batch, n, torch.float64, device)
    B = make_rhs(b_batch + (n, k), torch.float64, device)
    X, L, info = ops.posv(A, B, upper)
    check_posv(A, B, X, L, info, upper)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "a_shape,b_shape",
    [((0, 3, 3), (0, 3, 2)), ((3, 3), (0, 3, 2)), ((0, 3, 3), (3, 2)), ((2, 0, 0), (2, 0, 1)),
     ((0, 0), (0, 3)), ((2, 3, 3), (2, 3, 0))],
    ids=str,
)
def test_posv_empty(device, dtype, a_shape, b_shape):
    A = torch.eye(a_shape[-1], dtype=dtype, device=device).expand(a_shape).clone()
    B = torch.ones(b_shape, dtype=dtype, device=device)
    X, L, info = ops.posv(A, B, False)
    assert X.shape == torch.broadcast_shapes(a_shape[:-2], b_shape[:-2]) + b_shape[-2:]
    assert L.shape == A.shape and info.shape == A.shape[:-2]
    assert bool((info == 0).all())
    torch.testing.assert_close(X.cpu(), torch.broadcast_to(B, X.shape).cpu())
    torch.testing.assert_close(L.cpu(), A.cpu())


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", NON_CONTIGUOUS_KINDS)
def test_posv_non_contiguous(device, dtype, kind):
    n = 6
    A = make_spd((4,), n, dtype, device)
    B = make_rhs((4, n, 3), dtype, device)
    X, L, info = ops.posv(non_contiguous(A, kind), non_contiguous(B, kind), False)
    check_posv(A, B, X, L, info, False)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("upper", [False, True])
def test_posv_reads_only_its_triangle(device, dtype, upper):
    n = 5
    A = make_spd((3,), n, dtype, device)
    B = make_rhs((3, n, 2), dtype, device)
    X, L, info = ops.posv(fill_other_triangle(A, upper), B, upper)
    check_posv(A, B, X, L, info, upper)


@pytest.mark.parametrize("dtype", DTYPES)
def test_posv_does_not_modify_inputs(device, dtype):
    A = make_spd((2,), 5, dtype, device)
    B = make_rhs((2, 5, 3), dtype, device)
    A0, B0 = A.clone(), B.clone()
    ops.posv(A, B, False)
    ops.posv(A, B, True)
    assert torch.equal(A, A0) and torch.equal(B, B0)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("upper", [False, True])
def test_posv_failures_are_per_matrix(device, dtype, upper):
    n = 6
    A = make_spd((4,), n, dtype, device)
    A[1] = break_minor(A[1], 4).to(dtype)
    A[3, 2, 2] = float("nan")
    B = make_rhs((4, n, 2), dtype, device)
    X, L, info = ops.posv(A, B, upper)
    assert info.tolist() == [0, 4, 0, 3]
    for j in (1, 3):
        assert not bool(torch.isfinite(X[j]).all()), f"failed system {j} has a finite X"
        assert not bool(torch.isfinite(L[j]).all()), f"failed system {j} has a finite L"
    good = [0, 2]
    check_posv(A[good], B[good], X[good], L[good], info[good], upper)


@pytest.mark.parametrize("dtype", [torch.float64, torch.complex64])
def test_posv_failed_shared_matrix_poisons_all_its_systems(device, dtype):
    # One A broadcast against three right-hand sides: all three solutions fail.
    n = 4
    A = make_spd((2, 1), n, dtype, device)
    A[0, 0] = -A[0, 0]
    B = make_rhs((2, 3, n, 2), dtype, device)
    X, L, info = ops.posv(A, B, False)
    assert info.shape == (2, 1) and info.tolist() == [[1], [0]]
    for j in range(3):
        assert not bool(torch.isfinite(X[0, j]).all())
    check_posv(A[1], B[1], X[1], L[1], info[1], False)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 5, 16, 31, 32, 33, 70])
@pytest.mark.parametrize("k", [1, 4, 20])
@pytest.mark.parametrize("upper", [False, True])
def test_posv_solve_is_posv_without_the_factor(device, dtype, n, k, upper):
    # posv_solve runs the fused kernels without writing L (n <= 32, few right-hand
    # sides) or posv's path otherwise: the same X and info either way.
    A = make_spd((5,), n, dtype, device, cond=100.0)
    A[2] = break_minor(A[2], max(1, n // 2)).to(dtype)
    B = make_rhs((5, n, k), dtype, device)
    X, info = ops.posv_solve(A, B, upper)
    X_ref, L, info_ref = ops.posv(A, B, upper)
    assert torch.equal(info, info_ref) and info[2] == max(1, n // 2)
    assert X.shape == X_ref.shape and X.dtype == X_ref.dtype and X.is_contiguous()
    good = [0, 1, 3, 4]
    assert_close_rel(X[good], X_ref[good], tol(dtype, n, cond2(A[good])), "posv_solve vs posv")
    assert not bool(torch.isfinite(X[2]).all())


def test_posv_solve_broadcast_and_empty(device):
    A = make_spd((1,), 4, torch.float64, device)
    B = make_rhs((3, 4, 2), torch.float64, device)
    X, info = ops.posv_solve(A, B, False)
    assert X.shape == (3, 4, 2) and info.shape == (1,)
    assert_close_rel(X, ops.posv(A, B, False)[0], tol(torch.float64, 4), "broadcast")
    X, info = ops.posv_solve(torch.empty(0, 3, 3, device=device), torch.empty(0, 3, 1, device=device))
    assert X.shape == (0, 3, 1) and info.shape == (0,)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES)
def test_posv_large(device, dtype):
    n = 200
    A = make_spd((2,), n, dtype, device, cond=1e3)
    B = make_rhs((2, n, 16), dtype, device)
    X, L, info = ops.posv(A, B, False)
    check_posv(A, B, X, L, info, False)
