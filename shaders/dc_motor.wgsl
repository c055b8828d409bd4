// DC motor. Twin of crates/sinew-core/src/kinds/dc_motor.rs.

fn dc_motor_clip(
    tau: f32,
    saturation_effort: f32,
    velocity_limit: f32,
    effort_limit: f32,
    vel: f32,
) -> f32 {
    // `fdiv`: the CPU's quotients (NVIDIA's `/` put Isaac Lab's −60 at
    // −59.999977); `v / velocity_limit` once for both bounds.
    let v_corner = velocity_limit * (1.0 + fdiv(effort_limit, saturation_effort));
    let v = clip(vel, -v_corner, v_corner);
    let ratio = fdiv(v, velocity_limit);
    let top = saturation_effort * (1.0 - ratio);
    let bot = saturation_effort * (-1.0 - ratio);
    let max_effort = select(top, effort_limit, effort_limit < top);
    let min_effort = select(bot, -effort_limit, bot < -effort_limit);
    return clip(tau, min_effort, max_effort);
}

fn dc_motor_effort(
    stiffness: f32,
    damping: f32,
    effort_limit: f32,
    saturation_effort: f32,
    velocity_limit: f32,
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
    return dc_motor_clip(tau, saturation_effort, velocity_limit, effort_limit, vel);
}

// The kind's law (twin of `<DcMotorCfg as Kind>::law`).
fn dc_motor_law() -> f32 {
    return dc_motor_effort(
        io_param(DC_MOTOR_STIFFNESS),
        io_param(DC_MOTOR_DAMPING),
        io_param(DC_MOTOR_EFFORT_LIMIT),
        io_param(DC_MOTOR_SATURATION_EFFORT),
        io_param(DC_MOTOR_VELOCITY_LIMIT),
        io_target(FIELD_POSITION),
        io_pos(),
        io_target(FIELD_VELOCITY),
        io_vel(),
        io_target(FIELD_EFFORT),
    );
}
