"""The staged kernel families (warp and warp64: potrf and their fused posv) copy a
block's chunk of matrices between memory and shared memory with 16-byte vectors from the
chunk's first 16-byte boundary on, and move the elements before it and after the last
whole vector one by one (stage_copy.cuh). Odd orders start most chunks off a boundary, and
so do inputs a few elements past one. The wide kernels keep their own copies (element by
element off a boundary, wide_stage.cuh), checked here too. Every shift gives the same
bits, the factors and solutions agree with torch, and the copies leave the other
triangle zero and never read it (it holds NaN here)."""

import pytest
import torch

from conftest import (
    assert_close_rel,
    assert_factor_ok,
    break_minor,
    cond2,
    cuda_kernel_names,
    fill_other_triangle,
    make_rhs,
    make_spd,
    ops,
    to_ref,
    tol,
)

pytestmark = pytest.mark.cuda

# (dtype, order, family forced or None, potrf's kernel, posv's fused kernel or None where
# posv runs potrf + potrs): odd and even orders of each staged kernel, at the padded
# orders and between them.
WARP = ("potrf_warp_kernel", "posv_warp_kernel")
WARP64 = ("potrf_warp64_kernel", "posv_warp64_kernel")
WIDE = ("potrf_wide_kernel", "posv_wide_kernel")
CASES = (
    [(torch.float32, n, None, *WARP) for n in (1, 3, 5, 6, 7, 13, 31)]
    + [(torch.float64, n, None, *WARP) for n in (1, 3, 5, 9, 25, 31)]
    + [(torch.float32, n, None, *WARP64) for n in (33, 37, 47, 55, 63)]
    + [(torch.float64, n, None, WARP64[0], WIDE[1]) for n in (33, 37, 47)]
    + [(torch.float32, n, "wide", WIDE[0], None) for n in (65, 71, 95)]
    + [(torch.float64, n, "wide", *WIDE) for n in (49, 63)]
)


def _shifted(A, shift):
    """A's values in a fresh buffer, `shift` elements past a 16-byte boundary."""
    per = 16 // A.element_size()
    flat = torch.empty(A.numel() + 2 * per, dtype=A.dtype, device=A.device)
    base = (-flat.data_ptr() % 16) // A.element_size()
    out = flat[base + shift: base + shift + A.numel()].view(A.shape)
    out.copy_(A)
    assert out.data_ptr() % 16 == shift * A.element_size()
    return out


def _batch(dtype, n, upper):
    """Enough matrices for several blocks of the small orders' kernels and a partly empty
    last block; a failing minor and a NaN pivot among them, NaN in the other triangle."""
    count = 601 if n <= 16 else 77
    A = make_spd((count,), n, dtype, "cuda", cond=100.0)
    A[5] = break_minor(A[5], (n + 1) // 2).to(dtype)
    A[count - 2, n - 1, n - 1] = float("nan")
    good = [i for i in range(count) if i not in (5, count - 2)]
    return A, fill_other_triangle(A, upper, float("nan")), good


def _same(x, y):
    return torch.equal(x.nan_to_num(7.0), y.nan_to_num(7.0))


@pytest.mark.parametrize("dtype,n,family,potrf_kernel,posv_kernel", CASES,
                         ids=lambda v: str(v).replace("torch.", ""))
@pytest.mark.parametrize("upper", [False, True])
def test_staging_at_every_shift(monkeypatch, dtype, n, family, potrf_kernel, posv_kernel,
                                upper):
    if family is not None:
        monkeypatch.setenv("BATCHCHOL_POTRF_KERNEL", family)
    monkeypatch.setenv("BATCHCHOL_POSV_FUSED_MAX_K", "8")
    A, A_in, good = _batch(dtype, n, upper)
    count = A.shape[0]
    B = make_rhs((count, n, 2), dtype, "cuda")
    L, info = ops.potrf(A_in, upper)
    names = cuda_kernel_names(lambda: ops.potrf(A_in, upper))
    assert any(potrf_kernel in name for name in names), names
    if posv_kernel is not None:
        names = cuda_kernel_names(lambda: ops.posv_solve(A_in, B, upper))
        assert any(posv_kernel in name for name in names), names
    expect = [0] * count
    expect[5], expect[count - 2] = (n + 1) // 2, n
    assert info.tolist() == expect
    assert_factor_ok(A[good], L[good], info[good], upper)
    X, L2, info2 = ops.posv(A_in, B, upper)
    assert info2.tolist() == expect
    ref = torch.linalg.solve(to_ref(A[good]), to_ref(B[good]))
    assert_close_rel(X[good], ref, tol(dtype, n, cond2(A[good])), f"posv n={n}")
    for shift in range(1, 16 // A.element_size()):
        A_s = _shifted(A_in, shift)
        Ls, info_s = ops.potrf(A_s, upper)
        assert torch.equal(info_s, info) and _same(Ls, L), f"potrf, shift {shift}"
        Xs, L2s, info2_s = ops.posv(A_s, B, upper)
        assert torch.equal(info2_s, info2), f"posv, shift {shift}"
        assert _same(Xs, X) and _same(L2s, L2), f"posv, shift {shift}"
