//! Shared helpers: the backends under test, and small robot fixtures.

use sinew::{Backend, CpuBackend, Plan};

/// A constructor of one backend over a plan.
pub type MakeBackend = fn(Plan) -> Box<dyn Backend>;

/// Every backend this build can run, by name.
pub fn backends() -> Vec<(&'static str, MakeBackend)> {
    vec![("cpu", |plan| Box::new(CpuBackend::new(plan)))]
}

/// `n` joints named `j0`, `j1`, ….
pub fn joints(n: usize) -> sinew::Robot {
    sinew::Robot::from_joints((0..n).map(|i| format!("j{i}")))
}
