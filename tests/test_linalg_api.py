"""The torch.linalg-style Python API: results, shapes and LinAlgError behaviour."""

import pytest
import torch

import torch_batchchol as bc
from conftest import (
    DTYPES,
    assert_close_rel,
    break_minor,
    cond2,
    fill_other_triangle,
    make_rhs,
    make_spd,
    make_tri,
    to_ref,
    tol,
)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("batch", [(), (3,), (2, 2)], ids=str)
def test_cholesky_and_cholesky_ex(device, dtype, upper, batch):
    n = 6
    A = make_spd(batch, n, dtype, device)
    expected = torch.linalg.cholesky(to_ref(A), upper=upper)
    t = tol(dtype, n, cond2(A))
    L = bc.cholesky(A, upper=upper)
    assert_close_rel(L, expected, t, "cholesky")
    res = bc.cholesky_ex(A, upper=upper)
    assert isinstance(res, bc.CholeskyEx)
    L2, info = res
    assert res.L is L2 and res.info is info
    assert_close_rel(L2, expected, t, "cholesky_ex")
    assert info.shape == batch and info.dtype == torch.int32 and bool((info == 0).all())


def test_cholesky_default_is_lower(device):
    A = make_spd((2,), 4, torch.float64, device)
    L = bc.cholesky(A)
    assert bool((L.triu(1) == 0).all())
    assert_close_rel(L, torch.linalg.cholesky(A), tol(torch.float64, 4, cond2(A)))


@pytest.mark.parametrize("dtype", [torch.float32, torch.complex128])
def test_cholesky_ex_reports_without_raising(device, dtype):
    A = make_spd((3,), 5, dtype, device)
    A[2] = break_minor(A[2], 2).to(dtype)
    L, info = bc.cholesky_ex(A)
    assert info.tolist() == [0, 0, 2]
    _, torch_info = torch.linalg.cholesky_ex(to_ref(A))
    assert info.tolist() == torch_info.tolist()


def _failing_batch(device, dtype, batch=(2, 3), n=5, failures=((1, 1, 3), (1, 2, 2))):
    A = make_spd(batch, n, dtype, device)
    for i, j, k in failures:
        A[i, j] = break_minor(A[i, j], k).to(dtype)
    return A


@pytest.mark.parametrize("dtype", DTYPES)
def test_cholesky_raises_linalg_error_naming_element_and_order(device, dtype):
    # Flat batch index of [1, 1] in a (2, 3) batch is 4; [1, 2] (index 5) fails too
    # but only the first failure is named, as in torch.linalg.cholesky.
    A = _failing_batch(device, dtype)
    with pytest.raises(torch.linalg.LinAlgError) as exc:
        bc.cholesky(A)
    msg = str(exc.value)
    assert "cholesky" in msg
    assert "(Batch element 4)" in msg
    assert "leading minor of order 3 is not positive-definite" in msg
    with pytest.raises(torch.linalg.LinAlgError, match=r"torch_batchchol\.cholesky_ex.*Batch element 4.*order 3"):
        bc.cholesky_ex(A, check_errors=True)


def test_cholesky_error_unbatched_has_no_batch_element(device):
    A = make_spd((), 4, torch.float64, device)
    A = break_minor(A, 2).to(device)
    with pytest.raises(torch.linalg.LinAlgError) as exc:
        bc.cholesky(A, upper=True)
    msg = str(exc.value)
    assert "Batch element" not in msg
    assert "order 2" in msg
    # LinAlgError derives from RuntimeError, so generic handlers still catch it.
    assert isinstance(exc.value, RuntimeError)


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_cholesky_raises_on_non_finite(device, value):
    A = make_spd((3,), 4, torch.float64, device)
    A[2, 3, 1] = value
    with pytest.raises(torch.linalg.LinAlgError, match=r"Batch element 2.*order 4"):
        bc.cholesky(A)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_solve(device, dtype, upper):
    n = 6
    A = make_spd((3,), n, dtype, device)
    L = torch.linalg.cholesky(A, upper=upper)
    B = make_rhs((2, 1, n, 4), dtype, device)
    X = bc.cholesky_solve(B, L, upper=upper)
    expected = torch.cholesky_solve(to_ref(B), to_ref(L), upper=upper)
    assert X.shape == expected.shape
    assert_close_rel(X, expected, tol(dtype, n, cond2(A)), "cholesky_solve")
    # Positional upper, as in torch.cholesky_solve.
    X2 = bc.cholesky_solve(B, L, upper)
    assert torch.equal(X, X2)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize(
    "a_batch,b_shape",
    [
        ((), (4,)),  # vector
        ((3,), (4,)),  # vector broadcast over A's batch
        ((3,), (3, 4)),  # batch of vectors
        ((2, 3), (2, 3, 4)),  # batch of vectors, two batch dims
        ((), (4, 2)),  # matrix
        ((3,), (4, 2)),  # matrix broadcast
        ((3,), (3, 4, 1)),  # batch of one-column matrices, not vectors
        ((2, 1), (3, 4, 5)),
    ],
    ids=str,
)
def test_solve_matches_torch(device, dtype, upper, a_batch, b_shape):
    n = 4
    A = make_spd(a_batch, n, dtype, device)
    B = make_rhs(b_shape, dtype, device)
    expected = torch.linalg.solve(to_ref(A), to_ref(B))
    # Only the chosen triangle may be read.
    X = bc.solve(fill_other_triangle(A, upper), B, upper=upper)
    assert X.shape == expected.shape, (X.shape, expected.shape)
    # Column by column (vectors included), each as a [n, 1] matrix.
    assert_close_rel(X.unsqueeze(-1), expected.unsqueeze(-1), tol(dtype, n, cond2(A)), "solve")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("a_batch,b_shape", [((), (3, 4)), ((2,), (2, 1, 4)), ((2,), (5, 4))], ids=str)
def test_solve_right(device, dtype, upper, a_batch, b_shape):
    # X A = B. For complex A this exercises the conjugations of the reduction to a
    # left solve.
    n = 4
    A = make_spd(a_batch, n, dtype, device)
    B = make_rhs(b_shape, dtype, device)
    X = bc.solve(fill_other_triangle(A, upper), B, upper=upper, left=False)
    expected = torch.linalg.solve(to_ref(A), to_ref(B), left=False)
    assert X.shape == expected.shape
    assert_close_rel(X, expected, tol(dtype, n, cond2(A)), "solve left=False")


def test_solve_right_vector_is_rejected_like_torch(device):
    # torch.linalg.solve has no vector case for left=False (it raises); a silently
    # reinterpreted right-hand side would be worse than an error.
    A = make_spd((), 4, torch.float64, device)
    b = make_rhs((4,), torch.float64, device)
    with pytest.raises(RuntimeError):
        torch.linalg.solve(A, b, left=False)
    with pytest.raises(ValueError, match=r"torch_batchchol\.solve: left=False .* needs left=True"):
        bc.solve(A, b, left=False)


@pytest.mark.parametrize("dtype", [torch.float64, torch.complex64])
def test_solve_raises_linalg_error(device, dtype):
    A = _failing_batch(device, dtype)
    B = make_rhs((2, 3, 5, 2), dtype, device)
    with pytest.raises(torch.linalg.LinAlgError, match=r"torch_batchchol\.solve.*Batch element 4.*order 3"):
        bc.solve(A, B)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("left", [False, True])
@pytest.mark.parametrize("unitriangular", [False, True])
def test_solve_triangular(device, dtype, upper, left, unitriangular):
    n, k = 5, 3
    A = make_tri((2,), n, dtype, device, upper=upper, unit=unitriangular)
    B = make_rhs((2, n, k) if left else (2, k, n), dtype, device)
    X = bc.solve_triangular(A, B, upper=upper, left=left, unitriangular=unitriangular)
    expected = torch.linalg.solve_triangular(
        to_ref(A), to_ref(B), upper=upper, left=left, unitriangular=unitriangular
    )
    assert_close_rel(X, expected, tol(dtype, n, cond2(A)), "solve_triangular")


def test_solve_triangular_upper_is_keyword_only_and_required(device):
    A = make_tri((), 3, torch.float64, device)
    B = make_rhs((3, 1), torch.float64, device)
    with pytest.raises(TypeError):
        bc.solve_triangular(A, B)
    with pytest.raises(TypeError):
        bc.solve_triangular(A, B, False)


@pytest.mark.parametrize("dtype", [torch.float64, torch.complex128])
def test_api_matches_ops(device, dtype):
    n = 5
    A = make_spd((2,), n, dtype, device)
    B = make_rhs((2, n, 2), dtype, device)
    L, info = torch.ops.batchchol.potrf(A, True)
    assert torch.equal(bc.cholesky(A, upper=True), L)
    assert torch.equal(bc.cholesky_solve(B, L, upper=True), torch.ops.batchchol.potrs(L, B, True))
    X, _, _ = torch.ops.batchchol.posv(A, B, False)
    assert torch.equal(bc.solve(A, B), X)
