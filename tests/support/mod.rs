//! Shared helpers: the backends under test, and small robot fixtures.

use std::sync::Once;

use sinew::{Backend, CpuBackend, GpuContext, Plan, WgpuBackend};

/// A constructor of one backend over a plan.
pub type MakeBackend = fn(Plan) -> Box<dyn Backend>;

/// How far an effort may be from the CPU reference: `|a − b| ≤ abs + rel·max(|a|, |b|)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerance {
    /// Absolute part, N·m.
    pub abs: f32,
    /// Relative part.
    pub rel: f32,
}

impl Tolerance {
    /// Bit-equal (the CPU backend against itself and mjlab's golden floats).
    pub const EXACT: Tolerance = Tolerance { abs: 0.0, rel: 0.0 };

    /// The GPU against the CPU reference. The WGSL is the Rust law line for
    /// line, but two things may move the last bits: a GPU compiler may fuse
    /// `kp·e + …` into an FMA (SPIR-V allows contraction and naga does not
    /// forbid it), which drops one rounding of a term as large as |kp·e|, and
    /// WGSL's f32 division is exact only to 2.5 ulp (DC motor's `v / v_max`
    /// and `effort_limit / saturation_effort`). With the tests' magnitudes
    /// (terms up to a few hundred N·m) a few ulp of a term is below 1e-4 N·m;
    /// 1e-5 relative covers the division's ulps on large outputs.
    pub const GPU: Tolerance = Tolerance {
        abs: 1e-4,
        rel: 1e-5,
    };

    /// True when `a` and `b` agree (NaN never agrees; equal infinities do).
    pub fn accepts(self, a: f32, b: f32) -> bool {
        a == b || (a - b).abs() <= self.abs + self.rel * a.abs().max(b.abs())
    }
}

/// The process's one GPU context, or `None` (with a note, once) when this
/// machine has no adapter. Under `CI=true` a missing adapter fails instead:
/// CI installs the software one, so its absence is a broken setup.
pub fn gpu() -> Option<GpuContext> {
    static NOTE: Once = Once::new();
    match GpuContext::shared() {
        Ok(ctx) => {
            NOTE.call_once(|| eprintln!("GPU tests run on {}", ctx.description()));
            Some(ctx)
        }
        Err(e) => {
            let ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
            assert!(!ci, "CI is set and there is no GPU adapter: {e}");
            NOTE.call_once(|| eprintln!("GPU tests skipped: {e}"));
            None
        }
    }
}

/// Every backend this machine can run: name, constructor, and the tolerance
/// of its efforts against the CPU reference.
pub fn backends() -> Vec<(&'static str, MakeBackend, Tolerance)> {
    let mut all: Vec<(&'static str, MakeBackend, Tolerance)> = vec![(
        "cpu",
        |plan| Box::new(CpuBackend::new(plan)),
        Tolerance::EXACT,
    )];
    if gpu().is_some() {
        all.push((
            "wgpu",
            |plan| Box::new(WgpuBackend::new(&gpu().expect("checked"), plan).expect("GPU backend")),
            Tolerance::GPU,
        ));
    }
    all
}

/// `n` joints named `j0`, `j1`, ….
pub fn joints(n: usize) -> sinew::Robot {
    sinew::Robot::from_joints((0..n).map(|i| format!("j{i}")))
}
