"""torch.library.opcheck for every op: schema, autograd registration, fake tensors
and AOT dispatch (static and dynamic shapes), on several sample inputs each."""

import pytest
import torch

from conftest import make_rhs, make_spd, make_tri, ops


def samples(device):
    """(op, args) pairs; requires_grad variants exercise the autograd path."""
    out = []
    for dtype in (torch.float32, torch.float64, torch.complex64, torch.complex128):
        A = make_spd((2,), 4, dtype, device)
        B = make_rhs((2, 4, 3), dtype, device)
        T = make_tri((2,), 4, dtype, device)
        out += [
            ("potrf", (A, False)),
            ("potrf", (A, True)),
            ("potrs", (T, B, False)),
            ("posv", (A, B, False)),
            ("posv_solve", (A, B, True)),
            ("trsm", (T, B, False, True, False, False)),
        ]
    A = make_spd((), 5, torch.float64, device)
    B = make_rhs((3, 5, 2), torch.float64, device)
    T = make_tri((2, 1), 5, torch.float64, device, upper=True)
    out += [
        ("potrf", (make_spd((2, 3), 3, torch.float64, device), False)),
        ("potrf", (torch.empty(0, 3, 3, dtype=torch.float64, device=device), False)),
        ("potrs", (T, make_rhs((3, 5, 2), torch.float64, device), True)),
        ("posv", (A, B, True)),
        ("posv_solve", (A, B, False)),
        ("trsm", (T, make_rhs((3, 2, 5), torch.float64, device), True, False, True, False)),
        ("trsm", (T, make_rhs((3, 5, 2), torch.float64, device), True, True, False, True)),
    ]
    # requires_grad samples
    for dtype in (torch.float64, torch.complex128):
        A = make_spd((2,), 3, dtype, device).requires_grad_()
        B = make_rhs((2, 3, 2), dtype, device).requires_grad_()
        T = make_tri((2,), 3, dtype, device).requires_grad_()
        out += [
            ("potrf", (A, False)),
            ("potrs", (T, B, False)),
            ("posv", (A, B, True)),
            ("posv_solve", (A, B, False)),
            ("trsm", (T, B, False, True, True, False)),
            ("trsm", (T.detach(), B, False, True, False, True)),
        ]
    return out


def _ids():
    return [f"{i}-{name}" for i, (name, _) in enumerate(samples("cpu"))]


@pytest.mark.parametrize("index", range(len(_ids())), ids=_ids())
def test_opcheck(device, index):
    name, args = samples(device)[index]
    torch.library.opcheck(getattr(ops, name).default, args)


@pytest.mark.parametrize("name", ["potrf", "potrs", "posv", "posv_solve", "trsm"])
def test_schema_is_functional(name):
    # The ops return fresh outputs and never mutate or alias their inputs; that is
    # what lets torch.compile and CUDA graphs treat them as pure functions.
    schema = getattr(ops, name).default._schema
    for arg in schema.arguments:
        assert arg.alias_info is None, f"{name}: argument {arg.name} aliases/mutates"
    for ret in schema.returns:
        assert ret.alias_info is None, f"{name}: return {ret.name} aliases an input"


def test_opcheck_check_info(device):
    # The private raising helper of the Python API: no outputs, a host sync, and it
    # must also pass the fake-tensor and schema checks that torch.compile relies on.
    info = torch.zeros(3, dtype=torch.int32, device=device)
    torch.library.opcheck(ops._check_info.default, (info, "api", "input"))
    with pytest.raises(torch.linalg.LinAlgError, match=r"api: \(Batch element 2\).*order 5"):
        ops._check_info(torch.tensor([0, 0, 5], dtype=torch.int32, device=device), "api", "input")
