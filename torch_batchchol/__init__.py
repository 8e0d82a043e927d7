"""torch_batchchol: batched Cholesky factorization and solves for PyTorch.

The operators live in torch.ops.batchchol (potrf, potrs, posv, trsm and their
*_vbatched twins for ragged batches); this package adds a torch.linalg-style API
on top of them (dense and nested tensors) and `torch_batchchol.ragged` for flat
ragged batches and jagged nested tensors.
"""

import torch

from . import ragged
from ._library import LIBRARY_PATH, cuda_kernels_built
from .linalg import (
    CholeskyEx,
    cholesky,
    cholesky_ex,
    cholesky_solve,
    solve,
    solve_triangular,
)

ops = torch.ops.batchchol

__version__ = "0.1.0"

__all__ = [
    "CholeskyEx",
    "LIBRARY_PATH",
    "cholesky",
    "cholesky_ex",
    "cholesky_solve",
    "cuda_kernels_built",
    "ops",
    "ragged",
    "solve",
    "solve_triangular",
]
