"""The Unitree G1 preset stepped from torch CPU tensors: Sinew reads them and
writes ctrl in place (through Tensor.numpy(), the same memory), with no copy.
Needs torch (pip install torch).

    python examples/python/g1_torch.py
"""

import os

import torch

import sinew

E = int(os.environ.get("SINEW_EXAMPLE_ENVS", 1024))
engine = sinew.Engine.from_preset("g1", num_envs=E, backend="cpu")
T = engine.num_targets
q = torch.zeros(E, T)
qd = torch.zeros(E, T)
target = torch.zeros(E, T)
ctrl = torch.empty(E, engine.num_ctrl)  # written in place every step
column = torch.tensor([c.column for c in engine.ctrl_columns()])

for step in range(200):
    with torch.no_grad():
        target.copy_(0.2 * torch.sin(torch.arange(T) + 0.05 * step).expand(E, T))
    engine.step(position_target=target, pos=q, vel=qd, out=ctrl)
    qd[:, column] += 0.005 * ctrl / 0.5
    q += 0.005 * qd
    if step == 100:  # randomize gains of a few envs, as mjlab's dr.pd_gains does
        envs = torch.tensor([0, 5, 9])
        group = engine.groups()[0].name
        engine.set_gains(group, kp=torch.tensor([30.0, 40.0, 50.0]), env_ids=envs)

print(engine)
print("ctrl[0, :6] =", ctrl[0, :6].tolist())
print("non-finite envs:", engine.nonfinite_envs().tolist())
