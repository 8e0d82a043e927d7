"""Times every CUDA potrf kernel family per (dtype, n) and prints the fastest.

The dispatch table in csrc/cuda/potrf_cuda.cu (choose_potrf_kernel) is written from
this script's output. Families are forced through BATCHCHOL_POTRF_KERNEL, which the
library reads at every call; a family that does not support n falls back to the
default choice and is reported as such.

    python benchmarks/tune_potrf.py [--sizes 33 48 64 96 128] [--json out.json]
"""

import argparse
import os
import sys

import torch

import torch_batchchol  # noqa: F401

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

FAMILIES = [
    "warp", "registers", "wide", "tile2", "tile4", "tile", "tile16", "left", "left-split", "shared",
    "blocked",
]


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", type=int, nargs="+", default=[24, 32, 40, 48, 64, 80, 96, 128, 160, 192, 256])
    ap.add_argument("--dtypes", nargs="+", default=["float32", "float64"])
    ap.add_argument("--families", nargs="+", default=FAMILIES, choices=FAMILIES)
    ap.add_argument("--batch", type=int, default=None,
                    help="default: 10,000, or enough matrices to hold 256 MB for small n")
    ap.add_argument("--json")
    args = ap.parse_args()
    rows = []
    families = args.families
    print(f"{'dtype':8} {'n':>4} " + " ".join(f"{f:>10}" for f in families) + "  best", flush=True)
    for dname in args.dtypes:
        dtype = getattr(torch, dname)
        for n in args.sizes:
            batch = args.batch or common.batch_for_bytes(n, dtype)
            A = common.spd_batch(batch, n, dtype)
            times = {}
            for fam in families:
                os.environ["BATCHCHOL_POTRF_KERNEL"] = fam
                times[fam] = common.median_ms(lambda: torch.ops.batchchol.potrf(A, False))
            os.environ.pop("BATCHCHOL_POTRF_KERNEL")
            default = common.median_ms(lambda: torch.ops.batchchol.potrf(A, False))
            best = min(times, key=times.get)
            print(f"{dname:8} {n:4d} " + " ".join(f"{times[f]:10.3f}" for f in families)
                  + f"  {best} (default {default:.3f})", flush=True)
            rows.append({"dtype": dname, "n": n, "batch": batch, "ms": times,
                         "default_ms": default, "best": best})
            del A
    if args.json:
        common.write_tuning_json(args.json, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
