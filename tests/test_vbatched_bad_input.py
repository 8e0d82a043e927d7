"""Bad input to the *_vbatched ops: clear errors (host metadata) naming the op and
the matrix, the same from the Meta kernels where no data is needed."""

import pytest
import torch

from conftest import DEVICE_PARAMS, ops

F64 = torch.float64


def batch(device, sizes=(2, 3)):
    n = torch.tensor(sizes, dtype=torch.int64)
    ext = n * n
    off = torch.zeros_like(n)
    off[1:] = ext[:-1].cumsum(0)
    A = torch.cat([torch.eye(s, dtype=F64).reshape(-1) for s in sizes]).to(device)
    return A, n, off


@pytest.mark.parametrize("device", DEVICE_PARAMS)
@pytest.mark.parametrize(
    "change, exc, match",
    [
        (lambda A, n, o: (A.to(torch.int32), n, o), TypeError, "float32, float64"),
        (lambda A, n, o: (A.view(1, -1), n, o), ValueError, "1-D"),
        (lambda A, n, o: (A, n.double(), o), TypeError, "int32 or int64"),
        (lambda A, n, o: (A, n, o.int()), TypeError, "offsets to be int64"),
        (lambda A, n, o: (A, n.view(1, 2), o), ValueError, "n to be 1-D"),
        (lambda A, n, o: (A, n, o[:1]), ValueError, "one offset per size"),
        (lambda A, n, o: (A, torch.tensor([2, -3]), o), ValueError, "matrix 1 .* negative size"),
        (lambda A, n, o: (A, n, torch.tensor([0, 8])), ValueError, "matrix 1 .* does not lie within"),
        (lambda A, n, o: (A, n, torch.tensor([0, -1])), ValueError, "matrix 1 .* does not lie within"),
        (lambda A, n, o: (A, n, torch.tensor([0, 3])), ValueError, "matrix 1 .* overlaps"),
        (lambda A, n, o: (A[:-1], n, o), ValueError, "does not lie within"),
        # offsets + n^2 would wrap around int64: must not pass as in range
        (lambda A, n, o: (A, n, torch.tensor([0, 2**63 - 5])), ValueError, "does not lie within"),
        (lambda A, n, o: (A, torch.tensor([2, 2**32]), o), ValueError, "larger than max_n"),
    ],
)
def test_potrf_vbatched_bad_input(device, change, exc, match):
    args = change(*batch(device))
    with pytest.raises(exc, match=match):
        ops.potrf_vbatched(*args, None, False)


@pytest.mark.parametrize("device", DEVICE_PARAMS)
def test_max_n_too_small(device):
    A, n, off = batch(device)
    with pytest.raises(ValueError, match="matrix 1 .* larger than max_n = 2"):
        ops.potrf_vbatched(A, n, off, 2, False)
    with pytest.raises(ValueError, match="max_n"):
        ops.potrf_vbatched(A, n, off, -1, False)


@pytest.mark.parametrize("device", DEVICE_PARAMS)
@pytest.mark.parametrize("name", ["potrs_vbatched", "posv_vbatched", "trsm_vbatched"])
def test_rhs_bad_input(device, name):
    A, n, off = batch(device)
    B = torch.zeros(5, dtype=F64, device=device)
    b_off = torch.tensor([0, 2])
    op = getattr(ops, name)
    extra = (False, True, False, False) if name == "trsm_vbatched" else (False,)
    op(A, n, off, B, b_off, 1, None, *extra)  # valid
    with pytest.raises(TypeError, match="dtype"):
        op(A, n, off, B.float(), b_off, 1, None, *extra)
    with pytest.raises(ValueError, match="right-hand side of matrix 1 .* does not lie within"):
        op(A, n, off, B[:4], b_off, 1, None, *extra)
    with pytest.raises(ValueError, match="right-hand side of matrix 1 .* overlaps"):
        op(A, n, off, B, torch.tensor([0, 1]), 1, None, *extra)
    with pytest.raises(ValueError, match="k < 2"):
        op(A, n, off, B, b_off, -2, None, *extra)
    with pytest.raises(ValueError, match="k < 2"):  # n_i * k would overflow int64
        op(A, n, off, B, b_off, 2**63 - 1, None, *extra)
    with pytest.raises(ValueError, match="right-hand-side offset per matrix"):
        op(A, n, off, B, b_off[:1], 1, None, *extra)


@pytest.mark.cuda
def test_mixed_devices():
    A, n, off = batch("cuda")
    with pytest.raises(RuntimeError, match="on the CPU or on the device of the values"):
        ops.potrf_vbatched(A.cpu(), n.cuda(), off, None, False)
    with pytest.raises(RuntimeError, match="same device"):
        ops.potrs_vbatched(A, n, off, torch.zeros(5, dtype=F64), torch.tensor([0, 2]), 1,
                           None, False)


def test_meta_kernels_check_without_data():
    A, n, off = batch("meta")
    n, off = n.to("meta"), off.to("meta")
    L, info = ops.potrf_vbatched(A, n, off, None, False)
    assert L.shape == A.shape and info.shape == (2,) and info.dtype == torch.int32
    with pytest.raises(TypeError):
        ops.potrf_vbatched(A.int(), n, off, None, False)
    with pytest.raises(ValueError, match="one offset per size"):
        ops.potrf_vbatched(A, n, off[:1], None, False)


@pytest.mark.parametrize("device", DEVICE_PARAMS)
def test_helper_ops_reject_bad_blocks(device):
    A, n, off = batch(device)
    with pytest.raises(ValueError, match="block 1"):  # size above max_n
        ops._tri_vbatched(A, n, off, 0, 2)
    with pytest.raises(ValueError, match="block 1"):  # output blocks overlap
        ops._tri_vbatched(A, n, torch.tensor([0, 2]), 0)
    with pytest.raises(ValueError, match="block 1"):  # C block outside its buffer
        ops._gemm_vbatched(A, off, -1, -1, False, A, off, -1, -1, False, n, off, 10)
    with pytest.raises(ValueError, match="in \\[0, 2\\^31\\)"):
        ops._gemm_vbatched(A, off, -1, 2**40, False, A, off, 2**40, -1, False, n, off, 13)


PHRASES = {
    -1: "has a negative size",
    -2: "is larger than max_n",
    -3: "does not lie within the matrix buffer",
    -4: "overlaps another matrix",
    -5: "does not lie within the right-hand-side buffer",
    -6: "overlaps another right-hand side",
}


@pytest.mark.parametrize("device", DEVICE_PARAMS)
@pytest.mark.parametrize("seed", range(40))
def test_device_checks_agree_with_host_checks(device, seed):
    # The checks for GPU-side metadata (tensor ops, batchchol._ragged_status) must flag
    # exactly what the host-side checks raise for: the same first matrix, the same reason.
    g = torch.Generator().manual_seed(seed)
    count, numel, b_numel, k = 6, 60, 24, 2
    n = torch.randint(-1, 6, (count,), generator=g)
    off = torch.randint(-2, numel, (count,), generator=g)
    b_off = torch.randint(-1, b_numel, (count,), generator=g)
    if seed % 3 == 0:  # some batches valid: packed in order
        n = n.clamp_min(0)
        off = torch.cat([torch.zeros(1, dtype=torch.int64), (n * n).cumsum(0)[:-1]])
        b_off = torch.cat([torch.zeros(1, dtype=torch.int64), (n * k).cumsum(0)[:-1]])
        numel, b_numel = int((n * n).sum()), int((n * k).sum())
    max_n = 4 if seed % 2 else None
    status, rhs_status = ops._ragged_status(n.to(device), off.to(device), numel, b_off.to(device),
                                            b_numel, k, max_n)
    status = status.cpu()
    A = torch.zeros(numel, dtype=F64, device=device)
    B = torch.zeros(b_numel, dtype=F64, device=device)
    bad = status.ne(0).nonzero()
    if bad.numel() == 0:
        ops.potrs_vbatched(A, n, off, B, b_off, k, max_n, False)
        return
    i = int(bad[0, 0])
    with pytest.raises(ValueError, match=f"matrix {i} .*{PHRASES[int(status[i])]}"):
        ops.potrs_vbatched(A, n, off, B, b_off, k, max_n, False)


@pytest.mark.cuda
@pytest.mark.parametrize("layout", ["packed", "packed-with-clashes", "shuffled", "holes",
                                    "dead-runs", "dead-runs-with-clash", "mostly-empty"])
@pytest.mark.parametrize("count", [1, 300, 5000, 70_000])
def test_cuda_status_kernels_agree_with_tensor_ops(layout, count):
    # CUDA metadata is checked by dedicated kernels (each live block against the nearest
    # earlier live one, across any run of empty or invalid blocks; a pairwise pass when
    # some block fails; more than 65,536 blocks take the sorting tensor ops). The CPU
    # run of batchchol._ragged_status is those tensor ops: the codes must be the same,
    # block for block, for both operands.
    g = torch.Generator().manual_seed(count)
    n = torch.randint(0, 9, (count,), generator=g)
    runs = []
    if layout == "mostly-empty":
        # Live blocks thousands of entries apart: the look-back spans many steps and
        # thread blocks; the last two clash.
        n.zero_()
        n[[0, count // 2, count - 1]] = 3
    if layout.startswith("dead-runs"):
        # Runs of empty and invalid blocks, some longer than a thread block of the
        # status kernel (256), between live ones.
        step = max(3, count // 3)
        for start in range(count // 7, count, step):
            run = min(count - start, 1 + int(torch.randint(0, min(700, step - 2), (1,), generator=g)))
            n[start:start + run] = torch.where(torch.rand(run, generator=g) < 0.8, 0, -1)
            runs.append((start, start + run))
    k = 3
    ext = n.clamp_min(0)
    off = torch.cat([torch.zeros(1, dtype=torch.int64), (ext * ext).cumsum(0)[:-1]])
    b_off = torch.cat([torch.zeros(1, dtype=torch.int64), (ext * k).cumsum(0)[:-1]])
    numel, b_numel = int((ext * ext).sum()), int((ext * k).sum())
    if layout == "packed-with-clashes":
        hit = torch.randint(0, count, (max(1, count // 50),), generator=g)
        off[hit] = (off[hit] - 1).clamp_min(0)
        b_off[hit] = (b_off[hit] + 2).clamp_max(max(b_numel - 1, 0))
        n[hit[: len(hit) // 2]] = -1
    elif layout == "shuffled":
        perm = torch.randperm(count, generator=g)
        off, b_off = off[perm], b_off[perm]  # sizes stay: blocks overlap where extents differ
    elif layout == "dead-runs-with-clash":
        # The first live block after a run starts where the last live block before
        # it starts.
        for lo, hi in runs:
            after = hi + int((n[hi:] > 0).int().argmax()) if hi < count else count
            before = (n[:lo] > 0).nonzero().view(-1)
            if after < count and n[after] > 0 and len(before):
                off[after], b_off[after] = off[before[-1]], b_off[before[-1]]
                break
        else:
            assert count < 10, "no clash placed"
    elif layout == "mostly-empty" and count > 2:
        off[count - 1] = off[count // 2] + 1
    elif layout == "holes":
        off, b_off = off * 2, b_off * 2
        numel, b_numel = 2 * numel + 1, 2 * b_numel + 1
    for max_n in (None, 6):
        for sizes in (n, n.int()):
            ref = ops._ragged_status(sizes, off, numel, b_off, b_numel, k, max_n)
            got = ops._ragged_status(sizes.cuda(), off.cuda(), numel, b_off.cuda(), b_numel, k,
                                     max_n)
            for r, x in zip(ref, got):
                assert x.device.type == "cuda"
                assert torch.equal(x.cpu(), r), (layout, count, max_n, sizes.dtype)


def test_fake_kernels_with_metadata_on_another_device():
    # Values on the GPU, metadata on the CPU (the ops' documented use): the fake kernels
    # must give outputs on the values' device and raise the real kernels' errors. Runs
    # without a GPU: FakeTensorMode makes fake CUDA tensors on any CUDA build of torch.
    if not torch.backends.cuda.is_built():
        pytest.skip("needs a CUDA build of torch for fake CUDA tensors")
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        A = torch.empty(13, dtype=F64, device="cuda")
        n = torch.tensor([2, 3])
        off = torch.tensor([0, 4])
        B = torch.empty(5, dtype=F64, device="cuda")
        b_off = torch.tensor([0, 2])
        L, info = ops.potrf_vbatched(A, n, off, None, False)
        assert L.device.type == "cuda" and L.shape == (13,)
        assert info.device.type == "cuda" and info.shape == (2,) and info.dtype == torch.int32
        X, L2, info2 = ops.posv_vbatched(A, n, off, B, b_off, 1, None, False)
        assert X.device.type == "cuda" and X.shape == (5,) and L2.shape == (13,)
        assert ops.potrs_vbatched(A, n, off, B, b_off, 1, 3, False).device.type == "cuda"
        assert ops.trsm_vbatched(A, n, off, B, b_off, 1, 3, False, True, False, False).shape == (5,)
        with pytest.raises(ValueError, match="one offset per size"):
            ops.potrf_vbatched(A, n, off[:1], None, False)
        with pytest.raises(TypeError, match="dtype"):
            ops.potrs_vbatched(A, n, off, B.float(), b_off, 1, None, False)
