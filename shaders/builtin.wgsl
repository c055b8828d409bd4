// Pass-through (builtin position/velocity/motor/muscle and wrapped actuators).
// Twin of `pass_through` in crates/sinew-core/src/kinds/builtin.rs.

fn pass_through(command: f32) -> f32 {
    return command;
}
