// Index helpers and the counter-based lag RNG.
// Twin of `hash_u32`, `rng_u32` and `rng_unit` in crates/sinew-core/src/delay.rs:
// wrapping 32-bit integer operations only, so both sides draw the same bits.

// Threads per workgroup of every kernel (sinew_wgpu::WORKGROUP_SIZE).
const WORKGROUP_SIZE: u32 = 64u;

// A thread's index in a dispatch that may spill from x into y, since one
// dimension holds at most 65535 workgroups.
fn thread_index(gid: vec3<u32>, num_workgroups: vec3<u32>) -> u32 {
    return gid.y * num_workgroups.x * WORKGROUP_SIZE + gid.x;
}

// 1 when `x` is NaN or ±inf (all exponent bits set), tested on the bits so
// that no fast-math assumption about NaN can remove the test.
fn nonfinite_bits(x: f32) -> u32 {
    return u32((bitcast<u32>(x) & 0x7f800000u) == 0x7f800000u);
}

// Wellons' lowbias32 finalizer.
fn hash_u32(x0: u32) -> u32 {
    var x = x0;
    x ^= x >> 16u;
    x *= 0x7feb352du;
    x ^= x >> 15u;
    x *= 0x846ca68bu;
    x ^= x >> 16u;
    return x;
}

// A uniform u32 for (seed, stream, env, counter), with no state.
fn rng_u32(seed: u32, stream: u32, env: u32, counter: u32) -> u32 {
    var h = hash_u32(seed ^ 0x9e3779b9u);
    h = hash_u32(h ^ stream);
    h = hash_u32(h ^ env);
    return hash_u32(h ^ counter);
}

// A uniform f32 in [0, 1) with 24 random bits.
fn rng_unit(seed: u32, stream: u32, env: u32, counter: u32) -> f32 {
    return f32(rng_u32(seed, stream, env, counter) >> 8u) * (1.0 / 16777216.0);
}

// torch's clamp as two selects: lo > hi gives hi, a NaN x stays NaN
// (twin of `clip` in crates/sinew-core/src/kinds/ideal_pd.rs).
fn clip(x: f32, lo: f32, hi: f32) -> f32 {
    let y = select(x, lo, x < lo);
    return select(y, hi, y > hi);
}

// The unclamped PD torque, in mjlab's operation order (twin of `pd_torque`).
fn pd_torque(
    stiffness: f32,
    damping: f32,
    position_target: f32,
    pos: f32,
    velocity_target: f32,
    vel: f32,
    effort_target: f32,
) -> f32 {
    var tau = stiffness * (position_target - pos);
    tau += damping * (velocity_target - vel);
    tau += effort_target;
    return tau;
}
