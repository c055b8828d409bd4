// Ideal PD. Twin of crates/sinew-core/src/kinds/ideal_pd.rs.

// The kind's law (twin of `<IdealPdCfg as Kind>::law`).
fn ideal_pd_law() -> f32 {
    return ideal_pd_effort(
        io_param(IDEAL_PD_STIFFNESS),
        io_param(IDEAL_PD_DAMPING),
        io_param(IDEAL_PD_EFFORT_LIMIT),
        io_target(FIELD_POSITION),
        io_pos(),
        io_target(FIELD_VELOCITY),
        io_vel(),
        io_target(FIELD_EFFORT),
    );
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
