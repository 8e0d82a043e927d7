"""torch_batchchol: batched Cholesky factorization and solves for PyTorch.

The operators live in torch.ops.batchchol (potrf, potrs, posv, trsm); this
package adds a torch.linalg-style API on top of them.
"""

import torch

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
    "solve",
    "solve_triangular",
]
