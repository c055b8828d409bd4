#!/usr/bin/env bash
# Log-level cross-validation of `sinew fit` on the 12 real XL-330 logs:
# for each model, 4 folds (fold k holds out logs k, k+4, k+8 of the sorted
# list, so each fold holds out one log per kp group mix), fit on the other 9
# from BAM's own starting point, and compare the held-out RMSE with BAM's
# shipped fit of the same model on the same logs (tests/golden/bam/rollouts.json).
# Usage: benches/fit_cv.sh [OUT_DIR] [MODELS...]   (default: target/fit-cv m1 m6)
# Extra sinew fit flags can be passed in FIT_FLAGS (e.g. FIT_FLAGS="--budget 5000").
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-target/fit-cv}"
shift || true
models=("${@:-m1 m6}")
models=(${models[@]})
cargo build --release -q -p sinew-cli
logs=(data/bam-xl330/2026-*.json)
for model in "${models[@]}"; do
    for fold in 0 1 2 3; do
        fit=() held=()
        for i in "${!logs[@]}"; do
            if (( i % 4 == fold )); then held+=("${logs[$i]}"); else fit+=("${logs[$i]}"); fi
        done
        target/release/sinew fit "${fit[@]}" --servo xl330 --model "$model" --backend cpu \
            ${FIT_FLAGS:-} --validate "${held[@]}" --out "$out/$model/fold$fold.json" \
            | grep -E 'evaluations in|mean'
    done
done
python3 - "$out" "${models[@]}" <<'PY'
import json, sys, os
out, models = sys.argv[1], sys.argv[2:]
golden = json.load(open("tests/golden/bam/rollouts.json"))
shipped = {(os.path.basename(r["log"]).removesuffix(".json"), r["fit"]): r for r in golden["rollouts"]}
print("| model | fold | held-out logs | shipped fit: mean RMSE / MAE (mrad) | sinew fit: mean RMSE / MAE (mrad) | fit loss on its 9 logs (mrad) | evaluations | wall (s) |")
print("|---|---|---|---:|---:|---:|---:|---:|")
for model in models:
    tot = {"s_rmse": 0, "s_mae": 0, "f_rmse": 0, "f_mae": 0, "n": 0}
    for fold in range(4):
        rep = json.load(open(f"{out}/{model}/fold{fold}.report.json"))
        held = [l for l in rep["logs"] if l["split"] == "held_out"]
        names = [os.path.basename(l["log"]).removesuffix(".json") for l in held]
        s = [shipped[(n, model)] for n in names]
        sr = sum(x["rmse"] for x in s) / len(s) * 1e3
        sm = sum(x["mae"] for x in s) / len(s) * 1e3
        fr = sum(l["after"]["rmse"] for l in held) / len(held) * 1e3
        fm = sum(l["after"]["mae"] for l in held) / len(held) * 1e3
        for k, v in (("s_rmse", sr), ("s_mae", sm), ("f_rmse", fr), ("f_mae", fm)):
            tot[k] += v * len(held)
        tot["n"] += len(held)
        short = ", ".join(n.split("_")[1] for n in names)
        print(f"| {model} | {fold} | {short} | {sr:.1f} / {sm:.1f} | {fr:.1f} / {fm:.1f} | {rep['loss']*1e3:.1f} | {rep['evaluations']} | {rep['seconds']:.1f} |")
    n = tot["n"]
    print(f"| {model} | all 12 held out once | | **{tot['s_rmse']/n:.1f} / {tot['s_mae']/n:.1f}** | **{tot['f_rmse']/n:.1f} / {tot['f_mae']/n:.1f}** | | | |")
PY
