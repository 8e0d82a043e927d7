"""Shared fixtures and numerical helpers for the torch_batchchol test suite.

Tolerances follow the standard error analysis of Cholesky and triangular solves:
the backward error ||A - L L^H|| / ||A|| is O(n eps) independent of conditioning,
while forward errors (L, X compared with a float64 reference) grow with the
condition number, so they are bounded by c * n * eps * cond.
"""

import os

import pytest
import torch

import torch_batchchol

ops = torch.ops.batchchol

DTYPES = [torch.float32, torch.float64, torch.complex64, torch.complex128]
REAL_DTYPES = [torch.float32, torch.float64]
COMPLEX_DTYPES = [torch.complex64, torch.complex128]

HAS_CUDA = torch.cuda.is_available() and torch_batchchol.cuda_kernels_built()
RUN_SLOW = os.environ.get("BATCHCHOL_RUN_SLOW", "") not in ("", "0")

DEVICES = ["cpu"] + (["cuda"] if HAS_CUDA else [])
# Parametrizing over this list (rather than DEVICES) keeps the cuda cases visible as
# skips on machines without a GPU, so a missing GPU is reported, not silently hidden.
DEVICE_PARAMS = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]


def pytest_collection_modifyitems(config, items):
    skip_cuda = pytest.mark.skip(reason="needs CUDA and the batchchol CUDA kernels")
    skip_slow = pytest.mark.skip(reason="slow; set BATCHCHOL_RUN_SLOW=1 to run")
    for item in items:
        if "cuda" in item.keywords and not HAS_CUDA:
            item.add_marker(skip_cuda)
        if "slow" in item.keywords and not RUN_SLOW:
            item.add_marker(skip_slow)


@pytest.fixture(params=DEVICE_PARAMS)
def device(request):
    return request.param


@pytest.fixture(autouse=True)
def _seed():
    # Every test sees the same random matrices regardless of test order or -k.
    torch.manual_seed(0)


# ---------------------------------------------------------------------------
# dtypes and tolerances


def real_dtype(dtype):
    return torch.empty((), dtype=dtype).real.dtype if dtype.is_complex else dtype


def ref_dtype(dtype):
    return torch.complex128 if dtype.is_complex else torch.float64


def eps(dtype):
    return torch.finfo(real_dtype(dtype)).eps


def tol(dtype, n, cond=1.0, c=10.0):
    """Forward-error tolerance c * max(n, 1) * eps(dtype) * cond."""
    return c * max(n, 1) * eps(dtype) * max(float(cond), 1.0)


def to_ref(t):
    return t.detach().to("cpu", ref_dtype(t.dtype)).resolve_conj()


def cond2(A):
    """Largest 2-norm condition number over the batch (1 for empty batches)."""
    A = to_ref(A)
    if A.numel() == 0:
        return 1.0
    return float(torch.linalg.cond(A).max())


def rel_err(actual, expected):
    """max over the batch of ||actual - expected||_F / ||expected||_F (float64)."""
    actual, expected = to_ref(actual), to_ref(expected)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    if actual.numel() == 0:
        return 0.0
    diff = torch.linalg.matrix_norm(actual - expected)
    scale = torch.linalg.matrix_norm(expected).clamp_min(torch.finfo(torch.float64).tiny)
    err = diff / scale
    # NaN must never compare as "close".
    return float("inf") if torch.isnan(err).any() else float(err.max())


def assert_close_rel(actual, expected, bound, what=""):
    err = rel_err(actual, expected)
    assert err <= bound, f"{what}: relative error {err:.3e} > bound {bound:.3e}"


def reconstruct(L, upper):
    L = to_ref(L)
    return L.mH @ L if upper else L @ L.mH


def hermitian_from_triangle(A, upper):
    """The Hermitian matrix an op that reads only one triangle of A sees (float64)."""
    A = to_ref(A)
    T = A.triu(1) if upper else A.tril(-1)
    d = torch.diagonal(A, dim1=-2, dim2=-1).real
    return T + T.mH + torch.diag_embed(d).to(A.dtype)


def assert_backward_error(A, L, upper, c=10.0, what="potrf"):
    """||A - L L^H||_F / ||A||_F <= c * n * eps for every matrix of the batch."""
    n = A.shape[-1]
    if A.numel() == 0:
        return
    Aref = hermitian_from_triangle(A, upper)
    err = torch.linalg.matrix_norm(Aref - reconstruct(L, upper)) / torch.linalg.matrix_norm(Aref)
    bound = c * n * eps(A.dtype)
    assert not torch.isnan(err).any(), f"{what}: NaN in the factor"
    assert float(err.max()) <= bound, f"{what}: backward error {float(err.max()):.3e} > {bound:.3e}"


def assert_factor_ok(A, L, info, upper):
    """L is the factor of every matrix of the batch: info zero, backward error, torch's
    factor within the condition number's tolerance, and the other triangle zero."""
    assert bool((info == 0).all()), info
    n = A.shape[-1]
    assert_backward_error(A, L, upper)
    ref = torch.linalg.cholesky(to_ref(A), upper=upper)
    assert_close_rel(L, ref, tol(A.dtype, n, cond2(A)), "L vs torch")
    keep = torch.ones(n, n, dtype=torch.bool, device=L.device)
    keep = keep.triu() if upper else keep.tril()
    assert bool((L.masked_select(~keep.expand_as(L)) == 0).all()), "other triangle not zero"


def assert_solve_residual(A, X, B, c=10.0, left=True, what="solve"):
    """Normwise backward error ||A X - B|| / (||A|| ||X|| + ||B||) <= c * n * eps."""
    if X.numel() == 0:
        return
    n, dtype = A.shape[-1], X.dtype
    A, X, B = to_ref(A), to_ref(X), to_ref(B)
    R = A @ X - B if left else X @ A - B
    num = torch.linalg.matrix_norm(R)
    den = torch.linalg.matrix_norm(A) * torch.linalg.matrix_norm(X) + torch.linalg.matrix_norm(B)
    err = num / den
    bound = c * n * eps(dtype)
    assert not torch.isnan(err).any(), f"{what}: NaN in the solution"
    assert float(err.max()) <= bound, f"{what}: residual {float(err.max()):.3e} > {bound:.3e}"


# ---------------------------------------------------------------------------
# generators


def random_unitary(batch, n, dtype, generator=None):
    G = torch.randn(*batch, n, n, dtype=ref_dtype(dtype), generator=generator)
    Q, R = torch.linalg.qr(G)
    # Fix the phases so that Q is Haar-distributed (not needed for correctness,
    # but it avoids systematically structured test matrices).
    d = torch.diagonal(R, dim1=-2, dim2=-1)
    ph = d / d.abs().clamp_min(1e-300)
    return Q * ph.unsqueeze(-2)


def make_spd(batch, n, dtype=torch.float64, device="cpu", cond=10.0):
    """Hermitian positive-definite [*batch, n, n] with 2-norm condition number ~cond.

    The eigenvalues are log-spaced in [1/cond, 1]; the matrix is built in float64
    (complex128) and then rounded, so its conditioning holds up to rounding.
    """
    batch = tuple(batch)
    rd = torch.float64
    if n == 0:
        return torch.zeros(*batch, 0, 0, dtype=dtype, device=device)
    Q = random_unitary(batch, n, dtype)
    lam = torch.logspace(0, -torch.log10(torch.tensor(float(cond))).item(), n, dtype=rd)
    lam = lam.expand(*batch, n)
    A = (Q * lam.to(Q.dtype).unsqueeze(-2)) @ Q.mH
    A = (A + A.mH) / 2
    return A.to(dtype).to(device)


def make_tri(batch, n, dtype=torch.float64, device="cpu", upper=False, unit=False, cond=10.0):
    """Well-conditioned triangular matrix (the other triangle exactly zero).

    Non-unit: the Cholesky factor of an SPD matrix of condition cond**2, so its own
    condition number is ~cond. Unit: I + a small strictly-triangular part.
    """
    batch = tuple(batch)
    if unit:
        N = torch.rand(*batch, n, n, dtype=ref_dtype(dtype)) * 2 - 1
        if dtype.is_complex:
            N = N * torch.exp(1j * 2 * torch.pi * torch.rand(*batch, n, n, dtype=torch.float64))
        N = N * (0.5 / max(n, 1))
        T = torch.eye(n, dtype=N.dtype) + (N.triu(1) if upper else N.tril(-1))
    else:
        L = torch.linalg.cholesky(make_spd(batch, n, ref_dtype(dtype), cond=cond**2))
        T = L.mH if upper else L
    return T.to(dtype).to(device)


def make_rhs(shape, dtype=torch.float64, device="cpu"):
    return torch.randn(*shape, dtype=dtype, device=device)


def fill_other_triangle(A, upper, value=float("nan"), include_diagonal=False):
    """Copy of A with the triangle an op must not read overwritten with `value`."""
    n = A.shape[-1]
    A = A.clone()
    ones = torch.ones(n, n, dtype=torch.bool, device=A.device)
    # The unread triangle is the strict upper one for lower ops and vice versa.
    mask = ones.tril(-1) if upper else ones.triu(1)
    if include_diagonal:
        mask = mask | torch.eye(n, dtype=torch.bool, device=A.device)
    return A.masked_fill(mask, value)


def break_minor(A, k):
    """Copy of the SPD matrix A [n, n] whose leading minor of order k (1-based) is
    the first one that is not positive definite (its Schur complement becomes -1)."""
    A = to_ref(A).clone()
    i = k - 1
    if i == 0:
        s = A[0, 0].real
    else:
        a = A[:i, i]
        s = (A[i, i] - a.conj() @ torch.linalg.solve(A[:i, :i], a)).real
    A[i, i] = A[i, i] - (s + 1.0)
    return A


def failing_at(n, dtype, device, kind, where, upper):
    """One SPD matrix [1, n, n] that fails at pivot where + 1 (1-based): kind "minor" (the
    leading minor of that order not positive definite), "diag-nan" / "diag-inf" (that
    diagonal entry), "offdiag-nan" (entry (where, where // 2), in the triangle that
    `upper` reads)."""
    A = make_spd((1,), n, dtype, device)
    if kind == "minor":
        A[0] = break_minor(A[0], where + 1).to(dtype)
    else:
        r, c = (where, where // 2) if kind == "offdiag-nan" else (where, where)
        if upper:
            r, c = c, r
        A[0, r, c] = float("inf") if kind == "diag-inf" else float("nan")
    return A


def check_single_matrix_info(n, dtype, device, kind, where, upper):
    """potrf of one matrix failing at pivot where + 1 (failing_at): that info, a factor
    that is not all finite, and the same info from the batched kernels (the matrix next
    to a good one)."""
    if kind == "offdiag-nan" and where == 0:
        pytest.skip("no entry left of the first pivot")
    A = failing_at(n, dtype, device, kind, where, upper)
    L, info = ops.potrf(A, upper)
    assert info.tolist() == [where + 1], f"{kind} at {where}: info {info.tolist()}"
    assert not bool(torch.isfinite(L).all()), "a failed factor must not look valid"
    _, info2 = ops.potrf(torch.cat([A, make_spd((1,), n, dtype, device)]), upper)
    assert info2.tolist() == [where + 1, 0]


def cuda_kernel_names(fn):
    """Names of the CUDA kernels that fn() launches (torch.profiler), so that a test can
    tell which kernel family served a call, not only that the result is right."""
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    names = [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    assert names, "the profiler saw no CUDA kernel"
    return names


def non_contiguous(t, kind):
    """Same values as t in a non-contiguous layout."""
    if kind == "transposed":
        # Column-major storage of every matrix.
        return t.mT.contiguous().mT
    if kind == "strided":
        # Every other element of a larger buffer along the last dim.
        big = torch.empty(*t.shape[:-1], 2 * t.shape[-1], dtype=t.dtype, device=t.device)
        big[..., ::2] = t
        big[..., 1::2] = float("nan")
        return big[..., ::2]
    if kind == "batch_strided":
        big = torch.full((2 * t.shape[0],) + tuple(t.shape[1:]), float("nan"),
                         dtype=t.dtype, device=t.device)
        big[::2] = t
        return big[::2]
    if kind == "conj_view":
        # Lazily conjugated tensor (is_conj() true) holding t's values.
        return t.conj().resolve_conj().conj() if t.dtype.is_complex else t
    raise ValueError(kind)


NON_CONTIGUOUS_KINDS = ["transposed", "strided", "batch_strided", "conj_view"]
