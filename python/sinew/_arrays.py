"""Argument conversion: numpy arrays pass as they are; torch CPU tensors and
any other DLPack producer become numpy views of the same memory."""

from __future__ import annotations

from typing import Any

import numpy as np


def view(x: Any, name: str) -> np.ndarray | None:
    """``x`` as a numpy array sharing its memory (no copy), or ``None``.

    dtype, shape and memory order are checked by the engine, which names
    ``name`` in its messages. The compiled core calls this for a step's
    arguments that are neither numpy arrays nor torch tensors it can view
    itself through ``Tensor.numpy()`` (so for the errors of those too:
    DLPack then refuses them with its reason)."""
    if x is None or isinstance(x, np.ndarray):
        return x
    if hasattr(x, "__dlpack__"):
        try:
            return np.from_dlpack(x)
        except (BufferError, RuntimeError, TypeError, ValueError) as e:
            raise TypeError(
                f"{name}: cannot read this {type(x).__name__} in place ({e}); Sinew takes "
                "float32 arrays in CPU memory: for torch, a CPU tensor without grad "
                "(tensor.detach().cpu())"
            ) from e
    if isinstance(x, (list, tuple)):
        # A Python list has no buffer to share: this copy is the only way.
        return np.asarray(x, dtype=np.float32)
    raise TypeError(
        f"{name}: expected a numpy array, a torch CPU tensor or another DLPack producer of "
        f"float32, got {type(x).__name__}"
    )


def values(x: Any, name: str) -> np.ndarray:
    """Setter values (a number, one per env, or one per (env, target)) as a
    float32 C-contiguous array; setters are not per-step work, so this may copy."""
    if hasattr(x, "__dlpack__") and not isinstance(x, np.ndarray):
        x = view(x, name)
    a = np.asarray(x)
    if a.dtype.kind not in "fiub":
        raise TypeError(f"{name}: expected numbers, got an array of {a.dtype}")
    return np.asarray(a, dtype=np.float32, order="C")


def env_ids(ids: Any, num_envs: int) -> np.ndarray | None:
    """Env indices as uint32 (``None`` or ``slice(None)``: every env)."""
    if ids is None or (isinstance(ids, slice) and ids == slice(None)):
        return None
    if isinstance(ids, slice):
        return np.arange(num_envs, dtype=np.uint32)[ids]
    if hasattr(ids, "__dlpack__") and not isinstance(ids, np.ndarray):
        ids = view(ids, "env_ids")
    a = np.asarray(ids)
    if a.ndim == 0:
        a = a.reshape(1)
    if a.size == 0:
        return np.zeros(0, dtype=np.uint32)
    if a.dtype == np.bool_:
        if a.shape != (num_envs,):
            raise IndexError(
                f"env_ids: a boolean mask must have {num_envs} entries, got {a.shape[0]}"
            )
        return np.flatnonzero(a).astype(np.uint32)
    if a.dtype.kind not in "iu":
        raise TypeError(f"env_ids: expected integers, got an array of {a.dtype}")
    if a.ndim != 1:
        raise IndexError(f"env_ids: expected a 1-D list of env indices, got shape {a.shape}")
    if a.size and (a.min() < 0 or a.max() >= num_envs):
        bad = int(a.min()) if a.min() < 0 else int(a.max())
        raise IndexError(f"env_ids: env {bad} is out of range for {num_envs} envs")
    return np.ascontiguousarray(a, dtype=np.uint32)
