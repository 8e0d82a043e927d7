"""Kernels built at several row widths for one family: the width follows the order, and
only cuts entries past n that are never read, so every width gives the same bits as the
widest (the switches BATCHCHOL_WARP64_FULL and BATCHCHOL_WIDE_FULL force it)."""

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


def _same(x, y):
    return torch.equal(x.nan_to_num(7.0), y.nan_to_num(7.0))


@pytest.mark.parametrize("dtype,n", [(torch.float64, n) for n in (33, 36, 40, 41, 47, 48)]
                         + [(torch.float32, n) for n in (33, 40, 41, 48, 49, 64)])
@pytest.mark.parametrize("upper", [False, True])
def test_warp64_widths(monkeypatch, dtype, n, upper):
    # The float32 warp64 kernel for order n holds rows of the order rounded up to 40, 48
    # or 64 (float64: 48 throughout): the widths only cut scratch entries past n, so the
    # widest kernel (BATCHCHOL_WARP64_FULL) gives the same bits. 11 matrices leave the
    # last block partly empty where blocks hold several warps (float32 33..41); one
    # matrix has a failing minor at n - 1 (a lane's second row past n = 33), one a NaN,
    # and the other triangle holds NaN (never read).
    for switch in ("BATCHCHOL_POTRF_KERNEL", "BATCHCHOL_WARP64_FULL"):
        monkeypatch.delenv(switch, raising=False)
    A = make_spd((11,), n, dtype, "cuda", cond=100.0)
    A[4] = break_minor(A[4], n - 1).to(dtype)
    A[9, n - 1, n - 1] = float("nan")
    A_in = fill_other_triangle(A, upper, float("nan"))
    width = 48 if dtype == torch.float64 else 40 if n <= 40 else 48 if n <= 48 else 64
    names = cuda_kernel_names(lambda: ops.potrf(A_in, upper))
    kernel = f"potrf_warp64_kernel<{'double' if dtype == torch.float64 else 'float'}, {width},"
    assert any(kernel in k for k in names), names
    L, info = ops.potrf(A_in, upper)
    assert info[4] == n - 1 and info[9] == n
    good = [i for i in range(11) if i not in (4, 9)]
    assert_factor_ok(A[good], L[good], info[good], upper)
    if width == 64 or dtype == torch.float64:
        return  # the widest kernel already
    monkeypatch.setenv("BATCHCHOL_WARP64_FULL", "1")
    assert any("potrf_warp64_kernel<float, 64," in k
               for k in cuda_kernel_names(lambda: ops.potrf(A_in, upper)))
    L_full, info_full = ops.potrf(A_in, upper)
    assert torch.equal(info, info_full)
    assert torch.equal(L.nan_to_num(7.0), L_full.nan_to_num(7.0))


WIDE = ([(torch.float64, n) for n in (33, 47, 48, 49, 64)]
        + [(torch.float32, n) for n in (33, 48, 49, 65, 79, 80, 81, 96, 97, 112, 113)])


@pytest.mark.parametrize("dtype,n", WIDE)
@pytest.mark.parametrize("upper", [False, True])
def test_wide_widths(monkeypatch, dtype, n, upper):
    # The wide kernels of NW = 2 or 3 warps update rows up to column 32 NW - 17 at n <=
    # 32 NW - 16 (with_wide_width), else (and at NW = 4) to 32 NW - 1: the same bits as
    # the full width (BATCHCHOL_WIDE_FULL), for potrf and the fused posv (NW = 2). Failing
    # minors at the last warp's first row and at n - 1, a NaN pivot, NaN in the other
    # triangle.
    monkeypatch.setenv("BATCHCHOL_POTRF_KERNEL", "wide")
    monkeypatch.setenv("BATCHCHOL_POSV_FUSED_MAX_K", "4")
    monkeypatch.delenv("BATCHCHOL_WIDE_FULL", raising=False)
    nw = (n + 31) // 32
    width = 32 * nw - 16 if nw < 4 and n <= 32 * nw - 16 else 32 * nw
    tname = "double" if dtype == torch.float64 else "float"
    A = make_spd((6,), n, dtype, "cuda", cond=100.0)
    A[1] = break_minor(A[1], 32 * (nw - 1) + 1).to(dtype)
    A[3] = break_minor(A[3], n - 1).to(dtype)
    A[4, n - 1, n - 1] = float("nan")
    A_in = fill_other_triangle(A, upper, float("nan"))
    B = make_rhs((6, n, 2), dtype, "cuda")
    good = [0, 2, 5]
    expect = [0, 32 * (nw - 1) + 1, 0, n - 1, n, 0]

    def run(w):
        names = cuda_kernel_names(lambda: ops.potrf(A_in, upper))
        assert any(f"potrf_wide_kernel<{tname}, {nw}, {w}>" in k for k in names), names
        L, info = ops.potrf(A_in, upper)
        assert info.tolist() == expect
        if nw > 2:
            return L, info
        names = cuda_kernel_names(lambda: ops.posv(A_in, B, upper))
        assert any(f"posv_wide_kernel<{tname}, 2, {w}>" in k for k in names), names
        X, L2, info2 = ops.posv(A_in, B, upper)
        assert info2.tolist() == expect
        return L, info, X, L2

    out = run(width)
    assert_factor_ok(A[good], out[0][good], out[1][good], upper)
    if nw == 2:
        ref = torch.linalg.solve(to_ref(A[good]), to_ref(B[good]))
        assert_close_rel(out[2][good], ref, tol(dtype, n, cond2(A[good])), "posv X")
    if width == 32 * nw:
        return  # the full width already
    monkeypatch.setenv("BATCHCHOL_WIDE_FULL", "1")
    assert all(_same(x, y) for x, y in zip(out, run(32 * nw)))
