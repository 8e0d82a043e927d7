"""batchchol.trsm: every combination of side, triangle, transpose and unit diagonal."""

import itertools

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
    make_tri,
    non_contiguous,
    ops,
    to_ref,
    tol,
)

FLAGS = list(itertools.product([False, True], repeat=4))
FLAG_IDS = [
    f"{'up' if u else 'lo'}-{'left' if le else 'right'}-{'T' if t else 'N'}-{'unit' if d else 'diag'}"
    for u, le, t, d in FLAGS
]


def effective_matrix(A, upper, unit_diagonal):
    """The triangular matrix trsm is defined to use (float64, unread parts dropped)."""
    A = to_ref(A)
    T = A.triu() if upper else A.tril()
    if unit_diagonal:
        T = T - torch.diag_embed(torch.diagonal(T, dim1=-2, dim2=-1)) + torch.eye(
            A.shape[-1], dtype=A.dtype
        )
    return T


def reference(A, B, upper, left, transpose, unit_diagonal):
    T = effective_matrix(A, upper, unit_diagonal)
    if transpose:
        T, upper = T.mH, not upper
    return torch.linalg.solve_triangular(T, to_ref(B), upper=upper, left=left), T


def check_trsm(A, B, X, upper, left, transpose, unit_diagonal, c=10.0):
    expected, T = reference(A, B, upper, left, transpose, unit_diagonal)
    assert X.shape == expected.shape, (X.shape, expected.shape)
    assert X.dtype == B.dtype and X.device == B.device
    n = A.shape[-1]
    assert_close_rel(X, expected, tol(B.dtype, n, cond2(T), c=c), "X vs solve_triangular")
    assert_solve_residual(T, X, torch.broadcast_to(to_ref(B), X.shape), c=c, left=left)


def rhs_shape(batch, n, k, left):
    return tuple(batch) + ((n, k) if left else (k, n))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("upper,left,transpose,unit", FLAGS, ids=FLAG_IDS)
@pytest.mark.parametrize("n,k", [(1, 1), (3, 2), (8, 5), (33, 3), (64, 1), (65, 40), (130, 7)], ids=str)
def test_trsm_matches_torch(device, dtype, upper, left, transpose, unit, n, k):
    A = make_tri((2,), n, dtype, device, upper=upper, unit=unit, cond=10.0)
    B = make_rhs(rhs_shape((2,), n, k, left), dtype, device)
    X = ops.trsm(A, B, upper, left, transpose, unit)
    check_trsm(A, B, X, upper, left, transpose, unit)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("upper,left,transpose,unit", FLAGS, ids=FLAG_IDS)
@pytest.mark.parametrize("n", [1, 4, 16, 20, 64, 70])
@pytest.mark.parametrize("layout", ["rows", "columns"])
def test_trsm_one_column_batches(device, dtype, upper, left, transpose, unit, n, layout):
    # 11 systems: the CPU one-column path solves groups of four in lockstep plus a tail
    # of three; A also read in place when stored column-major (as LAPACK returns it).
    A = make_tri((11,), n, dtype, device, upper=upper, unit=unit, cond=10.0)
    B = make_rhs(rhs_shape((11,), n, 1, left), dtype, device)
    A_in = A.mT.contiguous().mT if layout == "columns" else A
    X = ops.trsm(A_in, B, upper, left, transpose, unit)
    check_trsm(A, B, X, upper, left, transpose, unit)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("n", [4, 64])
def test_trsm_one_column_nan_stays_in_its_system(device, dtype, n):
    A = make_tri((8,), n, dtype, device, cond=10.0)
    B = make_rhs((8, n, 1), dtype, device)
    B[5, 0, 0] = float("nan")
    X = ops.trsm(A, B, False, True, False, False)
    assert torch.isnan(X[5]).all()
    others = [i for i in range(8) if i != 5]
    check_trsm(A[others], B[others], X[others], False, True, False, False)


def test_trsm_defaults(device):
    A = make_tri((2,), 4, torch.float64, device)
    B = make_rhs((2, 4, 3), torch.float64, device)
    X = ops.trsm(A, B)
    check_trsm(A, B, X, False, True, False, False)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("upper,left,transpose,unit", FLAGS, ids=FLAG_IDS)
def test_trsm_reads_only_its_triangle(device, dtype, upper, left, transpose, unit):
    n, k = 5, 3
    A = make_tri((2,), n, dtype, device, upper=upper, unit=unit)
    # NaN everywhere trsm must not look: the other triangle, and the diagonal too
    # when it is implicitly one.
    garbage = fill_other_triangle(A, upper, float("nan"), include_diagonal=unit)
    B = make_rhs(rhs_shape((2,), n, k, left), dtype, device)
    X = ops.trsm(garbage, B, upper, left, transpose, unit)
    check_trsm(A, B, X, upper, left, transpose, unit)


@pytest.mark.parametrize(
    "a_batch,b_batch",
    [((), (3,)), ((3,), ()), ((2, 1), (1, 3)), ((1, 3), (2, 1)), ((4,), (2, 4)), ((2, 1, 3), (4, 1))],
    ids=str,
)
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("transpose", [False, True])
def test_trsm_broadcast(device, a_batch, b_batch, left, transpose):
    n, k = 4, 3
    A = make_tri(a_batch, n, torch.float64, device)
    B = make_rhs(rhs_shape(b_batch, n, k, left), torch.float64, device)
    X = ops.trsm(A, B, False, left, transpose, False)
    check_trsm(A, B, X, False, left, transpose, False)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "a_shape,b_shape,left",
    [
        ((0, 3, 3), (0, 3, 2), True),
        ((3, 3), (0, 3, 2), True),
        ((0, 0), (0, 4), True),
        ((0, 0), (4, 0), False),
        ((3, 3), (3, 0), True),
        ((3, 3), (0, 3), False),
        ((2, 0, 0), (2, 0, 0), True),
    ],
    ids=str,
)
def test_trsm_empty(device, dtype, a_shape, b_shape, left):
    A = torch.eye(a_shape[-1], dtype=dtype, device=device).expand(a_shape).clone()
    B = torch.ones(b_shape, dtype=dtype, device=device)
    X = ops.trsm(A, B, False, left, False, False)
    expected = torch.linalg.solve_triangular(A.cpu(), B.cpu(), upper=False, left=left)
    assert X.shape == expected.shape
    torch.testing.assert_close(X.cpu(), expected)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", NON_CONTIGUOUS_KINDS)
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("transpose", [False, True])
def test_trsm_non_contiguous(device, dtype, kind, left, transpose):
    n, k = 6, 4
    A = make_tri((4,), n, dtype, device, upper=True)
    B = make_rhs(rhs_shape((4,), n, k, left), dtype, device)
    X = ops.trsm(non_contiguous(A, kind), non_contiguous(B, kind), True, left, transpose, False)
    check_trsm(A, B, X, True, left, transpose, False)


@pytest.mark.parametrize("dtype", [torch.float64, torch.complex128])
def test_trsm_transposed_view_of_triangle(device, dtype):
    # A lower-triangular A passed as A.mH (a view) with upper=True: same system as
    # transpose=True on A itself.
    n = 5
    A = make_tri((3,), n, dtype, device)
    B = make_rhs((3, n, 2), dtype, device)
    X1 = ops.trsm(A.mH, B, True, True, False, False)
    X2 = ops.trsm(A, B, False, True, True, False)
    check_trsm(A, B, X2, False, True, True, False)
    assert_close_rel(X1, X2, tol(dtype, n, cond2(A)), "A.mH vs transpose=True")


@pytest.mark.parametrize("dtype", DTYPES)
def test_trsm_does_not_modify_inputs(device, dtype):
    A = make_tri((2,), 5, dtype, device)
    B = make_rhs((2, 5, 3), dtype, device)
    A0, B0 = A.clone(), B.clone()
    for left, transpose in itertools.product([True, False], repeat=2):
        Bi = B if left else B.mT.contiguous()
        Bi0 = Bi.clone()
        ops.trsm(A, Bi, False, left, transpose, False)
        assert torch.equal(Bi, Bi0)
    assert torch.equal(A, A0) and torch.equal(B, B0)


@pytest.mark.parametrize("dtype", [torch.float64, torch.complex128])
@pytest.mark.parametrize("cond", [1e3, 1e7])
@pytest.mark.parametrize("left", [True, False])
def test_trsm_ill_conditioned(device, dtype, cond, left):
    n = 12
    A = make_tri((2,), n, dtype, device, cond=cond)
    B = make_rhs(rhs_shape((2,), n, 3, left), dtype, device)
    X = ops.trsm(A, B, False, left, True, False)
    check_trsm(A, B, X, False, left, True, False)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("upper,left,transpose,unit", FLAGS, ids=FLAG_IDS)
def test_trsm_large(device, dtype, upper, left, transpose, unit):
    n, k = 160, 40
    A = make_tri((2,), n, dtype, device, upper=upper, unit=unit, cond=30.0)
    B = make_rhs(rhs_shape((2,), n, k, left), dtype, device)
    X = ops.trsm(A, B, upper, left, transpose, unit)
    check_trsm(A, B, X, upper, left, transpose, unit)
