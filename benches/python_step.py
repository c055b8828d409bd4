"""What the Python binding costs per step: the same engine stepped from a
Python loop (numpy arrays, out= reused) and from a Rust loop
(Engine.time_steps), in one run. Build the extension in release first:

    .venv/bin/maturin develop --release && .venv/bin/python benches/python_step.py

With mjlab 1.6.0 installed (pip install mjlab==1.6.0, which pulls torch) it
also times mjlab's own actuator path on the CPU for the same G1 groups: an
mjlab Entity's write_data_to_sim(), as its env loop calls it every physics
step."""

from __future__ import annotations

import json
import sys
import time

import numpy as np

import sinew


def arrays(engine: sinew.Engine) -> dict:
    """A step's arguments: five distinct command arrays and out, as a
    simulator would hand them over."""
    rng = np.random.default_rng(0)
    shape = (engine.num_envs, engine.num_targets)
    args = {name: rng.uniform(-1, 1, shape).astype(np.float32)
            for name in ("position_target", "velocity_target", "effort_target", "pos", "vel")}
    args["out"] = np.empty((engine.num_envs, engine.num_ctrl), dtype=np.float32)
    return args


def python_loop(engine: sinew.Engine, steps: int, torch=None) -> float:
    """With ``torch``, the same arrays as torch CPU tensors sharing their memory."""
    args = arrays(engine)
    if torch is not None:
        args = {k: torch.from_numpy(v) for k, v in args.items()}
    engine.step(**args)
    start = time.perf_counter()
    for _ in range(steps):
        engine.step(**args)
    return time.perf_counter() - start


def rust_loop(engine: sinew.Engine, steps: int) -> float:
    args = arrays(engine)
    engine.step(**args)
    return engine.time_steps(steps, **args)


def time_mjlab(steps: int) -> float | None:
    """µs per ``Entity.write_data_to_sim()`` of an mjlab 1.6.0 entity with the
    G1 preset's groups as mjlab IdealPd configs (mjlab fuses them: gather the
    five fields, the PD law, write ctrl), torch on the CPU with 2 threads."""
    try:
        from types import SimpleNamespace

        import mujoco
        import torch
        import mjlab.actuator as mja
        from mjlab.entity import Entity, EntityArticulationInfoCfg, EntityCfg
    except ImportError:
        return None
    torch.set_num_threads(2)
    g1 = sinew.Engine.from_preset("g1", num_envs=1, backend="cpu")
    joints = g1.targets
    cfgs = []
    for g in g1.groups():
        kp, kd, lim = (float(g1.read_param(g.name, n)[0, 0])
                       for n in ("stiffness", "damping", "effort_limit"))
        cfgs.append(mja.IdealPdActuatorCfg(target_names_expr=tuple(g.targets), stiffness=kp,
                                           damping=kd, effort_limit=lim))

    def spec_fn():
        spec = mujoco.MjSpec()
        body = spec.worldbody.add_body(name="base", pos=[0, 0, 1])
        body.add_freejoint(name="root")
        body.add_geom(type=mujoco.mjtGeom.mjGEOM_SPHERE, size=[0.1, 0, 0])
        for name in joints:
            body = body.add_body(name=f"link_{name}", pos=[0, 0, 0.1])
            body.add_geom(type=mujoco.mjtGeom.mjGEOM_SPHERE, size=[0.05, 0, 0], mass=1.0)
            body.add_joint(name=name, type=mujoco.mjtJoint.mjJNT_HINGE, axis=[0, 1, 0])
        return spec

    E = 4096
    ent = Entity(EntityCfg(spec_fn=spec_fn,
                           articulation=EntityArticulationInfoCfg(actuators=tuple(cfgs))))
    mj_model = ent.compile()
    data = SimpleNamespace(nworld=E, qpos=torch.rand(E, mj_model.nq),
                           qvel=torch.rand(E, mj_model.nv), ctrl=torch.zeros(E, mj_model.nu),
                           ten_length=torch.zeros(E, 0), ten_velocity=torch.zeros(E, 0))
    model = SimpleNamespace(jnt_range=torch.tensor(mj_model.jnt_range)[None].repeat(E, 1, 1))
    ent.initialize(mj_model, model, data, "cpu")
    ent.set_joint_position_target(torch.rand(E, len(joints)))

    def loop() -> float:
        start = time.perf_counter()
        for _ in range(steps):
            ent.write_data_to_sim()
        return time.perf_counter() - start

    return best(loop) / steps * 1e6


def best(f, repeats: int = 5) -> float:
    return min(f() for _ in range(repeats))


def main() -> int:
    rows = []
    tiny = sinew.Engine(["j"], [sinew.Group("g", ["j"], sinew.IdealPd(stiffness=1.0,
                                                                      damping=0.1))], 1,
                        backend="cpu")
    n = 20000
    try:
        import torch
    except ImportError:
        torch = None
    rows.append(("ideal_pd 1x1", n, best(lambda: python_loop(tiny, n)),
                 best(lambda: rust_loop(tiny, n))))
    if torch is not None:
        rows.append(("ideal_pd 1x1, torch", n, best(lambda: python_loop(tiny, n, torch)),
                     best(lambda: rust_loop(tiny, n))))
    for envs in (4096,):
        g1 = sinew.Engine.from_preset("g1", num_envs=envs, backend="cpu")
        n = 2000
        rows.append((f"g1 preset {envs}x29", n, best(lambda: python_loop(g1, n)),
                     best(lambda: rust_loop(g1, n))))
    print(f"{'workload':<22} {'python µs/step':>15} {'rust µs/step':>13} {'overhead µs':>12}")
    out = []
    for name, steps, py, rs in rows:
        py_us, rs_us = py / steps * 1e6, rs / steps * 1e6
        print(f"{name:<22} {py_us:>15.2f} {rs_us:>13.2f} {py_us - rs_us:>12.2f}")
        out.append({"workload": name, "python_us": py_us, "rust_us": rs_us})
    mjlab_us = time_mjlab(2000)
    if mjlab_us is None:
        print("mjlab (with torch) not installed: mjlab's torch path not timed")
    else:
        print(f"{'mjlab 1.6.0 g1 4096x29':<22} {mjlab_us:>15.2f}")
        out.append({"workload": "mjlab g1 4096x29", "python_us": mjlab_us})
    if "--json" in sys.argv:
        print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
