"""What mjlab's LearnedMlpActuator costs per step in torch, for comparison with
`cargo bench --bench step -- step/learned_mlp`: 4096 envs x 12 joints, a
6-32-32-1 softsign MLP (TorchScript, as mjlab loads it), history 3, on the CPU
with 2 threads. The compute path mirrors mjlab 1.6.0's: append to the two
histories, stack the taps, scale, run the network, scale, DC clip.

    pip install torch
    python3 benches/torch_learned_mlp.py
"""
import time, torch
torch.set_num_threads(2)
E, J, H = 4096, 12, 3
net = torch.nn.Sequential(torch.nn.Linear(6,32), torch.nn.Softsign(), torch.nn.Linear(32,32), torch.nn.Softsign(), torch.nn.Linear(32,1)).eval()
net = torch.jit.script(net)
pos_hist = torch.zeros(H, E, J); vel_hist = torch.zeros(H, E, J)
pt = torch.rand(E, J); q = torch.rand(E, J); qd = torch.rand(E, J)
sat, vlim, fl = torch.full((E,J),23.7), torch.full((E,J),30.0), torch.full((E,J),23.7)
ptr = [0]
def step():
    # mjlab LearnedMlpActuator.compute: append, gather H taps, cat, net, scale, DC clip
    ptr[0] = (ptr[0] + 1) % H
    pos_hist[ptr[0]] = pt - q; vel_hist[ptr[0]] = qd
    idx = [(ptr[0] - k) % H for k in range(H)]
    pos_in = torch.stack([pos_hist[i] for i in idx], dim=2).reshape(E*J, H)
    vel_in = torch.stack([vel_hist[i] for i in idx], dim=2).reshape(E*J, H)
    x = torch.cat([pos_in * -1.0, vel_in * 1.0], dim=1)
    with torch.inference_mode():
        y = net(x).reshape(E, J) * 1.0
    vc = vlim * (1 + fl / sat)
    v = torch.clip(qd, -vc, vc)
    top = torch.clip(sat * (1 - v / vlim), max=fl)
    bot = torch.clip(sat * (-1 - v / vlim), min=-fl)
    return torch.clip(y, min=bot, max=top)
x = torch.rand(E*J, 6)
for f, name in [(step, "mjlab compute path"), (lambda: net(x), "network forward only")]:
    for _ in range(20): f()
    n = 200; t = time.perf_counter()
    with torch.inference_mode():
        for _ in range(n): f()
    print(f"{name}: {(time.perf_counter()-t)/n*1e3:.3f} ms/step (torch {torch.__version__}, {torch.get_num_threads()} threads)")
