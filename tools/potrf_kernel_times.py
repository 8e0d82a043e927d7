"""CUDA time per kernel of one fixed-size potrf call (torch.profiler), to see which
launch of a multi-launch family (blocked: init, diag, panel, update) costs what.

    python3 tools/potrf_kernel_times.py float64:256:10000 float32:512:2000
    BGROUPS=1,2,4 python3 tools/potrf_kernel_times.py float64:512:2000   # per group size
    BLEFT=0,1 BGROUPS=2,4 python3 tools/potrf_kernel_times.py float32:512:2000

Each argument is dtype:n:batch. BGROUPS sets BATCHCHOL_BLOCKED_GROUP (panels per group of
the blocked family's two-level update) for each value in turn, BLEFT likewise
BATCHCHOL_BLOCKED_LEFT (a group's later panels updated left-looking: 1, or by strips: 0).
Times are the mean over 5 calls (the profiling helpers of ragged_kernel_times.py).
"""

import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchmarks"))
import common  # noqa: E402
import torch_batchchol  # noqa: F401,E402
from ragged_kernel_times import kernel_times, show  # noqa: E402


def main(argv):
    groups = os.environ["BGROUPS"].split(",") if os.environ.get("BGROUPS") else [None]
    lefts = os.environ["BLEFT"].split(",") if os.environ.get("BLEFT") else [None]
    for spec in argv:
        dname, n, batch = spec.split(":")
        A = common.spd_batch(int(batch), int(n), getattr(torch, dname))
        for left in lefts:
            for g in groups:
                env = {k: v for k, v in (("BATCHCHOL_BLOCKED_GROUP", g), ("BATCHCHOL_BLOCKED_LEFT", left))
                       if v is not None}
                os.environ.update(env)
                title = f"potrf {dname} n={n} batch={batch}"
                title += "".join(f" {k[10:].lower()} {v}" for k, v in env.items())
                show(title, kernel_times(lambda: torch.ops.batchchol.potrf(A, False), 5))
        del A
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
