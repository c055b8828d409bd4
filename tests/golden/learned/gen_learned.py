"""Reference episodes for Isaac Lab's learned actuators, made with torch.

Writes, next to this script:
  mlp.safetensors   a 6-16-16-1 softsign MLP (the walk-these-ways shape)
  lstm.safetensors  a 2-layer LSTM (2 -> 8) with a Linear(8 -> 1) head
  cases.json        episodes: commands, resets, and the efforts torch gives

The semantics replayed are Isaac Lab's ActuatorNetMLP (history taps
`input_idx`, zero-initialized history, rows env*J + joint) and
ActuatorNetLSTM (input [q* - q, qd], hidden and cell state per (env, joint)
zeroed on reset), each followed by the DC motor clip. The weights are saved
the way the README tells users to: `save_file(net.state_dict(), ...)`.

    pip install torch safetensors numpy
    python3 tests/golden/learned/gen_learned.py
"""

import json
import os

import torch
from safetensors.torch import save_file

HERE = os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(7)
E, J, STEPS = 3, 2, 14
EFFORT_LIMIT, SATURATION, VELOCITY_LIMIT = 8.0, 12.0, 6.0


def dc_clip(effort, vel):
    vc = VELOCITY_LIMIT * (1.0 + EFFORT_LIMIT / SATURATION)
    v = torch.clip(vel, -vc, vc)
    top = torch.clip(SATURATION * (1.0 - v / VELOCITY_LIMIT), max=EFFORT_LIMIT)
    bot = torch.clip(SATURATION * (-1.0 - v / VELOCITY_LIMIT), min=-EFFORT_LIMIT)
    return torch.clip(effort, min=bot, max=top)


def episode(resets):
    """Random commands; `resets` maps a step to the envs reset before it."""
    steps = []
    for k in range(STEPS):
        steps.append(
            {
                "reset": resets.get(k, []),
                "position_target": (torch.rand(E, J) * 2 - 1).tolist(),
                "pos": (torch.rand(E, J) * 2 - 1).tolist(),
                "vel": (torch.rand(E, J) * 16 - 8).tolist(),
            }
        )
    return steps


def f32(rows):
    return torch.tensor(rows, dtype=torch.float32)


def mlp_case():
    net = torch.nn.Sequential(
        torch.nn.Linear(6, 16), torch.nn.Softsign(),
        torch.nn.Linear(16, 16), torch.nn.Softsign(),
        torch.nn.Linear(16, 1),
    ).eval()
    save_file(net.state_dict(), os.path.join(HERE, "mlp.safetensors"),
              metadata={"activations": "softsign,softsign,identity"})
    taps, pos_scale, vel_scale, torque_scale = [0, 2, 4], -1.0, 0.2, 5.0
    steps = episode({6: [1], 10: [0, 2]})
    history = max(taps) + 1
    err_hist = torch.zeros(E, history, J)
    vel_hist = torch.zeros(E, history, J)
    for s in steps:
        for env in s["reset"]:
            err_hist[env] = 0.0
            vel_hist[env] = 0.0
        pt, q, qd = f32(s["position_target"]), f32(s["pos"]), f32(s["vel"])
        err_hist = err_hist.roll(1, 1)
        err_hist[:, 0] = pt - q
        vel_hist = vel_hist.roll(1, 1)
        vel_hist[:, 0] = qd
        pos_in = torch.cat([err_hist[:, i].unsqueeze(2) for i in taps], dim=2).view(E * J, -1)
        vel_in = torch.cat([vel_hist[:, i].unsqueeze(2) for i in taps], dim=2).view(E * J, -1)
        x = torch.cat([pos_in * pos_scale, vel_in * vel_scale], dim=1)
        with torch.inference_mode():
            y = net(x).view(E, J) * torque_scale
        s["expected"] = dc_clip(y, qd).tolist()
    return {
        "id": "isaac_mlp", "kind": "mlp", "network": "mlp.safetensors",
        "taps": taps, "pos_scale": pos_scale, "vel_scale": vel_scale,
        "torque_scale": torque_scale, "input_order": "pos_vel", "history_init": "zeros",
        "steps": steps,
    }


class LstmNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(2, 8, num_layers=2, batch_first=True)
        self.head = torch.nn.Linear(8, 1)

    def forward(self, x, hc):
        y, hc = self.lstm(x, hc)
        return self.head(y[:, -1]), hc


def lstm_case():
    net = LstmNet().eval()
    with torch.no_grad():
        for p in net.parameters():
            p.mul_(3.0)  # beyond torch's small init, so the gates saturate now and then
    save_file(net.state_dict(), os.path.join(HERE, "lstm.safetensors"))
    steps = episode({5: [0], 9: [1, 2]})
    h = torch.zeros(2, E * J, 8)
    c = torch.zeros(2, E * J, 8)
    for s in steps:
        for env in s["reset"]:
            h[:, env * J:(env + 1) * J] = 0.0
            c[:, env * J:(env + 1) * J] = 0.0
        pt, q, qd = f32(s["position_target"]), f32(s["pos"]), f32(s["vel"])
        x = torch.stack([(pt - q).flatten(), qd.flatten()], dim=1).unsqueeze(1)
        with torch.no_grad():
            y, (h, c) = net(x, (h, c))
        s["expected"] = dc_clip(y.view(E, J), qd).tolist()
    return {"id": "isaac_lstm", "kind": "lstm", "network": "lstm.safetensors", "steps": steps}


def main():
    doc = {
        "schema": "sinew-learned-golden/v1",
        "torch_version": torch.__version__,
        "num_envs": E, "num_joints": J,
        "effort_limit": EFFORT_LIMIT, "saturation_effort": SATURATION,
        "velocity_limit": VELOCITY_LIMIT,
        "cases": [mlp_case(), lstm_case()],
    }
    with open(os.path.join(HERE, "cases.json"), "w") as f:
        json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()
