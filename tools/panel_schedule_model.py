"""A model of the panel solves' schedule (csrc/cuda/trsm_panel_device.cuh) in Python:
the snake-order owners, each warp's tile sequence (PanelCursor / panel_next) and the
steps between barriers, run as a forward substitution on random lower triangular
systems. Checks that every row block R gets the panels 0..R-1 exactly once, each after
that panel's diagonal solve and before its own, and that the result equals numpy's.

    python3 tools/panel_schedule_model.py
"""

import numpy as np


def owner(R, W):
    q, r = divmod(R, W)
    return W - 1 - r if q & 1 else r


def next_own(R, w, W):
    q = (R + 1) // W
    cand = q * W + (W - 1 - w if q & 1 else w)
    if cand <= R:
        q += 1
        cand = q * W + (W - 1 - w if q & 1 else w)
    return cand


def tiles(w, W, nblk):
    """Warp w's tiles (R, C, step) in the order panel_next yields them."""
    for s in range(nblk):
        if owner(s, W) == w:
            if s >= 1:
                yield s, s - 1, s
            yield s, s, s
        if s >= 1:
            R = next_own(s, w, W)
            while R < nblk:
                yield R, s - 1, s
                R = next_own(R, w, W)


def solve(n, W, seed=0):
    nblk = (n + 31) // 32
    rng = np.random.default_rng(seed)
    M = np.tril(rng.standard_normal((n, n))) * (0.5 / n) + 2 * np.eye(n)
    b = rng.standard_normal(n)
    S = np.zeros(nblk * 32)
    S[:n] = b
    Mp = np.zeros((nblk * 32, nblk * 32))
    Mp[:n, :n] = M
    seqs = [list(tiles(w, W, nblk)) for w in range(W)]
    applied = {R: [] for R in range(nblk)}
    solved = set()
    for s in range(nblk):  # a barrier after each step; within a step any warp order
        for w in range(W):
            for R, C, step in (t for t in seqs[w] if t[2] == s):
                rows = slice(R * 32, R * 32 + 32)
                if R == C:
                    assert applied[R] == list(range(R)), (n, W, R, applied[R])
                    for i in range(R * 32, min(n, R * 32 + 32)):
                        S[i] = (S[i] - Mp[i, R * 32:i] @ S[R * 32:i]) / Mp[i, i]
                    solved.add(R)
                else:
                    assert C in solved and C == s - 1 < R, (n, W, R, C, s)
                    S[rows] -= Mp[rows, C * 32:C * 32 + 32] @ S[C * 32:C * 32 + 32]
                    applied[R].append(C)
    assert solved == set(range(nblk))
    return float(np.abs(S[:n] - np.linalg.solve(M, b)).max())


def main():
    for n in (1, 5, 32, 33, 64, 100, 129, 256, 300, 513, 1100):
        for W in (1, 2, 3, 4, 8):
            err = solve(n, W)
            assert err < 1e-10, (n, W, err)
    print("schedule model: every order and block size solved exactly as numpy")


if __name__ == "__main__":
    main()
