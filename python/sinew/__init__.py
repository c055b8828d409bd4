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


def set_cpu_spin_wait(seconds: float) -> None:
    """How long the CPU step's other threads keep looking for work after a
    step before they sleep (every engine in the process; 200 µs to start
    with). A step that comes sooner starts on every thread at once, without
    waiting tens of µs for a sleeping thread to wake; the cost is the other
    cores busy for that long after each step; a small step (run on one
    thread while they sleep) that comes within the wait of the step before
    wakes them for the next. A caller that steps at a steady pace with
    longer gaps (a simulator's step between two of Sinew's) finds them awake
    too: they sleep through the gap on a timer and wake a little before the
    next step is due. ``0`` lets them sleep at once and turns that timer
    off. A spinning thread with nothing to do offers its core now and then
    to any other thread that waits for it (torch's, say), so the caller's own work
    between steps is not held up (BENCHMARKS.md)."""
    _sinew.set_cpu_spin_wait(seconds)


def cpu_spin_wait() -> float:
    """The CPU step's spin wait now in force, in seconds."""
    return _sinew.cpu_spin_wait()


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
    "cpu_spin_wait",
    "gpu_status",
    "presets",
    "set_cpu_spin_wait",
    *_kinds,
]
