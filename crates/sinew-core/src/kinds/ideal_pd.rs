//! Ideal PD: mjlab's `IdealPdActuator`, Isaac Lab's `IdealPDActuator`.

use super::spec::{param_slot, Domain, Kind, LawIo, ParamSpec};
use super::CommandField;

/// `kp`, shared by every PD-family kind.
pub(crate) const STIFFNESS: ParamSpec = ParamSpec {
    name: "stiffness",
    aliases: &["kp"],
    unit: "N·m/rad",
    doc: "proportional gain",
    domain: Domain::Gain,
};
/// `kd`, shared by every PD-family kind.
pub(crate) const DAMPING: ParamSpec = ParamSpec {
    name: "damping",
    aliases: &["kd"],
    unit: "N·m·s/rad",
    doc: "derivative gain",
    domain: Domain::Gain,
};
/// The symmetric output limit, shared by every PD-family kind.
pub(crate) const EFFORT_LIMIT: ParamSpec = ParamSpec {
    name: "effort_limit",
    aliases: &["force_limit"],
    unit: "N·m",
    doc: "symmetric output limit, inf for none",
    domain: Domain::Limit,
};
/// The `ctrlrange` and `forcerange` of a kind limited to `±limit`.
pub(crate) fn symmetric_ranges(limit: f32) -> (Option<[f32; 2]>, Option<[f32; 2]>) {
    (Some([-limit, limit]), Some([-limit, limit]))
}

/// Explicit PD controller with a symmetric effort limit.
///
/// `τ = clamp(kp·(q* − q) + kd·(q̇* − q̇) + τff, −effort_limit, effort_limit)`,
/// terms added in that order in `f32` (bit-exact with mjlab 1.6.0).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IdealPdCfg {
    /// `kp` (N·m/rad or N/m). Finite, ≥ 0; no default (mjlab requires it).
    pub stiffness: f32,
    /// `kd` (N·m·s/rad or N·s/m). Finite, ≥ 0; no default.
    pub damping: f32,
    /// Output limit (N·m or N), > 0. Default `f32::INFINITY` (no limit).
    pub effort_limit: f32,
}

impl IdealPdCfg {
    /// PD gains with no effort limit.
    pub fn new(stiffness: f32, damping: f32) -> Self {
        IdealPdCfg {
            stiffness,
            damping,
            effort_limit: f32::INFINITY,
        }
    }

    /// The same gains with an effort limit.
    pub fn with_effort_limit(self, effort_limit: f32) -> Self {
        IdealPdCfg {
            effort_limit,
            ..self
        }
    }
}

impl Kind for IdealPdCfg {
    const NAME: &'static str = "IdealPd";
    const KEY: &'static str = "ideal_pd";
    const PARAMS: &'static [ParamSpec] = &[STIFFNESS, DAMPING, EFFORT_LIMIT];
    const STATE: &'static [super::StateSpec] = &[];
    const READS: &'static [CommandField] = &CommandField::ALL;
    const WGSL: &'static str = include_str!("../../../../shaders/ideal_pd.wgsl");

    fn param_value(&self, k: usize) -> f32 {
        [self.stiffness, self.damping, self.effort_limit][k]
    }

    fn example() -> Self {
        IdealPdCfg::new(25.0, 0.5).with_effort_limit(8.0)
    }

    fn ranges(&self) -> (Option<[f32; 2]>, Option<[f32; 2]>) {
        symmetric_ranges(self.effort_limit)
    }

    #[inline(always)]
    fn law<I: LawIo>(io: &mut I) -> f32 {
        Self::law_probed(io).0
    }

    /// The torque before its clamp is the probe (the compiler computes it
    /// once for both).
    #[inline(always)]
    fn law_probed<I: LawIo>(io: &mut I) -> (f32, Option<f32>) {
        const KP: usize = param_slot(IdealPdCfg::PARAMS, "stiffness");
        const KD: usize = param_slot(IdealPdCfg::PARAMS, "damping");
        const LIMIT: usize = param_slot(IdealPdCfg::PARAMS, "effort_limit");
        let (kp, kd, limit) = (io.param(KP), io.param(KD), io.param(LIMIT));
        let (pt, vt, et) = (
            io.target(CommandField::Position),
            io.target(CommandField::Velocity),
            io.target(CommandField::Effort),
        );
        let (pos, vel) = (io.pos(), io.vel());
        (
            ideal_pd_effort(kp, kd, limit, pt, pos, vt, vel, et),
            Some(pd_torque(kp, kd, pt, pos, vt, vel, et)),
        )
    }
}

/// `clip(x, lo, hi) = min(max(x, lo), hi)`, torch's `clamp`, written as two
/// selects (the WGSL twin too, since WGSL's `min`/`max`/`clamp` leave NaN
/// unspecified): when `lo > hi` the result is `hi`; a NaN `x` stays NaN.
#[inline(always)]
pub fn clip(x: f32, lo: f32, hi: f32) -> f32 {
    let y = if x < lo { lo } else { x };
    if y > hi {
        hi
    } else {
        y
    }
}

/// The unclamped PD torque, in mjlab's operation order.
#[inline(always)]
pub fn pd_torque(
    stiffness: f32,
    damping: f32,
    position_target: f32,
    pos: f32,
    velocity_target: f32,
    vel: f32,
    effort_target: f32,
) -> f32 {
    let mut tau = stiffness * (position_target - pos);
    tau += damping * (velocity_target - vel);
    tau += effort_target;
    tau
}

/// The ideal PD law for one (env, target).
#[allow(
    clippy::too_many_arguments,
    reason = "the scalar law takes each input by name, as its WGSL twin"
)]
#[inline(always)]
pub fn ideal_pd_effort(
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
    clip(tau, -effort_limit, effort_limit)
}

#[cfg(test)]
mod tests {
    use super::*;

    // mjlab tests/test_actuator.py and test_pd_actuator.py (§1.13).
    #[test]
    fn mjlab_pd_numbers() {
        // kp=50, kd=5, limit=100, target [0.1, -0.1] at rest -> [5, -5]
        assert_eq!(
            ideal_pd_effort(50.0, 5.0, 100.0, 0.1, 0.0, 0.0, 0.0, 0.0),
            5.0
        );
        assert_eq!(
            ideal_pd_effort(50.0, 5.0, 100.0, -0.1, 0.0, 0.0, 0.0, 0.0),
            -5.0
        );
        // feedforward: kp=50 at the target, effort [2, -1] -> [2, -1]
        assert_eq!(
            ideal_pd_effort(50.0, 0.0, f32::INFINITY, 0.5, 0.5, 0.0, 0.0, 2.0),
            2.0
        );
        assert_eq!(
            ideal_pd_effort(50.0, 0.0, f32::INFINITY, 0.0, 0.0, 0.0, 0.0, -1.0),
            -1.0
        );
        // clamping: kp=100, limit 5, target [1, -1] -> [5, -5]
        assert_eq!(
            ideal_pd_effort(100.0, 0.0, 5.0, 1.0, 0.0, 0.0, 0.0, 0.0),
            5.0
        );
        assert_eq!(
            ideal_pd_effort(100.0, 0.0, 5.0, -1.0, 0.0, 0.0, 0.0, 0.0),
            -5.0
        );
    }

    #[test]
    fn clamp_matches_torch_when_bounds_cross() {
        assert_eq!(clip(0.0, 2.0, 1.0), 1.0);
        assert!(clip(f32::NAN, -1.0, 1.0).is_nan());
        assert_eq!(clip(-3.0, -1.0, 1.0), -1.0);
    }
}
