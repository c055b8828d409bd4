"""Sinew inside mjlab 1.6.0: actuator configs to put in an entity's
``EntityArticulationInfoCfg(actuators=…)`` in place of mjlab's own.

``IdealPdActuatorCfg`` and ``DcMotorActuatorCfg`` here take exactly the fields
of mjlab's classes of the same names (they subclass them), plus ``backend``.
``SinewActuatorCfg`` drives its targets with any Sinew kind (``kind=
sinew.MjDcMotor(...)``, ``sinew.Preset("xl330/m6")``, …) through ``<motor>``
actuators limited to ``effort_limit``. The actuator each one builds:

- adds one ``<motor>`` per target, as mjlab's IdealPd does (ctrl = effort);
- computes ctrl with a Sinew engine over the actuator's targets and all of
  mjlab's envs, its ``delay_*`` fields included (mjlab then makes no
  DelayBuffer of its own: the lag draws are Sinew's, with mjlab's semantics);
- is an ``IdealPdActuator`` (a ``DcMotorActuator`` for the DC config) that
  overrides ``compute``, so mjlab never fuses it and its domain randomization
  events (``dr.pd_gains``, ``dr.effort_limits``) find it: ``set_gains`` and
  ``set_effort_limit`` update mjlab's ``stiffness``/``damping``/``force_limit``
  tensors and the engine together; ``reset`` and ``set_lags`` go to the engine.

Parameters change through those setters or ``actuator.engine.set_param``; an
in-place write into ``actuator.stiffness`` alone does not reach the engine.
On a CUDA device the ``"cpu"`` backend copies the five command tensors to the
host and ctrl back each step; keep one config over many joints so one engine
call serves them all.

mjlab is imported when a name of this module is first used: ``import sinew``
works without it.

Check against mjlab's own actuators (needs ``pip install mjlab==1.6.0``):
``python -m pytest python/tests/test_mjlab.py``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import sinew

__all__ = ["IdealPdActuatorCfg", "DcMotorActuatorCfg", "SinewActuatorCfg"]

_classes: dict[str, Any] = {}


def __getattr__(name: str) -> Any:
    if name in __all__:
        if not _classes:
            _classes.update(_build())
        return _classes[name]
    raise AttributeError(f"module 'sinew.mjlab' has no attribute {name!r}")


def _build() -> dict[str, Any]:
    try:
        import torch
        import mjlab.actuator  # noqa: F401  (mjlab's import order)
        from mjlab.actuator import DcMotorActuator, IdealPdActuator
        from mjlab.actuator import DcMotorActuatorCfg as MjDcMotorCfg
        from mjlab.actuator import IdealPdActuatorCfg as MjIdealPdCfg
    except ImportError as e:
        raise ImportError(
            f"sinew.mjlab needs mjlab 1.6.0 and torch (pip install mjlab==1.6.0): {e}"
        ) from e
    from dataclasses import dataclass

    def delay_of(cfg: Any) -> sinew.Delay | None:
        if cfg.delay_max_lag <= 0:
            return None
        return sinew.Delay(
            min_lag=cfg.delay_min_lag,
            max_lag=cfg.delay_max_lag,
            hold_prob=cfg.delay_hold_prob,
            update_period=cfg.delay_update_period,
            per_env_phase=cfg.delay_per_env_phase,
            share="own",
        )

    def env_rows(env_ids: Any, num_envs: int) -> np.ndarray | None:
        if env_ids is None or (isinstance(env_ids, slice) and env_ids == slice(None)):
            return None
        if isinstance(env_ids, slice):
            return np.arange(num_envs)[env_ids]
        if isinstance(env_ids, torch.Tensor):
            return env_ids.detach().cpu().numpy()
        return np.asarray(env_ids)

    def host(t: torch.Tensor) -> np.ndarray:
        """``t``'s values as a float32 C-contiguous numpy array: a view of
        ``t``'s own memory when it is a CPU tensor of that form (its checks
        cost a quarter of the ``detach().to(...).contiguous()`` they skip)."""
        if not (t.is_cpu and t.dtype == torch.float32 and not t.requires_grad
                and t.is_contiguous()):
            t = t.detach().to(device="cpu", dtype=torch.float32).contiguous()
        return t.numpy()

    class _SinewMixin:
        """What every Sinew-computed mjlab actuator shares."""

        GROUP = "sinew"
        engine: sinew.Engine

        def _sinew_kind(self) -> sinew.Kind:
            raise NotImplementedError

        def _init_delay_buffer(self, num_envs: int, device: str) -> None:
            # Sinew delays the command itself; mjlab keeps no buffer.
            self._delay_buffer = None

        def _start_engine(self, num_envs: int, device: str) -> None:
            cfg = self.cfg
            transmission = getattr(cfg.transmission_type, "value", str(cfg.transmission_type))
            names = list(self.target_names)
            robot = {"joint": sinew.Robot(joints=names),
                     "tendon": sinew.Robot(tendons=names),
                     "site": sinew.Robot(sites=names)}[transmission]
            group = sinew.Group(self.GROUP, [".*"], self._sinew_kind(), delay=delay_of(cfg),
                                transmission=transmission)
            self.engine = sinew.Engine(robot, [group], num_envs,
                                       backend=getattr(cfg, "backend", "cpu"),
                                       seed=getattr(cfg, "seed", 0))
            self._device = device
            self._ctrl = torch.zeros((num_envs, self.engine.num_ctrl), dtype=torch.float32)
            self._ctrl_view = self._ctrl.numpy()  # the same memory, viewed once

        def compute(self, cmd: Any) -> torch.Tensor:
            self.engine.step(
                position_target=host(cmd.position_target),
                velocity_target=host(cmd.velocity_target),
                effort_target=host(cmd.effort_target),
                pos=host(cmd.pos),
                vel=host(cmd.vel),
                out=self._ctrl_view,
            )
            return self._ctrl.to(self._device)

        def reset(self, env_ids: Any = None) -> None:
            self.engine.reset(env_rows(env_ids, self.engine.num_envs))

        def set_lags(self, lags: Any, env_ids: Any = None) -> None:
            lags = lags.detach().cpu().numpy() if isinstance(lags, torch.Tensor) else lags
            # mjlab clamps into [min_lag, max_lag] (a negative lag too) and
            # truncates float lags on assignment; Sinew clamps from 0 up.
            lags = np.clip(np.asarray(lags).astype(np.int64), 0, None)
            self.engine.set_lags(self.GROUP, lags, env_rows(env_ids, self.engine.num_envs))

        def _push(self, name: str, table: torch.Tensor, env_ids: Any) -> None:
            rows = env_rows(env_ids, self.engine.num_envs)
            values = table if rows is None else table[torch.as_tensor(rows, device=table.device)]
            self.engine.set_param(self.GROUP, name, host(values), env_ids=rows)

        def set_gains(self, env_ids: Any, kp: Any = None, kd: Any = None) -> None:
            IdealPdActuator.set_gains(self, env_ids, kp=kp, kd=kd)
            if kp is not None:
                self._push("stiffness", self.stiffness, env_ids)
            if kd is not None:
                self._push("damping", self.damping, env_ids)

        def set_effort_limit(self, env_ids: Any, effort_limit: Any) -> None:
            IdealPdActuator.set_effort_limit(self, env_ids, effort_limit)
            self._push("effort_limit", self.force_limit, env_ids)

    class SinewIdealPdActuator(_SinewMixin, IdealPdActuator):
        """mjlab's IdealPd law computed by Sinew."""

        def _sinew_kind(self) -> sinew.Kind:
            c = self.cfg
            return sinew.IdealPd(stiffness=c.stiffness, damping=c.damping,
                                 effort_limit=c.effort_limit)

        def initialize(self, mj_model: Any, model: Any, data: Any, device: str) -> None:
            IdealPdActuator.initialize(self, mj_model, model, data, device)
            self._start_engine(data.nworld, device)

    class SinewDcMotorActuator(_SinewMixin, DcMotorActuator):
        """mjlab's DcMotor law computed by Sinew."""

        def _sinew_kind(self) -> sinew.Kind:
            c = self.cfg
            return sinew.DcMotor(stiffness=c.stiffness, damping=c.damping,
                                 effort_limit=c.effort_limit,
                                 saturation_effort=c.saturation_effort,
                                 velocity_limit=c.velocity_limit)

        def initialize(self, mj_model: Any, model: Any, data: Any, device: str) -> None:
            DcMotorActuator.initialize(self, mj_model, model, data, device)
            self._start_engine(data.nworld, device)

    class SinewKindActuator(_SinewMixin, IdealPdActuator):
        """Any Sinew kind behind ``<motor>`` actuators."""

        def _sinew_kind(self) -> sinew.Kind:
            return self.cfg.kind

        def initialize(self, mj_model: Any, model: Any, data: Any, device: str) -> None:
            IdealPdActuator.initialize(self, mj_model, model, data, device)
            self._start_engine(data.nworld, device)

        def set_gains(self, env_ids: Any, kp: Any = None, kd: Any = None) -> None:
            names = self.engine.groups()[0].params
            if "stiffness" not in names:
                raise TypeError(
                    f"kind {self.cfg.kind.key} has no stiffness or damping for set_gains; "
                    f"its parameters are {', '.join(names)}"
                )
            super().set_gains(env_ids, kp=kp, kd=kd)

    @dataclass(kw_only=True)
    class _SinewOptions:
        backend: str = "cpu"
        """Sinew backend: ``"cpu"``, ``"wgpu"`` or ``"auto"``."""
        seed: int = 0
        """Seed of the lag draws."""

    @dataclass(kw_only=True)
    class IdealPdActuatorCfg(MjIdealPdCfg, _SinewOptions):
        """mjlab's ``IdealPdActuatorCfg``, computed by Sinew."""

        def build(self, entity: Any, target_ids: list[int], target_names: list[str]) -> Any:
            return SinewIdealPdActuator(self, entity, target_ids, target_names)

    @dataclass(kw_only=True)
    class DcMotorActuatorCfg(MjDcMotorCfg, _SinewOptions):
        """mjlab's ``DcMotorActuatorCfg``, computed by Sinew."""

        def build(self, entity: Any, target_ids: list[int], target_names: list[str]) -> Any:
            return SinewDcMotorActuator(self, entity, target_ids, target_names)

    @dataclass(kw_only=True)
    class SinewActuatorCfg(MjIdealPdCfg, _SinewOptions):
        """Any Sinew kind on mjlab targets, through ``<motor>`` actuators whose
        ctrl and force ranges are ``±effort_limit`` (infinite by default)."""

        kind: sinew.Kind
        """The Sinew kind and its settings."""
        stiffness: float = 0.0
        damping: float = 0.0

        def build(self, entity: Any, target_ids: list[int], target_names: list[str]) -> Any:
            return SinewKindActuator(self, entity, target_ids, target_names)

    return {
        "IdealPdActuatorCfg": IdealPdActuatorCfg,
        "DcMotorActuatorCfg": DcMotorActuatorCfg,
        "SinewActuatorCfg": SinewActuatorCfg,
    }
