//! The ranges BAM's optimizer searches (`Model.set_actuator` and each
//! actuator's `initialize` in `bam/model.py` and `bam/actuators.py` at BAM
//! commit `1b5a1cee2e6d`), as data: every parameter any model creates, its
//! bounds and the value BAM starts it at. Generated from the header of
//! `tests/golden/bam/laws.json` (`actuators.<name>.param_bounds` and
//! `param_defaults`), which records them as BAM built them.

use super::{BamFamily, BamParamRange};

const fn range(name: &'static str, min: f64, max: f64, default: f64) -> BamParamRange {
    BamParamRange {
        name,
        min,
        max,
        default,
    }
}

/// mx64, mx106 (identical in BAM).
const MX: &[BamParamRange] = &[
    range("kt", 1.0, 3.0, 1.6),
    range("R", 1.0, 5.0, 2.0),
    range("armature", 0.001, 0.05, 0.005),
    range("q_offset", -0.1, 0.1, 0.0),
    range("friction_base", 0.0, 0.2, 0.05),
    range("friction_viscous", 0.0, 1.0, 0.1),
    range("friction_stribeck", 0.0, 0.2, 0.05),
    range("dtheta_stribeck", 0.1, 3.0, 0.2),
    range("alpha", 1.0, 10.0, 1.35),
    range("load_friction_base", 0.0, 0.5, 0.05),
    range("load_friction_stribeck", 0.0, 1.0, 0.05),
    range("load_friction_motor", 0.0, 0.5, 0.05),
    range("load_friction_external", 0.0, 0.5, 0.05),
    range("load_friction_motor_stribeck", 0.0, 1.0, 0.05),
    range("load_friction_external_stribeck", 0.0, 1.0, 0.05),
    range("load_friction_motor_quad", 0.0, 0.01, 0.0),
    range("load_friction_external_quad", 0.0, 0.01, 0.0),
];

const XL320: &[BamParamRange] = &[
    range("kt", 0.25, 1.5, 0.7),
    range("R", 3.0, 40.0, 5.0),
    range("armature", 0.0001, 0.01, 0.0005),
    range("q_offset", -0.1, 0.1, 0.0),
    range("friction_base", 0.0, 0.2, 0.05),
    range("friction_viscous", 0.0, 1.0, 0.1),
    range("friction_stribeck", 0.0, 0.2, 0.05),
    range("dtheta_stribeck", 0.1, 3.0, 0.2),
    range("alpha", 1.0, 10.0, 1.35),
    range("load_friction_base", 0.0, 1.0, 0.05),
    range("load_friction_stribeck", 0.0, 1.0, 0.05),
    range("load_friction_motor", 0.0, 1.0, 0.05),
    range("load_friction_external", 0.0, 1.0, 0.05),
    range("load_friction_motor_stribeck", 0.0, 1.0, 0.05),
    range("load_friction_external_stribeck", 0.0, 1.0, 0.05),
    range("load_friction_motor_quad", 0.0, 0.01, 0.0),
    range("load_friction_external_quad", 0.0, 0.01, 0.0),
];

const XL330: &[BamParamRange] = &[
    range("kt", 0.1, 3.0, 1.6),
    range("R", 2.0, 5.0, 2.6),
    range("armature", 0.0001, 0.05, 0.005),
    range("q_offset", -0.1, 0.1, 0.0),
    range("friction_base", 0.0, 0.2, 0.05),
    range("friction_viscous", 0.0, 1.0, 0.1),
    range("friction_stribeck", 0.0, 0.2, 0.05),
    range("dtheta_stribeck", 0.1, 3.0, 0.2),
    range("alpha", 1.0, 10.0, 1.35),
    range("load_friction_base", 0.0, 0.5, 0.05),
    range("load_friction_stribeck", 0.0, 1.0, 0.05),
    range("load_friction_motor", 0.0, 0.5, 0.05),
    range("load_friction_external", 0.0, 0.5, 0.05),
    range("load_friction_motor_stribeck", 0.0, 1.0, 0.05),
    range("load_friction_external_stribeck", 0.0, 1.0, 0.05),
    range("load_friction_motor_quad", 0.0, 0.01, 0.0),
    range("load_friction_external_quad", 0.0, 0.01, 0.0),
];

const XL330I: &[BamParamRange] = &[
    range("kt", 0.1, 3.0, 1.6),
    range("R", 2.0, 5.0, 2.6),
    range("armature", 0.0001, 0.05, 0.005),
    range("current_limit", 1.0, 3.0, 1.5),
    range("q_offset", -0.1, 0.1, 0.0),
    range("friction_base", 0.0, 0.2, 0.05),
    range("friction_viscous", 0.0, 1.0, 0.1),
    range("friction_stribeck", 0.0, 0.2, 0.05),
    range("dtheta_stribeck", 0.1, 3.0, 0.2),
    range("alpha", 1.0, 10.0, 1.35),
    range("load_friction_base", 0.0, 0.5, 0.05),
    range("load_friction_stribeck", 0.0, 1.0, 0.05),
    range("load_friction_motor", 0.0, 0.5, 0.05),
    range("load_friction_external", 0.0, 0.5, 0.05),
    range("load_friction_motor_stribeck", 0.0, 1.0, 0.05),
    range("load_friction_external_stribeck", 0.0, 1.0, 0.05),
    range("load_friction_motor_quad", 0.0, 0.01, 0.0),
    range("load_friction_external_quad", 0.0, 0.01, 0.0),
];

/// erob80_100, erob80_50 (identical in BAM).
const EROB: &[BamParamRange] = &[
    range("kt", 1.0, 15.0, 1.6),
    range("R", 0.1, 3.5, 2.0),
    range("armature", 0.001, 2.0, 0.005),
    range("q_offset", -0.1, 0.1, 0.0),
    range("friction_base", 0.0, 10.0, 0.05),
    range("friction_viscous", 0.0, 30.0, 0.1),
    range("friction_stribeck", 0.0, 10.0, 0.05),
    range("dtheta_stribeck", 0.1, 3.0, 0.2),
    range("alpha", 1.0, 10.0, 1.35),
    range("load_friction_base", 0.0, 1.0, 0.05),
    range("load_friction_stribeck", 0.0, 1.0, 0.05),
    range("load_friction_motor", 0.0, 1.0, 0.05),
    range("load_friction_external", 0.0, 1.0, 0.05),
    range("load_friction_motor_stribeck", 0.0, 1.0, 0.05),
    range("load_friction_external_stribeck", 0.0, 1.0, 0.05),
    range("load_friction_motor_quad", 0.0, 0.01, 0.0),
    range("load_friction_external_quad", 0.0, 0.01, 0.0),
];

const STS3215: &[BamParamRange] = &[
    range("kt", 0.05, 2.5, 0.784532),
    range("error_gain_ratio", 0.1, 10.0, 1.0),
    range("R", 0.1, 10.0, 2.0),
    range("armature", 1e-05, 0.04, 0.0001),
    range("q_offset", -0.1, 0.1, 0.0),
    range(
        "max_velocity",
        0.521553467881118,
        52.1553467881118,
        5.21553467881118,
    ),
    range("friction_base", 0.0, 0.2, 0.05),
    range("friction_viscous", 0.0, 1.0, 0.1),
    range("friction_stribeck", 0.0, 0.2, 0.05),
    range("dtheta_stribeck", 0.1, 3.0, 0.2),
    range("alpha", 1.0, 10.0, 1.35),
    range("load_friction_base", 0.0, 0.5, 0.05),
    range("load_friction_stribeck", 0.0, 1.0, 0.05),
    range("load_friction_motor", 0.0, 0.5, 0.05),
    range("load_friction_external", 0.0, 0.5, 0.05),
    range("load_friction_motor_stribeck", 0.0, 1.0, 0.05),
    range("load_friction_external_stribeck", 0.0, 1.0, 0.05),
    range("load_friction_motor_quad", 0.0, 0.01, 0.0),
    range("load_friction_external_quad", 0.0, 0.01, 0.0),
];

const UNITREE_GO1: &[BamParamRange] = &[
    range("ratio", 0.5, 2.0, 1.0),
    range("max_torque", 20.0, 30.0, 23.7),
    range("armature", 1e-05, 2.0, 0.005),
    range("q_offset", -0.1, 0.1, 0.0),
    range("friction_base", 0.0, 5.0, 0.05),
    range("friction_viscous", 0.0, 1.0, 0.1),
    range("friction_stribeck", 0.0, 5.0, 0.05),
    range("dtheta_stribeck", 0.1, 3.0, 0.2),
    range("alpha", 1.0, 10.0, 1.35),
    range("load_friction_base", 0.0, 2.0, 0.05),
    range("load_friction_stribeck", 0.0, 1.0, 0.05),
    range("load_friction_motor", 0.0, 2.0, 0.05),
    range("load_friction_external", 0.0, 2.0, 0.05),
    range("load_friction_motor_stribeck", 0.0, 1.0, 0.05),
    range("load_friction_external_stribeck", 0.0, 1.0, 0.05),
    range("load_friction_motor_quad", 0.0, 0.01, 0.0),
    range("load_friction_external_quad", 0.0, 0.01, 0.0),
];

impl BamFamily {
    /// Every parameter BAM's models create for this family, with the bounds
    /// its optimizer searches and BAM's starting value.
    pub fn param_ranges(self) -> &'static [BamParamRange] {
        match self {
            BamFamily::Mx64 | BamFamily::Mx106 => MX,
            BamFamily::Xl320 => XL320,
            BamFamily::Xl330 => XL330,
            BamFamily::Xl330i => XL330I,
            BamFamily::Erob80x100 | BamFamily::Erob80x50 => EROB,
            BamFamily::Sts3215 => STS3215,
            BamFamily::UnitreeGo1 => UNITREE_GO1,
        }
    }
}
