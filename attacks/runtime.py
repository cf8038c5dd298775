"""Where an attack runs: seeds, device, CPU threads and the process rank.

torch is imported inside the functions that need it, so that ``import attacks`` and the
cheap attacks (TF-IDF, BM25) never pay for it.
"""

from __future__ import annotations

import os
import random
import sys
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import torch


def set_seed(seed: int) -> None:
    """Seed Python, NumPy and torch.

    torch is seeded only where it is already loaded: an attack that uses torch imports it
    before it seeds, and seeding must not load torch for the attacks that never use it.
    """
    random.seed(seed)
    np.random.seed(seed)
    torch_module = sys.modules.get("torch")
    if torch_module is not None:
        torch_module.manual_seed(seed)


def resolve_device() -> torch.device:
    """Return the GPU when one is present, else the CPU."""
    import torch

    return torch.device("cuda:0" if torch.cuda.is_available() else "cpu")


def _omp_threads() -> int:
    try:
        return max(int(os.environ.get("OMP_NUM_THREADS", "")), 0)
    except ValueError:
        return 0


def configure_threads(num_threads: int) -> int:
    """Use ``num_threads`` CPU threads and return the number used.

    0 means all cores, unless the environment sets OMP_NUM_THREADS (as torch's own default
    honours it): several processes sharing the cores (test workers, two attack workers on
    one host) would otherwise each start a thread per core and slow one another down.
    """
    import torch

    threads = num_threads or _omp_threads() or os.cpu_count() or 1
    torch.set_num_threads(threads)
    return threads


def is_main_process() -> bool:
    """Return whether this is the process that writes files (rank 0 under torchrun/accelerate)."""
    from accelerate import PartialState

    return PartialState().is_main_process


def wait_for_everyone() -> None:
    """Wait until every process of a torchrun/accelerate job gets here (no-op alone)."""
    from accelerate import PartialState

    PartialState().wait_for_everyone()
