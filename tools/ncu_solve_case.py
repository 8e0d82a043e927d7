"""One potrf, potrs, trsm or posv (posv_solve) call of bench_fixed's shape, for Nsight
Compute (ncu).

    ncu --clock-control none --kernel-name regex:warp_kernel --launch-skip 2 \\
        --launch-count 1 --section SpeedOfLight ... python3 tools/ncu_solve_case.py trsm float32 64 16

Arguments: op (potrf | trsm | potrs | posv), dtype, n, right-hand sides (ignored by potrf),
batch (default 10,000). The triangle is column-major, as torch.linalg.cholesky returns it
and bench_fixed uses it.
Two untimed calls come first, so --launch-skip 2 profiles the third.
"""

import sys

import torch

import torch_batchchol  # noqa: F401


def main(argv):
    op, dname, n, k = argv[0], argv[1], int(argv[2]), int(argv[3])
    batch = int(argv[4]) if len(argv) > 4 else 10_000
    dtype = getattr(torch, dname)
    L = torch.randn(batch, n, n, dtype=dtype, device="cuda").tril_(-1).mul_(0.5 / n)
    L = (L + 2 * torch.eye(n, dtype=dtype, device="cuda")).mT.contiguous().mT
    B = torch.randn(batch, n, k, dtype=dtype, device="cuda")
    A = L @ L.mT
    for _ in range(3):
        if op == "potrf":
            torch.ops.batchchol.potrf(A, False)
        elif op == "posv":
            torch.ops.batchchol.posv_solve(A, B, False)
        elif op == "trsm":
            torch.ops.batchchol.trsm(L, B, False, True, False, False)
        else:
            torch.ops.batchchol.potrs(L, B, False)
    torch.cuda.synchronize()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
