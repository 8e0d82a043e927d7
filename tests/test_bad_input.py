"""Invalid input: the right Python exception type, naming the op and what it expected.

Every backend (and the Meta kernels that torch.compile traces with) must agree, so
the checks run on the real devices and on 'meta'.
"""

import pytest
import torch

import torch_batchchol as bc
from conftest import DEVICE_PARAMS, ops

CHECK_DEVICES = DEVICE_PARAMS + ["meta"]
BAD_DTYPES = [torch.int32, torch.int64, torch.bool, torch.float16, torch.bfloat16, torch.uint8]

SQUARE_OPS = {
    "potrf": lambda A, B: ops.potrf(A),
    "potrs": lambda A, B: ops.potrs(A, B),
    "posv": lambda A, B: ops.posv(A, B),
    "trsm": lambda A, B: ops.trsm(A, B),
}
# The name of the square argument in each op's messages.
A_NAME = {"potrf": "A", "potrs": "L", "posv": "A", "trsm": "A"}
RHS_OPS = ["potrs", "posv", "trsm"]


def t(shape, device, dtype=torch.float64):
    return torch.eye(shape[-1], dtype=dtype, device=device).expand(shape).clone() if (
        len(shape) >= 2 and shape[-1] == shape[-2] and dtype.is_floating_point
    ) else torch.zeros(shape, dtype=dtype, device=device)


@pytest.fixture(params=CHECK_DEVICES)
def cdevice(request):
    return request.param


@pytest.mark.parametrize("op", list(SQUARE_OPS))
@pytest.mark.parametrize("shape", [(3, 4), (2, 4, 3), (1, 0)], ids=str)
def test_non_square(cdevice, op, shape):
    A = torch.zeros(shape, dtype=torch.float64, device=cdevice)
    B = torch.zeros(shape[:-2] + (shape[-2], 1), dtype=torch.float64, device=cdevice)
    with pytest.raises(ValueError, match=rf"batchchol\.{op}: expected {A_NAME[op]} to be a batch of square matrices"):
        SQUARE_OPS[op](A, B)


@pytest.mark.parametrize("op", list(SQUARE_OPS))
@pytest.mark.parametrize("shape", [(), (3,)], ids=str)
def test_too_few_dims(cdevice, op, shape):
    A = torch.zeros(shape, dtype=torch.float64, device=cdevice)
    B = torch.zeros(3, 1, dtype=torch.float64, device=cdevice)
    with pytest.raises(ValueError, match=rf"batchchol\.{op}: .*at least 2 dimensions"):
        SQUARE_OPS[op](A, B)


@pytest.mark.parametrize("op", RHS_OPS)
@pytest.mark.parametrize("b_shape", [(), (3,)], ids=str)
def test_rhs_too_few_dims(cdevice, op, b_shape):
    A = t((3, 3), cdevice)
    B = torch.zeros(b_shape, dtype=torch.float64, device=cdevice)
    with pytest.raises(ValueError, match=rf"batchchol\.{op}: expected B to have shape .*at least 2 dimensions"):
        SQUARE_OPS[op](A, B)


@pytest.mark.parametrize("op", RHS_OPS)
def test_rhs_wrong_n(cdevice, op):
    A = t((2, 3, 3), cdevice)
    B = torch.zeros(2, 4, 2, dtype=torch.float64, device=cdevice)
    with pytest.raises(ValueError, match=rf"batchchol\.{op}: expected B of shape \[\*, n, k\] with n = 3"):
        SQUARE_OPS[op](A, B)


@pytest.mark.parametrize("left", [True, False])
def test_trsm_rhs_wrong_side(cdevice, left):
    A = t((3, 3), cdevice)
    # Right for the other side, wrong for this one.
    B = torch.zeros((3, 2) if not left else (2, 3), dtype=torch.float64, device=cdevice)
    expected = r"\[\*, n, k\]" if left else r"\[\*, k, n\]"
    with pytest.raises(ValueError, match=rf"batchchol\.trsm: expected B of shape {expected} with n = 3"):
        ops.trsm(A, B, False, left, False, False)


@pytest.mark.parametrize("op", RHS_OPS)
@pytest.mark.parametrize("a_batch,b_batch", [((2,), (3,)), ((2, 3), (4, 3)), ((3, 1), (2, 2))], ids=str)
def test_batch_not_broadcastable(cdevice, op, a_batch, b_batch):
    A = t(a_batch + (3, 3), cdevice)
    B = torch.zeros(b_batch + (3, 1), dtype=torch.float64, device=cdevice)
    with pytest.raises(ValueError, match=rf"batchchol\.{op}: the batch dimensions of .* do not broadcast"):
        SQUARE_OPS[op](A, B)


@pytest.mark.parametrize("op", list(SQUARE_OPS))
@pytest.mark.parametrize("dtype", BAD_DTYPES, ids=str)
def test_bad_dtype(cdevice, op, dtype):
    A = torch.zeros(3, 3, dtype=dtype, device=cdevice)
    B = torch.zeros(3, 1, dtype=dtype, device=cdevice)
    with pytest.raises(TypeError, match=rf"batchchol\.{op}: expected {A_NAME[op]} to be float32, float64, complex64 or complex128"):
        SQUARE_OPS[op](A, B)


@pytest.mark.parametrize("op", RHS_OPS)
@pytest.mark.parametrize(
    "a_dtype,b_dtype",
    [(torch.float64, torch.float32), (torch.float32, torch.float64), (torch.float32, torch.complex64),
     (torch.complex128, torch.float64), (torch.float64, torch.int64)],
    ids=str,
)
def test_mixed_dtypes(cdevice, op, a_dtype, b_dtype):
    A = t((3, 3), cdevice, a_dtype)
    B = torch.zeros(3, 1, dtype=b_dtype, device=cdevice)
    with pytest.raises(TypeError, match=rf"batchchol\.{op}: expected B to have the dtype of {A_NAME[op]}"):
        SQUARE_OPS[op](A, B)


@pytest.mark.parametrize("op", RHS_OPS)
@pytest.mark.parametrize("other", ["meta", pytest.param("cuda", marks=pytest.mark.cuda)])
@pytest.mark.parametrize("swap", [False, True])
def test_mixed_devices(op, other, swap):
    devs = ("cpu", other) if not swap else (other, "cpu")
    A = t((3, 3), devs[0])
    B = torch.zeros(3, 1, dtype=torch.float64, device=devs[1])
    with pytest.raises(RuntimeError) as exc:
        SQUARE_OPS[op](A, B)
    msg = str(exc.value)
    # Must be our check (a device mismatch), not some unrelated failure.
    assert not isinstance(exc.value, (TypeError, ValueError))
    assert f"batchchol.{op}" in msg and "same device" in msg, msg


def test_trsm_right_batch_and_n_checked(cdevice):
    A = t((2, 3, 3), cdevice)
    B = torch.zeros(2, 3, 2, dtype=torch.float64, device=cdevice)  # [*, k, n] needs last dim 3
    with pytest.raises(ValueError, match=r"batchchol\.trsm: expected B of shape \[\*, k, n\]"):
        ops.trsm(A, B, False, False, False, False)


@pytest.mark.parametrize("op", list(SQUARE_OPS))
def test_bad_input_is_checked_before_any_work_on_empty_batches(cdevice, op):
    # Empty batches must not skip validation.
    A = torch.zeros(0, 3, 3, dtype=torch.int32, device=cdevice)
    B = torch.zeros(0, 3, 1, dtype=torch.int32, device=cdevice)
    with pytest.raises(TypeError, match=rf"batchchol\.{op}"):
        SQUARE_OPS[op](A, B)
    A = torch.zeros(0, 3, 4, dtype=torch.float32, device=cdevice)
    with pytest.raises(ValueError, match=rf"batchchol\.{op}"):
        SQUARE_OPS[op](A, B.float())


# --- the Python API surfaces the same errors -------------------------------------


def test_api_errors(cdevice):
    with pytest.raises(ValueError, match="square"):
        bc.cholesky(torch.zeros(3, 4, device=cdevice))
    with pytest.raises(ValueError, match="square"):
        bc.cholesky_ex(torch.zeros(2, 3, 4, device=cdevice))
    with pytest.raises(TypeError, match="float32, float64"):
        bc.cholesky(torch.zeros(3, 3, dtype=torch.int64, device=cdevice))
    with pytest.raises(ValueError, match=r"torch_batchchol\.solve: expected A of shape \[\*, n, n\]"):
        bc.solve(torch.zeros(3, device=cdevice), torch.zeros(3, device=cdevice))
    with pytest.raises(ValueError, match="with n = 3"):
        bc.solve(t((3, 3), cdevice), torch.zeros(4, 2, dtype=torch.float64, device=cdevice))
    with pytest.raises(TypeError, match="dtype"):
        bc.cholesky_solve(torch.zeros(3, 2, device=cdevice), t((3, 3), cdevice))
    with pytest.raises(ValueError, match="do not broadcast"):
        bc.solve_triangular(t((2, 3, 3), cdevice), torch.zeros(3, 3, 1, dtype=torch.float64, device=cdevice), upper=False)
