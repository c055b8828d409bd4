"""What the Python binding costs per step: the same engine stepped from a
Python loop (numpy arrays, out= reused) and from a Rust loop
(Engine.time_steps), in one run. Build the extension in release first:

    .venv/bin/maturin develop --release && .venv/bin/python benches/python_step.py

With torch installed it also times mjlab 1.6.0's actuator math in torch on the
CPU (IdealPd's control law over the same G1 shapes) for comparison."""

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


def python_loop(engine: sinew.Engine, steps: int) -> float:
    args = arrays(engine)
    engine.step(**args)
    start = time.perf_counter()
    for _ in range(steps):
        engine.step(**args)
    return time.perf_counter() - start


def rust_loop(engine: sinew.Engine, steps: int) -> float:
    args = arrays(engine)
    engine.step(**args)
    return engine.time_steps(steps, **args)


def best(f, repeats: int = 5) -> float:
    return min(f() for _ in range(repeats))


def main() -> int:
    rows = []
    tiny = sinew.Engine(["j"], [sinew.Group("g", ["j"], sinew.IdealPd(stiffness=1.0,
                                                                      damping=0.1))], 1,
                        backend="cpu")
    n = 20000
    rows.append(("ideal_pd 1x1", n, best(lambda: python_loop(tiny, n)),
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
    try:
        import torch
    except ImportError:
        print("torch not installed: mjlab's torch path not timed")
    else:
        torch.set_num_threads(2)
        E, T = 4096, 29
        kp, kd, lim = (torch.full((E, T), v) for v in (40.0, 1.0, 25.0))
        pt, vt, et, q, qd = (torch.zeros(E, T) for _ in range(5))

        def torch_loop() -> float:
            start = time.perf_counter()
            for _ in range(2000):
                tau = kp * (pt - q)  # mjlab's pd_torque and clamp, as IdealPd runs them
                tau += kd * (vt - qd)
                tau += et
                torch.clamp(tau, -lim, lim)
            return time.perf_counter() - start

        t = best(torch_loop) / 2000 * 1e6
        print(f"{'torch ideal_pd 4096x29':<22} {t:>15.2f}")
        out.append({"workload": "torch ideal_pd 4096x29", "python_us": t})
    if "--json" in sys.argv:
        print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
