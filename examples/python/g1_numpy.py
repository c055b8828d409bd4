"""The Unitree G1 preset (29 joints) at 4096 envs stepped from numpy: a toy
policy and a toy integrator stand in for yours. Every step reads the arrays in
place and writes ctrl into one preallocated array.

    pip install .   (or ./test.sh, which builds into .venv)
    python examples/python/g1_numpy.py
"""

import os
import time

import numpy as np

import sinew

E, DT = int(os.environ.get("SINEW_EXAMPLE_ENVS", 4096)), 0.005
engine = sinew.Engine.from_preset("g1", num_envs=E)
print(engine)
print("groups:", ", ".join(f"{g.name} ({g.kind}, {len(g.targets)} joints)" for g in engine.groups()))

rng = np.random.default_rng(0)
q = rng.uniform(-0.1, 0.1, (E, engine.num_targets)).astype(np.float32)
qd = np.zeros_like(q)
action = np.zeros_like(q)
ctrl = np.empty((E, engine.num_ctrl), dtype=np.float32)
# ctrl columns follow the plan's order; map them back to command columns once.
column = np.array([c.column for c in engine.ctrl_columns()])

start = time.perf_counter()
for step in range(500):
    if step % 4 == 0:  # the policy runs every 4 physics steps
        action[:] = 0.3 * np.sin(0.01 * step + np.arange(engine.num_targets, dtype=np.float32))
    engine.step(position_target=action, pos=q, vel=qd, out=ctrl)
    qd[:, column] += DT * ctrl / 0.5  # a unit-ish inertia per joint
    q += DT * qd
    if step == 250:  # episodes end for a tenth of the envs: reset and randomize their gains
        done = np.arange(0, E, 10)
        engine.reset(done)
        for g in engine.groups():
            if "stiffness" in g.params:
                kp = engine.read_param(g.name, "stiffness")[done]
                engine.set_param(g.name, "stiffness", kp * rng.uniform(0.8, 1.2, (done.size, 1)),
                                 env_ids=done)
elapsed = time.perf_counter() - start
print(f"500 steps in {elapsed:.3f} s ({500 / elapsed:.0f} steps/s, "
      f"{500 * E / elapsed / 1e6:.1f} M env-steps/s, toy physics included)")
print("max |ctrl|:", float(np.abs(ctrl).max()), "non-finite envs:", engine.nonfinite_envs().size)
