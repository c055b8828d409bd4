#!/usr/bin/env python3
"""The peer of `sinew bench --kinds muscle_pair --targets 44`: one MIMo muscle
update (activation step, fibre lengths, FL/FV/FP, joint torque) written in
numpy from reference/actuator-math.md Part 4, timed two ways:

- per env, as MIMo's MuscleModel runs it: arrays of the 88 muscles of one env,
  one call per env (µs per env-update, then × envs);
- vectorized over envs: (envs, 88) arrays, one call per step.

This is our own numpy code following MIMo's operations, not MIMo's (MIMo is not
installable here); MIMo's update also writes MuJoCo's gear and reads qpos/qvel
through index arrays, which this leaves out, so its own time per env is higher.

Usage: python3 benches/mimo_numpy.py [ENVS ...]   (needs numpy; default 1024 4096 16384 65536)
"""
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
LMIN, LMAX, FVMAX, FPMAX, LCE_MIN, LCE_MAX, TAU, EPS = 0.5, 1.6, 1.2, 1.3, 0.75, 1.05, 0.01, 1e-10


def bump(L, a, mid, b):
    left, right = 0.5 * (a + mid), 0.5 * (mid + b)
    out = np.zeros_like(L)
    m = (L > a) & (L < left)
    out[m] = (L[m] - a) * (L[m] - a) * 0.5 / ((left - a) * (left - a))
    m = (L >= left) & (L < mid)
    out[m] = 1 - (L[m] - mid) * (L[m] - mid) * 0.5 / ((mid - left) * (mid - left))
    m = (L >= mid) & (L < right)
    out[m] = 1 - (L[m] - mid) * (L[m] - mid) * 0.5 / ((right - mid) * (right - mid))
    m = (L >= right) & (L < b)
    out[m] = (L[m] - b) * (L[m] - b) * 0.5 / ((b - right) * (b - right))
    return out


def fl(L):
    return bump(L, LMIN, 1.0, LMAX) + 0.15 * bump(L, LMIN, 0.5 * (LMIN + 0.95), 0.95)


def fv(v):
    c = FVMAX - 1.0
    return np.where(v <= -1, 0.0, np.where(v <= 0, (v + 1) ** 2, np.where(v <= c, FVMAX - (c - v) ** 2 / c, FVMAX)))


def fp(L):
    b = 0.5 * (LMAX + 1)
    return np.where(L <= 1, 0.0, np.where(L <= b, 0.25 * FPMAX * ((L - 1) / (b - 1)) ** 3, 0.25 * FPMAX * (1 + 3 * (L - b) / (b - 1))))


def main():
    envs_list = [int(a) for a in sys.argv[1:]] or [1024, 4096, 16384, 65536]
    doc = json.load(open(os.path.join(HERE, "..", "tests", "golden", "mimo", "muscle_single.json")))
    acts = doc["actuators"]
    n = len(acts)
    lo = np.array([a["jnt_range"][0] for a in acts])
    hi = np.array([a["jnt_range"][1] for a in acts])
    qs = np.array([a["qpos_spring"] for a in acts])
    vmax = np.tile(np.array([a["user"][0] for a in acts]), 2)
    fmax = np.concatenate([[a["user"][1] for a in acts], [a["user"][2] for a in acts]])
    phi_min, phi_max = lo - qs, hi - qs
    m1 = (LCE_MAX - LCE_MIN + EPS) / (phi_max - phi_min + EPS)
    m2 = (LCE_MAX - LCE_MIN + EPS) / (phi_min - phi_max - EPS)
    moment = np.concatenate([m1, m2])
    ref = np.concatenate([LCE_MIN - m1 * phi_min, LCE_MIN - m2 * phi_max])
    h = 0.005
    rng = np.random.default_rng(0)

    def update(act, target, q, dq):
        act = np.clip(act + (h * (target - act)) / TAU, 0, 1)
        qq = np.concatenate([q - qs, q - qs], axis=-1)
        lce = qq * moment + ref
        lce_dot = moment * np.concatenate([dq, dq], axis=-1)
        force = fl(lce) * fv(lce_dot / vmax) * act + fp(lce)
        mf = moment * force * fmax
        return act, -(mf[..., :n] + mf[..., n:])

    print("| envs | per env (MIMo's way): ms/step | vectorized over envs: ms/step |")
    print("|---:|---:|---:|")
    for envs in envs_list:
        q = rng.uniform(lo, hi, size=(envs, n))
        dq = rng.uniform(-2, 2, size=(envs, n))
        target = rng.uniform(0, 1, size=(envs, 2 * n))
        act = np.zeros((envs, 2 * n))
        # Per env: time a sample of envs and scale (the loop is linear in envs).
        sample = min(envs, 256)
        t0 = time.perf_counter()
        for e in range(sample):
            update(act[e], target[e], q[e], dq[e])
        per_env = (time.perf_counter() - t0) / sample * envs
        reps = 5
        t0 = time.perf_counter()
        for _ in range(reps):
            act, tau = update(act, target, q, dq)
        vec = (time.perf_counter() - t0) / reps
        print(f"| {envs} | {per_env * 1e3:.1f} | {vec * 1e3:.1f} |")


if __name__ == "__main__":
    main()
