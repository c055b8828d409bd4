// Remotized PD (Isaac Lab's RemotizedPDActuator). Twin of
// crates/sinew-core/src/kinds/remotized_pd.rs.

// Isaac Lab's LinearInterpolation at q over the group's table, in
// `lookup_data`'s layout: a header of 5 (the row count second), the k angles,
// 2 of +inf, the k max torques, then buckets the CPU's search reads (twin of
// `lookup_limit`). Each thread bisects: n is the same count either way, and
// the bucket of q would have to round as the CPU's does.
const REMOTIZED_PD_ANGLES: u32 = 5u;
fn remotized_pd_limit(q: f32) -> f32 {
    let k = u32(io_data(1u));
    let torques = REMOTIZED_PD_ANGLES + k + 2u;
    // n = #{angle_i < q}: the angles ascend, so bisect.
    var lo = 0u;
    var hi = k;
    while lo < hi {
        let mid = (lo + hi) / 2u;
        if io_data(REMOTIZED_PD_ANGLES + mid) < q {
            lo = mid + 1u;
        } else {
            hi = mid;
        }
    }
    let a = select(lo - 1u, 0u, lo == 0u);
    let b = min(lo, k - 1u);
    let xa = io_data(REMOTIZED_PD_ANGLES + a);
    let xb = io_data(REMOTIZED_PD_ANGLES + b);
    let ya = io_data(torques + a);
    let yb = io_data(torques + b);
    let w = select(fdiv(q - xa, xb - xa), 0.0, a == b);
    return ya + w * (yb - ya);
}

// The kind's law (twin of `<RemotizedPdCfg as Kind>::law`).
fn remotized_pd_law() -> f32 {
    let tau = pd_torque(
        io_param(REMOTIZED_PD_STIFFNESS),
        io_param(REMOTIZED_PD_DAMPING),
        io_target(FIELD_POSITION),
        io_pos(),
        io_target(FIELD_VELOCITY),
        io_vel(),
        io_target(FIELD_EFFORT),
    );
    let limit = remotized_pd_limit(io_pos());
    return clip(tau, -limit, limit);
}
