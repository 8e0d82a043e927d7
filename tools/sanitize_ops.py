"""Small workload of every op over sizes and dtypes, for compute-sanitizer runs.

    compute-sanitizer --tool memcheck python tools/sanitize_ops.py
    compute-sanitizer --tool racecheck python tools/sanitize_ops.py --quick
"""

import argparse

import torch

import torch_batchchol as tb


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    ops = torch.ops.batchchol
    sizes = [1, 3, 8, 17, 32, 33, 64, 65, 100, 200, 300] if not args.quick else [3, 17, 32, 40, 100, 200]
    dtypes = [torch.float32, torch.float64, torch.complex64, torch.complex128]
    if args.quick:
        dtypes = [torch.float32, torch.complex128]
    for dtype in dtypes:
        for n in sizes:
            X = torch.randn(3, n, n, dtype=dtype, device="cuda")
            A = X @ X.mH + n * torch.eye(n, dtype=dtype, device="cuda")
            B = torch.randn(3, n, 5, dtype=dtype, device="cuda")
            for upper in (False, True):
                L, info = ops.potrf(A, upper)
                ops.potrs(L, B, upper)
                ops.posv(A, B, upper)
                ops.posv(A, B[..., :1], upper)
                ops.trsm(L, B, upper, True, False, False)
                ops.trsm(L, B.mT.contiguous(), upper, False, True, True)
            torch.cuda.synchronize()
    print("sanitize workload done")


if __name__ == "__main__":
    main()
