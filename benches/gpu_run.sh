#!/usr/bin/env bash
# The GPU measurement set in one go, for a machine with a real GPU: the
# integration tests, the step as one dispatch and as two side by side
# (alternating, two rounds, at 4096 and 65536 envs), `sinew bench --backend
# all`, and the scenario files on the GPU.
#   benches/gpu_run.sh SINEW INTEGRATION OUT
# SINEW: a release `sinew`; INTEGRATION: the integration test binary
# (`cargo test --release --test integration --no-run` prints its path); OUT:
# a folder, which gets one log (gpu_run.log) and bench --backend all's JSON.
# Run from the project root (the scenario files are in benches/). A part that
# fails or runs past its limit is noted in the log and the rest still run,
# most needed first; none starts after DEADLINE seconds (default 540, under
# a 600-second limit on the command), and none runs past it.
set -uo pipefail
sinew=$1 tests=$2 out=$3
deadline=${DEADLINE:-540}
mkdir -p "$out"
log="$out/gpu_run.log"
: > "$log"
part() {
  local limit=$1
  shift
  local left=$((deadline - SECONDS))
  if [ "$left" -lt 20 ]; then
    echo "== skipped (deadline): $*" >> "$log"
    return
  fi
  [ "$limit" -gt "$left" ] && limit=$left
  echo "== $*" >> "$log"
  local start=$SECONDS
  timeout "$limit" "$@" >> "$log" 2>&1
  echo "== rc $?, $((SECONDS - start)) s" >> "$log"
}
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv 2>&1
} >> "$log"
part 120 "$tests"
kinds=pd,dc,delayed_dc,delay_dc,passthrough,mujoco,mj_dcmotor,servo,muscle_pair,learned_mlp
for round in 1 2; do
  for dispatches in two one; do
    part 90 "$sinew" bench --backend wgpu --kinds "$kinds" --envs 4096,65536 \
      --gpu-dispatches "$dispatches"
  done
done
part 150 "$sinew" bench --backend all --json "$out/bench_all.json"
for f in panda mujoco_beside_pid mujoco_site g1_five_laws g1_mjlab_force go1_dc_pd spot_isaaclab; do
  part 40 "$sinew" bench --backend wgpu --scenario "benches/$f.toml" --envs 4096,65536
done
