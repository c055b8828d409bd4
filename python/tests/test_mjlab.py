"""sinew.mjlab against mjlab 1.6.0's own actuators: two entities on the same
robot, one with mjlab's IdealPd/DcMotor configs, one with Sinew's drop-ins,
driven through the same episode (fixed delays, resets, mjlab's own
domain-randomization setters on gains and effort limits) must write the same
ctrl. Skipped when mjlab is not installed (pip install mjlab==1.6.0)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

mjlab = pytest.importorskip("mjlab", reason="mjlab 1.6.0 is not installed")
torch = pytest.importorskip("torch", reason="torch is not installed")

import mujoco  # noqa: E402

import mjlab.actuator as mja  # noqa: E402
from mjlab.entity import Entity, EntityArticulationInfoCfg, EntityCfg  # noqa: E402

import sinew  # noqa: E402
import sinew.mjlab as sm  # noqa: E402

pytestmark = pytest.mark.mjlab
JOINTS = ["FL_hip", "FL_thigh", "FL_calf", "FR_hip", "FR_thigh", "FR_calf"]
E = 5


def spec_fn() -> mujoco.MjSpec:
    spec = mujoco.MjSpec()
    base = spec.worldbody.add_body(name="base", pos=[0, 0, 1])
    base.add_freejoint(name="root")
    base.add_geom(type=mujoco.mjtGeom.mjGEOM_SPHERE, size=[0.1, 0, 0])
    body = base
    for i, name in enumerate(JOINTS):
        body = body.add_body(name=f"link_{name}", pos=[0, 0, 0.1])
        body.add_geom(type=mujoco.mjtGeom.mjGEOM_SPHERE, size=[0.05, 0, 0], mass=1.0)
        body.add_joint(name=name, type=mujoco.mjtJoint.mjJNT_HINGE,
                       axis=[[0, 1, 0], [1, 0, 0], [0, 0, 1]][i % 3])
    return spec


def entity(pd_cls, dc_cls):
    cfgs = (
        pd_cls(target_names_expr=(".*_hip",), stiffness=40.0, damping=1.5, effort_limit=12.0,
               delay_min_lag=2, delay_max_lag=2),
        dc_cls(target_names_expr=(".*_thigh", ".*_calf"), stiffness=60.0, damping=2.0,
               effort_limit=20.0, saturation_effort=30.0, velocity_limit=12.0,
               delay_min_lag=1, delay_max_lag=3, delay_hold_prob=1.0),
    )
    ent = Entity(EntityCfg(spec_fn=spec_fn, articulation=EntityArticulationInfoCfg(actuators=cfgs)))
    mj_model = ent.compile()
    model = SimpleNamespace(jnt_range=torch.tensor(mj_model.jnt_range,
                                                   dtype=torch.float32)[None].repeat(E, 1, 1))
    data = SimpleNamespace(nworld=E, qpos=torch.zeros(E, mj_model.nq),
                           qvel=torch.zeros(E, mj_model.nv), ctrl=torch.zeros(E, mj_model.nu),
                           ten_length=torch.zeros(E, 0), ten_velocity=torch.zeros(E, 0))
    ent.initialize(mj_model, model, data, "cpu")
    return ent, data


def test_adapter_matches_mjlab_over_an_episode():
    ref, ref_data = entity(mja.IdealPdActuatorCfg, mja.DcMotorActuatorCfg)
    ours, our_data = entity(sm.IdealPdActuatorCfg, sm.DcMotorActuatorCfg)
    assert all(isinstance(a, mja.IdealPdActuator) for a in ours.actuators)
    rng = np.random.default_rng(3)
    q_adr = ref.indexing.joint_q_adr.long()
    v_adr = ref.indexing.joint_v_adr.long()
    for a, b in zip(ref.actuators, ours.actuators):
        if a.cfg.delay_hold_prob == 1.0:
            lags = torch.tensor([1, 2, 3, 2, 1])
            a.set_lags(lags)
            b.set_lags(lags)
    for step in range(40):
        if step in (13, 29):
            ids = torch.tensor([1, 3]) if step == 13 else None
            ref.reset(ids)
            ours.reset(ids)
        if step % 10 == 5:  # what dr.pd_gains / dr.effort_limits call on an IdealPd
            env_ids = torch.tensor(rng.choice(E, 3, replace=False))
            for a, b in zip(ref.actuators, ours.actuators):
                n = len(a.target_names)
                kp = a.default_stiffness[env_ids] * torch.tensor(rng.uniform(0.8, 1.2, (3, n)),
                                                                dtype=torch.float32)
                kd = a.default_damping[env_ids] * torch.tensor(rng.uniform(0.8, 1.2, (3, n)),
                                                              dtype=torch.float32)
                lim = a.default_force_limit[env_ids] * torch.tensor(
                    rng.uniform(0.7, 1.1, (3, n)), dtype=torch.float32)
                for act in (a, b):
                    act.set_gains(env_ids, kp=kp, kd=kd)
                    act.set_effort_limit(env_ids, effort_limit=lim)
        target = torch.tensor(rng.uniform(-1, 1, (E, len(JOINTS))), dtype=torch.float32)
        qpos = torch.tensor(rng.uniform(-1, 1, (E, len(JOINTS))), dtype=torch.float32)
        qvel = torch.tensor(rng.uniform(-15, 15, (E, len(JOINTS))), dtype=torch.float32)
        for ent, data in ((ref, ref_data), (ours, our_data)):
            data.qpos[:, q_adr] = qpos
            data.qvel[:, v_adr] = qvel
            ent.set_joint_position_target(target)
            ent.write_data_to_sim()
        assert torch.equal(ref_data.ctrl, our_data.ctrl), f"step {step}"
    assert ours.actuators[0].engine.nonfinite_envs().size == 0


def test_any_kind_through_sinew_actuator_cfg():
    kind = sinew.MjPid(kp=20.0, ki=1.0, imax=1.0, input="pos")
    cfg = sm.SinewActuatorCfg(target_names_expr=(".*",), kind=kind, effort_limit=50.0)
    ent = Entity(EntityCfg(spec_fn=spec_fn, articulation=EntityArticulationInfoCfg(
        actuators=(cfg,))))
    mj_model = ent.compile()
    data = SimpleNamespace(nworld=E, qpos=torch.zeros(E, mj_model.nq),
                           qvel=torch.zeros(E, mj_model.nv), ctrl=torch.zeros(E, mj_model.nu),
                           ten_length=torch.zeros(E, 0), ten_velocity=torch.zeros(E, 0))
    model = SimpleNamespace(jnt_range=torch.tensor(mj_model.jnt_range)[None].repeat(E, 1, 1))
    ent.initialize(mj_model, model, data, "cpu")
    ent.set_joint_position_target(torch.full((E, len(JOINTS)), 0.1))
    ent.write_data_to_sim()
    assert torch.allclose(data.ctrl, torch.full_like(data.ctrl, 2.0))
    with pytest.raises(TypeError, match="no stiffness"):
        ent.actuators[0].set_gains(torch.tensor([0]), kp=torch.tensor([1.0]))
