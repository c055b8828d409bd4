"""What Isaac Lab's ActuatorNetLSTM costs per step in torch, for comparison with
`sinew bench --backend cpu --kinds learned_lstm`: 4096 envs x 12 joints (or
E and J from the command line), the ANYdrive net's shape (2 inputs, 2 LSTM
layers of 32, a Linear head; TorchScript, as Isaac Lab loads it), on the CPU
with 2 threads. The compute path mirrors Isaac Lab's `ActuatorNetLSTM.compute`:
the input frame, the network with its carried hidden and cell states, the DC
clip of `DCMotor`.

    pip install torch
    python3 benches/torch_learned_lstm.py [E J]
"""
import sys, time, torch
torch.set_num_threads(2)
E, J = (int(sys.argv[1]), int(sys.argv[2])) if len(sys.argv) > 2 else (4096, 12)
H = 32

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(2, H, 2, batch_first=True)
        self.linear = torch.nn.Linear(H, 1)
    def forward(self, x, hc: tuple[torch.Tensor, torch.Tensor]):
        y, (h, c) = self.lstm(x, hc)
        return self.linear(y[:, -1, :]), (h, c)

net = torch.jit.script(Net().eval())
x = torch.zeros(E * J, 1, 2)
h = torch.zeros(2, E * J, H); c = torch.zeros(2, E * J, H)
pt = torch.rand(E, J); q = torch.rand(E, J); qd = torch.rand(E, J)
sat, vlim, fl = torch.full((E, J), 120.0), torch.full((E, J), 7.5), torch.full((E, J), 80.0)
def step():
    x[:, 0, 0] = (pt - q).flatten()
    x[:, 0, 1] = qd.flatten()
    y, (h1, c1) = net(x, (h, c))
    h[:] = h1; c[:] = c1
    vc = vlim * (1 + fl / sat)
    v = torch.clip(qd, -vc, vc)
    top = torch.clip(sat * (1 - v / vlim), max=fl)
    bot = torch.clip(sat * (-1 - v / vlim), min=-fl)
    return torch.clip(y.reshape(E, J), min=bot, max=top)
with torch.inference_mode():
    for f, name in [(step, "Isaac Lab compute path"), (lambda: net(x, (h, c)), "network forward only")]:
        for _ in range(5): f()
        n = 20; t = time.perf_counter()
        for _ in range(n): f()
        print(f"{name}: {(time.perf_counter()-t)/n*1e3:.3f} ms/step ({E} x {J}, torch {torch.__version__}, {torch.get_num_threads()} threads)")
