// The delay stage's per-env ring arithmetic.
// Twin of `DelayParams::{push, update_lag, read_slot}` in
// crates/sinew-core/src/delay.rs. Resets happen on the host (`Plan::reset_env`)
// and are written into the state buffer, so there is no WGSL reset.

// `DelayState` (repr(C)): per-env integer state of one delay buffer.
struct DelayState {
    head: u32,
    pushes: u32,
    lag: u32,
    step_count: u32,
    phase: u32,
}

// `DelayParams` (repr(C)): a delay buffer's settings.
struct DelayParams {
    min_lag: u32,
    max_lag: u32,
    len: u32,
    update_period: u32,
    per_env_phase: u32,
    on_reset: u32,
    stream: u32,
    hold_prob: f32,
}

// RNG streams per buffer, as `STREAMS` and the `STREAM_*` constants.
const STREAMS: u32 = 4u;
const STREAM_CANDIDATE: u32 = 0u;
const STREAM_HOLD: u32 = 1u;

fn draw_lag(p: DelayParams, seed: u32, purpose: u32, env: u32, step: u32) -> u32 {
    let range = p.max_lag - p.min_lag + 1u;
    return p.min_lag + rng_u32(seed, p.stream + purpose, env, step) % range;
}

// Advances the ring for one push and returns the slot to write (the new
// head). The first push after a reset writes slot 0 alone: `read_slot`
// never reaches back past the frames pushed since, which is what filling
// every slot with the first frame would give.
fn push(p: DelayParams, state: ptr<function, DelayState>) -> u32 {
    let first = (*state).pushes == 0u;
    (*state).head = select(((*state).head + 1u) % p.len, 0u, first);
    (*state).pushes = select(p.len, (*state).pushes + 1u, (*state).pushes < p.len);
    return (*state).head;
}

fn update_lag(p: DelayParams, state: ptr<function, DelayState>, seed: u32, env: u32, step: u32) {
    if p.on_reset == 0u {
        let due = p.update_period == 0u
            || ((*state).step_count + (*state).phase) % p.update_period == 0u;
        let candidate = draw_lag(p, seed, STREAM_CANDIDATE, env, step);
        let take = rng_unit(seed, p.stream + STREAM_HOLD, env, step) >= p.hold_prob;
        if due && take {
            (*state).lag = candidate;
        }
    }
    (*state).step_count = (*state).step_count + 1u;
}

fn read_slot(p: DelayParams, state: DelayState) -> u32 {
    let stored = select(0u, state.pushes - 1u, state.pushes > 0u);
    let back = select(stored, state.lag, state.lag < stored);
    return (state.head + p.len - back) % p.len;
}
