"""Sinew: batched robot actuator models (mjlab, Isaac Lab, MuJoCo, BAM, MIMo)
on the CPU and the GPU, stepped from numpy arrays or torch CPU tensors
without copies.

>>> import numpy as np, sinew
>>> motor = sinew.DcMotor(stiffness=20.0, damping=0.5, effort_limit=23.7,
...                       saturation_effort=23.7, velocity_limit=30.1)
>>> engine = sinew.Engine(["hip", "knee"], [sinew.Group("leg", [".*"], motor)], num_envs=4)
>>> target = np.full((4, 2), 0.3, dtype=np.float32)
>>> ctrl = engine.step(position_target=target)
>>> float(ctrl[0, 0])  # 20 · 0.3
6.0
"""

from . import _sinew
from .config import Delay, FixedTendon, Group, Kind, Preset, Robot
from .engine import CtrlColumn, Engine, GroupInfo
from .errors import ConfigError, GpuError, ShapeError, SinewError, UnknownNameError
from .kinds import *  # noqa: F403  (one class per kind)
from .kinds import __all__ as _kinds

__version__: str = _sinew.__version__


def presets() -> dict[str, list[str]]:
    """The shipped robot presets and their aliases (``Engine.from_preset``)."""
    return dict(_sinew.presets())


def gpu_status() -> str:
    """What ``backend="auto"`` finds on this machine, in one line."""
    return _sinew.gpu_status()


__all__ = [
    "ConfigError",
    "CtrlColumn",
    "Delay",
    "Engine",
    "FixedTendon",
    "GpuError",
    "Group",
    "GroupInfo",
    "Kind",
    "Preset",
    "Robot",
    "ShapeError",
    "SinewError",
    "UnknownNameError",
    "gpu_status",
    "presets",
    *_kinds,
]
