// Ideal PD. Twin of crates/sinew-core/src/kinds/ideal_pd.rs.

// torch's clamp as two selects: lo > hi gives hi, a NaN x stays NaN.
fn clip(x: f32, lo: f32, hi: f32) -> f32 {
    let y = select(x, lo, x < lo);
    return select(y, hi, y > hi);
}

// The unclamped PD torque, in mjlab's operation order.
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

fn ideal_pd_effort(
    stiffness: f32,
    damping: f32,
    effort_limit: f32,
    position_target: f32,
    pos: f32,
    velocity_target: f32,
    vel: f32,
    effort_target: f32,
) -> f32 {
    let tau = pd_torque(
        stiffness,
        damping,
        position_target,
        pos,
        velocity_target,
        vel,
        effort_target,
    );
    return clip(tau, -effort_limit, effort_limit);
}
