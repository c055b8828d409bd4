"""The engine: a plan of groups over ``num_envs`` envs on one backend."""

from __future__ import annotations

import os
from typing import Any, NamedTuple, Sequence

import numpy as np

from . import _arrays, _sinew
from .config import Group, Robot


class CtrlColumn(NamedTuple):
    """One ctrl column: its group, target, transmission (``joint``, ``tendon``,
    ``site``), what the value means to the simulator (``effort``,
    ``position_target``, ``velocity_target``, ``effort_target``,
    ``actuator_force``) and the command column it reads."""

    group: str
    target: str
    transmission: str
    meaning: str
    column: int


class GroupInfo(NamedTuple):
    """A compiled group: its kind's key, resolved targets, and the names of its
    parameters (for ``set_param``) and state slots (for ``set_state``)."""

    name: str
    kind: str
    targets: list[str]
    params: list[str]
    state: list[str]


class Engine:
    """Sinew's actuator models for ``num_envs`` envs, stepped from numpy arrays
    or torch CPU tensors without copies.

    ``joints`` is a list of joint names or a :class:`sinew.Robot`; ``groups``
    are :class:`sinew.Group` entries. ``backend``: ``"auto"`` (a hardware GPU
    when there is one, else the CPU), ``"cpu"`` or ``"wgpu"``. ``seed`` seeds
    the delay lags; ``dt`` is the physics step (s) of kinds that integrate
    state; ``sort_actuators`` is mjlab's ctrl-column sort.

    Thread safety: calls from several threads are serialized. While a step
    runs the GIL is released, so another Python thread must not write the
    arrays it reads (as with any numpy function that releases the GIL)."""

    def __init__(
        self,
        joints: Sequence[str] | Robot,
        groups: Sequence[Group],
        num_envs: int,
        backend: str = "auto",
        seed: int = 0,
        dt: float = 0.005,
        sort_actuators: bool = False,
        *,
        base_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        robot = joints if isinstance(joints, Robot) else Robot(joints=list(joints))
        for g in groups:
            if not isinstance(g, Group):
                raise TypeError(f"groups: expected sinew.Group entries, got {type(g).__name__}")
        if not isinstance(num_envs, int) or isinstance(num_envs, bool) or num_envs < 1:
            raise ValueError(f"num_envs: expected a positive integer, got {num_envs!r}")
        spec = {
            "dt": float(dt),
            "seed": int(seed),
            "sort_actuators": bool(sort_actuators),
            "robot": robot.to_dict(),
            "groups": [g.to_dict() for g in groups],
        }
        base = os.fspath(base_dir) if base_dir is not None else None
        self._init(_sinew.Engine(spec, num_envs, backend, base))

    @classmethod
    def from_scenario(
        cls, path: str | os.PathLike[str], num_envs: int | None = None, backend: str = "auto"
    ) -> "Engine":
        """An engine from a scenario file (``sinew run``'s format), with the
        file's ``num_envs`` unless given; its ``[inputs]`` are applied."""
        return cls._wrap(_sinew.Engine.from_file(os.fspath(path), num_envs, backend))

    @classmethod
    def from_preset(cls, name: str, num_envs: int | None = None, backend: str = "auto") -> "Engine":
        """An engine from a shipped robot preset (see :func:`sinew.presets`)."""
        return cls._wrap(_sinew.Engine.from_preset(name, num_envs, backend))

    @classmethod
    def _wrap(cls, core: Any) -> "Engine":
        self = cls.__new__(cls)
        self._init(core)
        return self

    def _init(self, core: Any) -> None:
        self._core = core
        self.num_envs: int = core.num_envs
        """Envs per step."""
        self.num_targets: int = core.num_targets
        """Command columns: joints, then tendons, then sites."""
        self.num_ctrl: int = core.num_ctrl
        """ctrl columns (see :meth:`ctrl_columns`)."""

    # -- the step -------------------------------------------------------------

    def step(
        self,
        position_target: Any = None,
        velocity_target: Any = None,
        effort_target: Any = None,
        pos: Any = None,
        vel: Any = None,
        out: Any = None,
    ) -> np.ndarray:
        """One physics step: returns ctrl, ``(num_envs, num_ctrl)`` float32.

        Inputs are float32, C-contiguous ``(num_envs, num_targets)`` numpy
        arrays or torch CPU tensors, read in place; one left out is zeros.
        ``out`` is written in place when given (allocate it once); the
        returned array is then ``out`` itself (a numpy view for a tensor).
        An env whose inputs or outputs are not finite gets a zero row and is
        listed by :meth:`nonfinite_envs`; its stored state does not advance."""
        # Straight to the compiled core, which takes numpy arrays as they are
        # and views torch tensors and anything else in place (_arrays.view).
        return self._core.step(position_target, velocity_target, effort_target, pos, vel, out)

    def time_steps(
        self,
        steps: int,
        position_target: Any = None,
        velocity_target: Any = None,
        effort_target: Any = None,
        pos: Any = None,
        vel: Any = None,
        out: Any = None,
    ) -> float:
        """Seconds that ``steps`` calls of :meth:`step` with these arguments
        take in a Rust loop: the same work without Python, for measuring
        what the binding adds (benches/python_step.py)."""
        return self._core.time_steps(
            steps, position_target, velocity_target, effort_target, pos, vel, out
        )

    def read_ctrl(self) -> np.ndarray:
        """The last step's ctrl, as a new array."""
        return self._core.read_ctrl()

    def nonfinite_envs(self) -> np.ndarray:
        """The envs (uint32, ascending) the last step zeroed for a non-finite
        input or output."""
        return self._core.nonfinite_envs()

    def reset(self, env_ids: Any = None) -> None:
        """Resets the state, delay histories and lags of ``env_ids`` (all when
        ``None``); parameters keep their values."""
        self._core.reset(self._ids(env_ids))

    # -- parameters, state, lags ----------------------------------------------

    def set_param(self, group: str, name: str, values: Any, env_ids: Any = None) -> None:
        """Writes parameter ``name`` of ``group`` (mjlab aliases accepted):
        one value for every (env, target), one per selected env, or a
        ``(len(env_ids), group targets)`` array. Checked against the
        parameter's domain before anything is written."""
        self._core.set_param(group, name, _arrays.values(values, "values"), self._ids(env_ids))

    def read_param(self, group: str, name: str) -> np.ndarray:
        """Parameter ``name`` of ``group``, ``(num_envs, group targets)``."""
        return self._core.read_param(group, name)

    def set_gains(self, group: str, kp: Any = None, kd: Any = None, env_ids: Any = None) -> None:
        """mjlab's ``set_gains``: stiffness and damping, both checked before
        either is written."""
        kp = None if kp is None else _arrays.values(kp, "kp")
        kd = None if kd is None else _arrays.values(kd, "kd")
        self._core.set_gains(group, kp, kd, self._ids(env_ids))

    def set_effort_limit(self, group: str, values: Any, env_ids: Any = None) -> None:
        """mjlab's ``set_effort_limit``."""
        self.set_param(group, "effort_limit", values, env_ids)

    def set_state(self, group: str, name: str, values: Any, env_ids: Any = None) -> None:
        """Writes state slot ``name`` of ``group`` (shapes as :meth:`set_param`)."""
        self._core.set_state(group, name, _arrays.values(values, "values"), self._ids(env_ids))

    def read_state(self, group: str, name: str) -> np.ndarray:
        """State slot ``name`` of ``group``, ``(num_envs, group targets)``."""
        return self._core.read_state(group, name)

    def set_lags(self, group: str, lags: Any, env_ids: Any = None) -> None:
        """Sets the lag of ``group``'s delay buffer: one for every selected env
        or one per env, clamped to ``[min_lag, max_lag]`` (mjlab's ``set_lags``)."""
        a = np.asarray(_arrays.view(lags, "lags") if hasattr(lags, "__dlpack__") else lags)
        if a.dtype.kind not in "iu":
            raise TypeError(f"lags: expected integers, got {a.dtype}")
        if a.size and a.min() < 0:
            raise ValueError(f"lags: a lag cannot be negative, got {int(a.min())}")
        self._core.set_lags(group, np.asarray(a, dtype=np.uint32, order="C"), self._ids(env_ids))

    def read_lags(self, group: str) -> np.ndarray:
        """The current lag of each env in ``group``'s delay buffer."""
        return self._core.read_lags(group)

    def set_input(self, name: str, values: Any) -> None:
        """Sets an extra input plane (``external_torque``, ``torque_enable``,
        ``voltage``, …), ``(num_envs, num_targets)``; it holds until set again."""
        self._core.set_input(name, _arrays.view(values, "values"))

    def read_output(self, name: str) -> np.ndarray:
        """An extra output plane of the last step (``frictionloss``,
        ``damping``, …), ``(num_envs, num_ctrl)``."""
        return self._core.read_output(name)

    # -- what the plan is ------------------------------------------------------

    @property
    def description(self) -> str:
        """The backend, in words."""
        return self._core.description

    @property
    def targets(self) -> list[str]:
        """The command columns' names."""
        return self._core.targets

    def ctrl_columns(self) -> list[CtrlColumn]:
        """What each ctrl column is."""
        return [CtrlColumn(*c) for c in self._core.ctrl_columns()]

    def groups(self) -> list[GroupInfo]:
        """The compiled groups."""
        return [GroupInfo(*g) for g in self._core.groups()]

    @property
    def input_planes(self) -> list[str]:
        """Names of the extra input planes the plan's kinds read."""
        return self._core.planes()[0]

    @property
    def output_planes(self) -> list[str]:
        """Names of the extra output planes the plan's kinds write."""
        return self._core.planes()[1]

    def _ids(self, env_ids: Any) -> np.ndarray | None:
        return _arrays.env_ids(env_ids, self.num_envs)

    def __repr__(self) -> str:
        return (
            f"<sinew.Engine {self.num_envs} envs × {self.num_targets} targets → "
            f"{self.num_ctrl} ctrl on {self.description}>"
        )
