// Pass-through kinds (builtin position/velocity/motor/muscle and wrapped
// actuators): the column's (delayed) command field. Twin of `pass_through`
// and the kinds' laws in crates/sinew-core/src/kinds/builtin.rs and wrapped.rs.

fn pass_through(command: f32) -> f32 {
    return command;
}

fn forward() -> f32 {
    return pass_through(io_target(io_field()));
}

fn builtin_position_law() -> f32 {
    return forward();
}

fn builtin_velocity_law() -> f32 {
    return forward();
}

fn builtin_motor_law() -> f32 {
    return forward();
}

fn builtin_muscle_law() -> f32 {
    return forward();
}

fn wrapped_law() -> f32 {
    return forward();
}
