"""The pieces of an engine's configuration: a robot, groups of targets, each
with a kind (``sinew.DcMotor`` and the other classes of ``sinew.kinds``) and an
optional command delay. They mirror a scenario file's tables, and the engine
checks them with the scenario reader's rules and messages."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence


class Kind:
    """An actuator kind with its settings. Use a subclass per kind
    (``sinew.DcMotor(stiffness=…)``) or ``Kind("dc_motor", stiffness=…)``.

    A setting left out takes Sinew's default for the kind; settings are
    checked when the engine is built, with errors naming the group and field."""

    key: str = ""
    fields: tuple[str, ...] = ()

    def __init__(self, key: str | None = None, /, **settings: Any) -> None:
        if key is not None:
            if type(self) is not Kind:
                raise TypeError(f"{type(self).__name__}() takes keyword arguments only")
            self.key = key
        elif not self.key:
            raise TypeError("Kind() needs the kind's key, e.g. Kind('dc_motor', stiffness=20.0)")
        if self.fields:
            for name in settings:
                if name not in self.fields:
                    raise TypeError(
                        f"{type(self).__name__}() got an unexpected keyword argument {name!r}; "
                        f"it takes {', '.join(self.fields)}"
                    )
        self.settings = {k: v for k, v in settings.items() if v is not None}

    def to_dict(self) -> dict[str, Any]:
        """The settings as a scenario file's group keys."""
        out: dict[str, Any] = {"kind": self.key}
        for k, v in self.settings.items():
            out[k] = v.to_dict() if hasattr(v, "to_dict") else v
        return out

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.settings.items())
        if type(self) is Kind:
            return f"Kind({self.key!r}{', ' if args else ''}{args})"
        return f"{type(self).__name__}({args})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Kind) and (self.key, self.settings) == (other.key, other.settings)


class Preset(Kind):
    """One of BAM's shipped servo fits (``"xl330/m6"``) or a parameter file
    written by ``sinew fit`` (``"fit.json"``): its kind and settings, which the
    keyword arguments override (e.g. ``kp`` for eRob and Go1 fits)."""

    def __init__(self, name: str, /, **overrides: Any) -> None:
        self.key = ""
        self.name = name
        self.settings = {k: v for k, v in overrides.items() if v is not None}

    def to_dict(self) -> dict[str, Any]:
        out = Kind.to_dict(self)
        del out["kind"]
        out["preset"] = self.name
        return out

    def __repr__(self) -> str:
        args = "".join(f", {k}={v!r}" for k, v in self.settings.items())
        return f"Preset({self.name!r}{args})"


@dataclass
class Delay:
    """Command delay of a group, in physics steps (mjlab's ``delay_*`` fields).

    Each env draws a lag in ``[min_lag, max_lag]``; with ``hold_prob`` it keeps
    the last one; ``update_period`` redraws every n steps (0: every step);
    ``resample="on_reset"`` draws once per reset. ``share``: ``"auto"`` (mjlab's
    rule), ``"own"``, or a buffer name shared by every group naming it."""

    min_lag: int = 0
    max_lag: int = 0
    hold_prob: float = 0.0
    update_period: int = 0
    per_env_phase: bool = True
    resample: str = "every_step"
    share: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in self.__dataclass_fields__}
        if out["share"] is None:
            del out["share"]
        return out


@dataclass
class Group:
    """Targets (regexes, fully matched against the robot's names) driven by one
    kind, with an optional delay. ``transmission``: ``"joint"``, ``"tendon"``
    or ``"site"``."""

    name: str
    targets: Sequence[str]
    cfg: Kind
    delay: Delay | None = None
    transmission: str = "joint"

    def __post_init__(self) -> None:
        if isinstance(self.targets, str):
            self.targets = [self.targets]
        if not isinstance(self.cfg, Kind):
            raise TypeError(
                f"group {self.name!r}: cfg must be a kind (sinew.DcMotor(...), "
                f"sinew.Kind('dc_motor', ...)), got {type(self.cfg).__name__}"
            )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "targets": list(self.targets)}
        out.update(self.cfg.to_dict())
        if self.transmission != "joint":
            out["transmission"] = self.transmission
        if self.delay is not None:
            out["delay"] = self.delay.to_dict()
        return out


@dataclass
class FixedTendon:
    """A fixed tendon: its length is ``Σ coef · q`` over ``joints``."""

    name: str
    joints: Sequence[tuple[str, float]]
    actuator_force_range: tuple[float, float] | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "joints": [list(j) for j in self.joints]}
        if self.actuator_force_range is not None:
            out["actuator_force_range"] = list(self.actuator_force_range)
        return out


@dataclass
class Robot:
    """The names of the command columns: joints, then tendons, then sites (the
    column order of every ``(num_envs, num_targets)`` array)."""

    joints: Sequence[str] = ()
    tendons: Sequence[str] = ()
    sites: Sequence[str] = ()
    fixed_tendons: Sequence[FixedTendon] = ()
    joint_actuator_force_ranges: Mapping[str, tuple[float, float]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"joints": list(self.joints)}
        if self.tendons:
            out["tendons"] = list(self.tendons)
        if self.sites:
            out["sites"] = list(self.sites)
        if self.fixed_tendons:
            out["fixed_tendons"] = [t.to_dict() for t in self.fixed_tendons]
        if self.joint_actuator_force_ranges:
            out["joint_actuator_force_ranges"] = {
                k: list(v) for k, v in self.joint_actuator_force_ranges.items()
            }
        return out
