"""CUDA time per kernel of one fixed-size potrf call (torch.profiler), to see which
launch of a multi-launch family (blocked: init, diag, panel, update) costs what.

    python3 tools/potrf_kernel_times.py float64:256:10000 float32:512:2000
    BGROUPS=1,2,4 python3 tools/potrf_kernel_times.py float64:512:2000   # per group size
    SEQ=1 python3 tools/potrf_kernel_times.py float32:512:2000           # every launch in order

Each argument is dtype:n:batch. BGROUPS sets BATCHCHOL_BLOCKED_GROUP (panels per group of
the blocked family's two-level update) for each value in turn. Times are the mean over 5
calls after 3 untimed ones.
"""

import os
import sys

import torch
from torch.profiler import ProfilerActivity, profile

import torch_batchchol  # noqa: F401

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchmarks"))
import common  # noqa: E402

REPS = 5


def kernel_name(event):
    return event.name.split("<")[0].split("(")[0].removeprefix("void ")


def run(dname, n, batch):
    A = common.spd_batch(batch, n, getattr(torch, dname))
    for _ in range(3):
        torch.ops.batchchol.potrf(A, False)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(REPS):
            torch.ops.batchchol.potrf(A, False)
        torch.cuda.synchronize()
    events = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    total, count = {}, {}
    for e in events:
        name = kernel_name(e)
        total[name] = total.get(name, 0.0) + e.device_time / 1000 / REPS
        count[name] = count.get(name, 0.0) + 1 / REPS
    print(f"== potrf {dname} n={n} batch={batch}: total {sum(total.values()):.3f} ms")
    if os.environ.get("SEQ"):
        first_call = events[: len(events) // REPS]
        print("   seq: " + " ".join(f"{kernel_name(e).split('::')[-1]}:{e.device_time / 1000:.3f}"
                                    for e in first_call))
    for name, ms in sorted(total.items(), key=lambda kv: -kv[1]):
        print(f"   {ms:8.3f} ms  x{count[name]:5.1f}  {name}")


def main(argv):
    groups = os.environ["BGROUPS"].split(",") if os.environ.get("BGROUPS") else [None]
    for spec in argv:
        dname, n, batch = spec.split(":")
        for g in groups:
            if g is not None:
                os.environ["BATCHCHOL_BLOCKED_GROUP"] = g
                print(f"-- group {g}")
            run(dname, int(n), int(batch))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
