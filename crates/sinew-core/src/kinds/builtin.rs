//! Simulator-native actuators (mjlab's `Builtin*Actuator`): the simulator
//! computes the force; Sinew forwards the (optionally delayed) command field
//! into `ctrl`, batched per law with one gather and one scatter.
//!
//! Their gains and limits are metadata for building the simulator model; they
//! do not enter `ctrl`.

use super::ideal_pd::symmetric_ranges;
use super::spec::{Kind, LawIo, ParamSpec, StateSpec};
use super::{
    check, check_opt_limit, invalid, CommandField, CtrlMeaning, Domain, MjGeneralCfg, MjMuscleCfg,
    MjPositionCfg,
};
use crate::error::Error;

/// The law of every pass-through kind: the column's (delayed) command field.
#[inline(always)]
fn forward<I: LawIo>(io: &mut I) -> f32 {
    pass_through(io.field_target())
}

/// The `Kind` items every pass-through kind shares.
macro_rules! pass_through_kind {
    ($name:literal, $key:literal, $field:expr) => {
        const NAME: &'static str = $name;
        const KEY: &'static str = $key;
        const PARAMS: &'static [ParamSpec] = &[];
        const STATE: &'static [StateSpec] = &[];
        const READS: &'static [CommandField] = &[$field];
        const WGSL: &'static str = include_str!("../../../../shaders/builtin.wgsl");

        fn param_value(&self, k: usize) -> f32 {
            unreachable!("{} has no parameter slot {k}", $name)
        }

        fn command_field(&self) -> Option<CommandField> {
            Some($field)
        }

        fn meaning(&self, field: CommandField) -> CtrlMeaning {
            CtrlMeaning::forwarded(field)
        }

        #[inline(always)]
        fn law<I: LawIo>(io: &mut I) -> f32 {
            forward(io)
        }
    };
}

impl Kind for BuiltinPositionCfg {
    fn example() -> Self {
        BuiltinPositionCfg {
            stiffness: 30.0,
            damping: 1.0,
            effort_limit: Some(20.0),
        }
    }

    pass_through_kind!(
        "BuiltinPosition",
        "builtin_position",
        CommandField::Position
    );

    fn validate(&self, group: &str) -> Result<(), Error> {
        check(group, "stiffness", self.stiffness, Domain::Gain)?;
        check(group, "damping", self.damping, Domain::Gain)?;
        check_opt_limit(group, self.effort_limit)
    }

    fn ranges(&self) -> (Option<[f32; 2]>, Option<[f32; 2]>) {
        (None, self.effort_limit.map(|l| [-l, l]))
    }

    fn mujoco_equivalent(&self, group: &str) -> Result<Option<MjGeneralCfg>, Error> {
        let position = MjPositionCfg {
            kp: self.stiffness,
            kv: Some(self.damping),
            ..MjPositionCfg::default()
        }
        .position()
        .map_err(|e| e.in_group(group))?;
        Ok(Some(MjGeneralCfg {
            force_range: self.effort_limit.map(|l| [-l, l]),
            ..position
        }))
    }
}

impl Kind for BuiltinVelocityCfg {
    fn example() -> Self {
        BuiltinVelocityCfg {
            damping: 2.0,
            effort_limit: Some(10.0),
        }
    }

    pass_through_kind!(
        "BuiltinVelocity",
        "builtin_velocity",
        CommandField::Velocity
    );

    fn validate(&self, group: &str) -> Result<(), Error> {
        check(group, "damping", self.damping, Domain::Gain)?;
        check_opt_limit(group, self.effort_limit)
    }

    fn ranges(&self) -> (Option<[f32; 2]>, Option<[f32; 2]>) {
        (None, self.effort_limit.map(|l| [-l, l]))
    }

    fn mujoco_equivalent(&self, _group: &str) -> Result<Option<MjGeneralCfg>, Error> {
        Ok(Some(MjGeneralCfg {
            force_range: self.effort_limit.map(|l| [-l, l]),
            ..MjGeneralCfg::velocity(self.damping)
        }))
    }
}

impl Kind for BuiltinMotorCfg {
    pass_through_kind!("BuiltinMotor", "builtin_motor", CommandField::Effort);

    fn example() -> Self {
        BuiltinMotorCfg::new(10.0)
    }
    const SITES: bool = true;

    fn validate(&self, group: &str) -> Result<(), Error> {
        check(group, "effort_limit", self.effort_limit, Domain::Limit)?;
        check_gear(group, self.gear)
    }

    fn ranges(&self) -> (Option<[f32; 2]>, Option<[f32; 2]>) {
        symmetric_ranges(self.effort_limit)
    }

    fn mujoco_equivalent(&self, _group: &str) -> Result<Option<MjGeneralCfg>, Error> {
        let l = self.effort_limit;
        Ok(Some(
            MjGeneralCfg::motor()
                .with_gear(self.gear)
                .with_ctrl_range([-l, l])
                .with_force_range([-l, l]),
        ))
    }
}

impl Kind for BuiltinMuscleCfg {
    pass_through_kind!("BuiltinMuscle", "builtin_muscle", CommandField::Effort);

    fn example() -> Self {
        BuiltinMuscleCfg {
            length_range: (-1.0, 1.2),
            acc0: 2.0,
            ..BuiltinMuscleCfg::default()
        }
    }

    fn validate(&self, group: &str) -> Result<(), Error> {
        BuiltinMuscleCfg::validate(self, group)
    }

    fn ranges(&self) -> (Option<[f32; 2]>, Option<[f32; 2]>) {
        (Some([0.0, 1.0]), None)
    }

    fn mujoco_equivalent(&self, group: &str) -> Result<Option<MjGeneralCfg>, Error> {
        if self.length_range.0 >= self.length_range.1 {
            return Err(invalid(
                group,
                "length_range",
                self.length_range.0,
                "computing a muscle's force needs its compiled lengthrange (lo < hi)",
            ));
        }
        let muscle = MjMuscleCfg {
            timeconst: [self.timeconst.0, self.timeconst.1],
            tausmooth: self.tausmooth,
            range: [self.range.0, self.range.1],
            force: self.force,
            scale: self.scale,
            lmin: self.lmin,
            lmax: self.lmax,
            vmax: self.vmax,
            fpmax: self.fpmax,
            fvmax: self.fvmax,
            length_range: [self.length_range.0, self.length_range.1],
            acc0: self.acc0,
            ctrl_range: Some([0.0, 1.0]),
            force_range: None,
            gear: self.gear,
        }
        .compile()
        .map_err(|e| e.in_group(group))?;
        Ok(Some(muscle))
    }
}

fn check_gear(group: &str, gear: f32) -> Result<(), Error> {
    if gear.is_finite() && gear != 0.0 {
        Ok(())
    } else {
        Err(invalid(
            group,
            "gear",
            gear,
            "the gear must be finite and non-zero",
        ))
    }
}

/// A native position servo (MuJoCo `<position>`): `ctrl` = position target.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BuiltinPositionCfg {
    /// `kp` (N·m/rad), finite ≥ 0.
    pub stiffness: f32,
    /// `kd` (N·m·s/rad), finite ≥ 0.
    pub damping: f32,
    /// Force range ± this (N·m), `None` for unlimited (the default).
    pub effort_limit: Option<f32>,
}

/// A native velocity servo (MuJoCo `<velocity>`): `ctrl` = velocity target.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BuiltinVelocityCfg {
    /// `kd` (N·m·s/rad), finite ≥ 0.
    pub damping: f32,
    /// Force range ± this (N·m), `None` for unlimited (the default).
    pub effort_limit: Option<f32>,
}

/// A native motor (MuJoCo `<motor>`): `ctrl` = effort target, unclamped by Sinew.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BuiltinMotorCfg {
    /// Control and force range ± this (N·m), > 0.
    pub effort_limit: f32,
    /// Transmission gear, finite and non-zero. Default 1.
    pub gear: f32,
}

impl BuiltinMotorCfg {
    /// A motor with gear 1.
    pub fn new(effort_limit: f32) -> Self {
        BuiltinMotorCfg {
            effort_limit,
            gear: 1.0,
        }
    }
}

/// A native muscle (MuJoCo `<muscle>`): `ctrl` = effort target, read by the
/// simulator as the activation command in [0, 1]. Defaults are MuJoCo's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BuiltinMuscleCfg {
    /// Actuator length range (m), finite, `lo <= hi`; equal ends (the
    /// default `(0, 0)`) let the simulator compute it.
    pub length_range: (f32, f32),
    /// Gear. Default 1.
    pub gear: f32,
    /// Activation and deactivation time constants (s). Default (0.01, 0.04).
    pub timeconst: (f32, f32),
    /// Smoothing width of the activation time constant. Default 0.
    pub tausmooth: f32,
    /// Operating length range, in optimal lengths. Default (0.75, 1.05).
    pub range: (f32, f32),
    /// Peak force (N); −1 derives it from `scale`. Default −1.
    pub force: f32,
    /// Force scale when `force` is −1. Default 200.
    pub scale: f32,
    /// Lower bound of the force–length curve. Default 0.5.
    pub lmin: f32,
    /// Upper bound of the force–length curve. Default 1.6.
    pub lmax: f32,
    /// Shortening velocity at zero force, in optimal lengths/s. Default 1.5.
    pub vmax: f32,
    /// Passive force at `lmax`, relative to peak force. Default 1.3.
    pub fpmax: f32,
    /// Active force at saturating lengthening velocity, relative. Default 1.2.
    pub fvmax: f32,
    /// The compiled `acc0`, needed only to compute the force with
    /// `force < 0` ([`GroupCfg::compute_force`](crate::GroupCfg::compute_force)). Default 0.
    pub acc0: f32,
}

impl Default for BuiltinMuscleCfg {
    fn default() -> Self {
        BuiltinMuscleCfg {
            length_range: (0.0, 0.0),
            gear: 1.0,
            timeconst: (0.01, 0.04),
            tausmooth: 0.0,
            range: (0.75, 1.05),
            force: -1.0,
            scale: 200.0,
            lmin: 0.5,
            lmax: 1.6,
            vmax: 1.5,
            fpmax: 1.3,
            fvmax: 1.2,
            acc0: 0.0,
        }
    }
}

impl BuiltinMuscleCfg {
    pub(crate) fn validate(&self, group: &str) -> Result<(), Error> {
        let positive = [
            ("timeconst.0", self.timeconst.0),
            ("timeconst.1", self.timeconst.1),
            ("scale", self.scale),
            ("vmax", self.vmax),
            ("fpmax", self.fpmax),
            ("fvmax", self.fvmax),
        ];
        for (field, value) in positive {
            if !(value.is_finite() && value > 0.0) {
                return Err(invalid(group, field, value, "must be finite and > 0"));
            }
        }
        // MuJoCo's own compile-time domains, whether or not Sinew computes
        // the force: the simulator reads these values too.
        let nonnegative = [("tausmooth", self.tausmooth), ("acc0", self.acc0)];
        for (field, value) in nonnegative {
            if !(value.is_finite() && value >= 0.0) {
                return Err(invalid(group, field, value, "must be finite and >= 0"));
            }
        }
        for (field, value) in [
            ("force", self.force),
            ("length_range.0", self.length_range.0),
        ] {
            if !value.is_finite() {
                return Err(invalid(group, field, value, "must be finite"));
            }
        }
        if !(self.length_range.1.is_finite() && self.length_range.1 >= self.length_range.0) {
            return Err(invalid(
                group,
                "length_range.1",
                self.length_range.1,
                "must be finite and >= length_range.0 (equal ends let the simulator compute it)",
            ));
        }
        if self.range.0.partial_cmp(&self.range.1) != Some(std::cmp::Ordering::Less) {
            return Err(invalid(
                group,
                "range.0",
                self.range.0,
                "the range must have range.0 < range.1",
            ));
        }
        if !(self.lmin < 1.0 && self.lmax > 1.0) {
            return Err(invalid(group, "lmin", self.lmin, "needs lmin < 1 < lmax"));
        }
        check_gear(group, self.gear)
    }
}

/// The pass-through law: `ctrl` is the forwarded command value itself.
#[inline(always)]
pub fn pass_through(command: f32) -> f32 {
    command
}
