"""mjlab 1.6.0's golden episodes (tests/golden/mjlab) replayed through the
Python API from numpy arrays: every IdealPd, DcMotor and builtin ctrl value
bit for bit on the CPU, learned columns within the Rust replay's tolerance,
and every lag."""

from __future__ import annotations

import math

import numpy as np
import pytest

import sinew
from conftest import golden_cases, write_safetensors

FILES = ["upstream.json", "semantics.json", "pd_dc.json", "builtin.json", "delay.json",
         "learned.json", "tendon.json"]
# torch sums the network's products in another order (the Rust replay's bound).
LEARNED_TOLERANCE = 1e-5

KINDS = {
    "IdealPd": (sinew.IdealPd, ["stiffness", "damping", "effort_limit"]),
    "DcMotor": (sinew.DcMotor, ["stiffness", "damping", "effort_limit", "saturation_effort",
                                "velocity_limit"]),
    "BuiltinPosition": (sinew.BuiltinPosition, ["stiffness", "damping", "effort_limit"]),
    "BuiltinVelocity": (sinew.BuiltinVelocity, ["damping", "effort_limit"]),
    "BuiltinMotor": (sinew.BuiltinMotor, ["effort_limit", "gear"]),
}


def num(v):
    """A golden number: ``"inf"``/``"-inf"`` strings, ``None`` left out."""
    if isinstance(v, str):
        return float(v)
    return v


def group_of(g: dict, per_actuator: bool, tmp_path) -> sinew.Group:
    c = g["cfg"]
    common = {k: num(c[k]) for k in ("armature", "frictionloss", "viscous_damping")}
    if g["kind"] == "LearnedMlp":
        net = tmp_path / f"{g['name']}.safetensors"
        write_safetensors(net, g["network"]["layers"])
        cfg = sinew.LearnedMlp(
            network=str(net),
            effort_limit=num(c["effort_limit"]),
            saturation_effort=num(c["saturation_effort"]),
            velocity_limit=num(c["velocity_limit"]),
            history_length=c["history_length"],
            input_order=c["input_order"],
            pos_scale=c["pos_scale"],
            vel_scale=c["vel_scale"],
            torque_scale=c["torque_scale"],
            **common,
        )
    else:
        cls, fields = KINDS[g["kind"]]
        cfg = cls(**{f: num(c[f]) for f in fields}, **common)
    delay = None
    if c["delay_max_lag"] > 0:
        delay = sinew.Delay(
            min_lag=c["delay_min_lag"],
            max_lag=c["delay_max_lag"],
            hold_prob=c["delay_hold_prob"],
            update_period=c["delay_update_period"],
            per_env_phase=c["delay_per_env_phase"],
            share="own" if per_actuator else None,
        )
    return sinew.Group(g["name"], g["target_names_expr"], cfg, delay=delay,
                       transmission=g["transmission"])


def ids(v):
    return None if v == "all" else v


def replay(case: dict, backend: str, tmp_path) -> None:
    per_actuator = case.get("path") == "per_actuator"
    robot = sinew.Robot(joints=case["robot"]["joint"],
                        tendons=[t["name"] for t in case["robot"]["tendon"]])
    groups = [group_of(g, per_actuator, tmp_path) for g in case["groups"]]
    engine = sinew.Engine(robot, groups, case["num_envs"], backend=backend,
                          sort_actuators=case["sort_actuators"])
    columns = engine.ctrl_columns()
    assert [(c.group, c.target) for c in columns] == [
        (o["group"], o["target"]) for o in case["ctrl_order"]
    ]
    learned = np.array([
        next(g["kind"] for g in case["groups"] if g["name"] == c.group) == "LearnedMlp"
        for c in columns
    ])
    out = np.empty((engine.num_envs, engine.num_ctrl), dtype=np.float32)
    for k, step in enumerate(case["steps"]):
        if "reset" in step:
            engine.reset(ids(step["reset"]))
        for a in step.get("set_gains", []):
            kp = None if a["kp"] is None else np.asarray(a["kp"], dtype=np.float32)
            kd = None if a["kd"] is None else np.asarray(a["kd"], dtype=np.float32)
            engine.set_gains(a["group"], kp, kd, env_ids=ids(a["env_ids"]))
        for a in step.get("set_effort_limit", []):
            engine.set_effort_limit(a["group"], np.asarray(a["effort_limit"], dtype=np.float32),
                                    env_ids=ids(a["env_ids"]))
        for a in step.get("set_param", []):
            engine.set_param(a["group"], a["name"], np.asarray(a["values"], dtype=np.float32),
                             env_ids=ids(a["env_ids"]))
        for a in step.get("set_lags", []):
            engine.set_lags(a["group"], a["lags"], env_ids=ids(a["env_ids"]))
        cmd = {name: np.asarray(v, dtype=np.float32) for name, v in step["cmd"].items()}
        ctrl = engine.step(out=out, **cmd)
        assert ctrl is out
        want = np.asarray(step["expected"]["ctrl"], dtype=np.float64).astype(np.float32)
        assert want.shape == out.shape, f"step {k}"
        exact = ~learned[None, :] & np.ones_like(want, dtype=bool)
        if backend == "cpu":
            bad = exact & (out != want)
        else:
            bad = exact & ~np.isclose(out, want, rtol=1e-5, atol=1e-4)
        assert not bad.any(), (
            f"{case['id']} step {k}: ctrl {out[bad]} where mjlab wrote {want[bad]}"
        )
        scale = np.maximum(np.abs(out), np.abs(want)).astype(np.float64)
        far = learned[None, :] & (np.abs(out.astype(np.float64) - want) > LEARNED_TOLERANCE * (1 + scale))
        assert not far.any(), f"{case['id']} step {k}: learned ctrl {out[far]} vs {want[far]}"
        for group, lags in step["expected"].get("lags", {}).items():
            assert engine.read_lags(group).tolist() == lags, f"{case['id']} step {k} {group}"
        for row in step.get("upstream_expected", {}).get("ctrl", []):
            assert all(math.isfinite(x) for x in row)
    assert engine.nonfinite_envs().size == 0


@pytest.mark.parametrize("file", FILES)
def test_mjlab_golden_episodes(file, backend, tmp_path):
    cases = golden_cases(file)
    assert cases, file
    for case in cases:
        replay(case, backend, tmp_path)
