//! DC motor: mjlab's `DcMotorActuator`, Isaac Lab's `DCMotor` (four-quadrant).

use super::ideal_pd::{clip, pd_torque, symmetric_ranges, DAMPING, EFFORT_LIMIT, STIFFNESS};
use super::spec::{param_slot, Domain, Kind, LawIo, ParamSpec};
use super::CommandField;

/// The stall torque of a DC motor clip (DC motors and learned networks).
pub(crate) const SATURATION_EFFORT: ParamSpec = ParamSpec {
    name: "saturation_effort",
    aliases: &[],
    unit: "N·m",
    doc: "stall torque of the torque–speed curve",
    domain: Domain::Positive,
};
/// The no-load speed of a DC motor clip.
pub(crate) const VELOCITY_LIMIT: ParamSpec = ParamSpec {
    name: "velocity_limit",
    aliases: &["velocity_limit_motor"],
    unit: "rad/s",
    doc: "no-load speed of the torque–speed curve",
    domain: Domain::Positive,
};

/// PD torque clipped by a DC motor's torque–speed curve.
///
/// With `v_c = velocity_limit·(1 + effort_limit/saturation_effort)` (the corner
/// velocity, recomputed every step so randomized limits stay right) and
/// `v = clamp(q̇, −v_c, v_c)`:
///
/// `τ = clamp(τ_pd, max(sat·(−1 − v/v_max), −effort_limit), min(sat·(1 − v/v_max), effort_limit))`
///
/// where `q̇` is the current, undelayed velocity.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DcMotorCfg {
    /// `kp` (N·m/rad). Finite, ≥ 0.
    pub stiffness: f32,
    /// `kd` (N·m·s/rad). Finite, ≥ 0.
    pub damping: f32,
    /// Flat output limit (N·m), > 0; `inf` lets the curve alone limit (mjlab warns).
    pub effort_limit: f32,
    /// Stall torque `sat` (N·m), finite and > 0. Typically above `effort_limit`.
    pub saturation_effort: f32,
    /// No-load speed `v_max` (rad/s), finite and > 0.
    pub velocity_limit: f32,
}

impl Kind for DcMotorCfg {
    const NAME: &'static str = "DcMotor";
    const KEY: &'static str = "dc_motor";
    const PARAMS: &'static [ParamSpec] = &[
        STIFFNESS,
        DAMPING,
        EFFORT_LIMIT,
        SATURATION_EFFORT,
        VELOCITY_LIMIT,
    ];
    const STATE: &'static [super::StateSpec] = &[];
    const READS: &'static [CommandField] = &CommandField::ALL;
    const WGSL: &'static str = include_str!("../../../../shaders/dc_motor.wgsl");

    fn example() -> Self {
        // Unitree Go1's hip (mjlab's preset).
        DcMotorCfg {
            stiffness: 20.0,
            damping: 0.5,
            effort_limit: 23.7,
            saturation_effort: 23.7,
            velocity_limit: 30.1,
        }
    }

    fn param_value(&self, k: usize) -> f32 {
        [
            self.stiffness,
            self.damping,
            self.effort_limit,
            self.saturation_effort,
            self.velocity_limit,
        ][k]
    }

    fn ranges(&self) -> (Option<[f32; 2]>, Option<[f32; 2]>) {
        symmetric_ranges(self.effort_limit)
    }

    fn warnings(&self, group: &str) -> Vec<String> {
        if self.effort_limit.is_infinite() {
            vec![format!(
                "group `{group}`: effort_limit is inf; only the DC curve limits the torque"
            )]
        } else if self.effort_limit > self.saturation_effort {
            vec![format!(
                "group `{group}`: effort_limit {} exceeds saturation_effort {}; the curve caps it",
                self.effort_limit, self.saturation_effort
            )]
        } else {
            Vec::new()
        }
    }

    #[inline(always)]
    fn law<I: LawIo>(io: &mut I) -> f32 {
        Self::law_probed(io).0
    }

    /// The torque before the clip is the probe (the compiler computes it
    /// once for both): with it and the velocity finite, the clip's bounds
    /// are finite (the saturation effort and velocity limit are finite and
    /// positive; an infinite effort limit drops out), and a non-finite
    /// velocity makes the torque non-finite.
    #[inline(always)]
    fn law_probed<I: LawIo>(io: &mut I) -> (f32, Option<f32>) {
        const KP: usize = param_slot(DcMotorCfg::PARAMS, "stiffness");
        const KD: usize = param_slot(DcMotorCfg::PARAMS, "damping");
        const LIMIT: usize = param_slot(DcMotorCfg::PARAMS, "effort_limit");
        const SAT: usize = param_slot(DcMotorCfg::PARAMS, "saturation_effort");
        const VMAX: usize = param_slot(DcMotorCfg::PARAMS, "velocity_limit");
        let (kp, kd) = (io.param(KP), io.param(KD));
        let (limit, sat, vmax) = (io.param(LIMIT), io.param(SAT), io.param(VMAX));
        let (pt, vt, et) = (
            io.target(CommandField::Position),
            io.target(CommandField::Velocity),
            io.target(CommandField::Effort),
        );
        let (pos, vel) = (io.pos(), io.vel());
        (
            dc_motor_effort(kp, kd, limit, sat, vmax, pt, pos, vt, vel, et),
            Some(pd_torque(kp, kd, pt, pos, vt, vel, et)),
        )
    }
}

/// The DC motor clip of a torque `tau` at velocity `vel`.
#[inline(always)]
pub fn dc_motor_clip(
    tau: f32,
    saturation_effort: f32,
    velocity_limit: f32,
    effort_limit: f32,
    vel: f32,
) -> f32 {
    let v_corner = velocity_limit * (1.0 + effort_limit / saturation_effort);
    let v = clip(vel, -v_corner, v_corner);
    let top = saturation_effort * (1.0 - v / velocity_limit);
    let bot = saturation_effort * (-1.0 - v / velocity_limit);
    let max_effort = if effort_limit < top {
        effort_limit
    } else {
        top
    };
    let min_effort = if bot < -effort_limit {
        -effort_limit
    } else {
        bot
    };
    clip(tau, min_effort, max_effort)
}

/// The DC motor law for one (env, target).
#[allow(
    clippy::too_many_arguments,
    reason = "the scalar law takes each input by name, as its WGSL twin"
)]
#[inline(always)]
pub fn dc_motor_effort(
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
    dc_motor_clip(tau, saturation_effort, velocity_limit, effort_limit, vel)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// mjlab tests/test_dc_actuator.py: sat=20, vlim=30, kp=100, target 2.
    fn mjlab_case(limit: f32, kd: f32, target: f32, vel: f32) -> f32 {
        dc_motor_effort(100.0, kd, limit, 20.0, 30.0, target, 0.0, 0.0, vel, 0.0)
    }

    #[test]
    fn mjlab_dc_numbers() {
        assert_eq!(mjlab_case(20.0, 0.0, 2.0, 0.0), 20.0);
        assert!(mjlab_case(20.0, 0.0, 2.0, 30.0).abs() <= 1e-5);
        assert_eq!(mjlab_case(20.0, 0.0, 2.0, 15.0), 10.0);
        assert_eq!(mjlab_case(5.0, 0.0, 2.0, 0.0), 5.0);
        assert_eq!(mjlab_case(20.0, 0.0, -2.0, -15.0), -10.0);
        assert_eq!(mjlab_case(10.0, 0.0, 2.0, 15.0), 10.0);
    }

    /// Isaac Lab test/actuators/test_dc_motor.py: effort limit 60, saturation
    /// 100, velocity limit 50, kp = 10 and target = torque / 10. The table is
    /// exact in real numbers; float32 lands within 1 ulp (see the mjlab golden
    /// README for which rows round).
    #[test]
    fn isaac_lab_twenty_point_table() {
        let rows: [((f32, f32), f32); 10] = [
            ((30.0, 10.0), 30.0),
            ((70.0, 10.0), 60.0),
            ((80.0, 40.0), 20.0),
            ((30.0, 40.0), 20.0),
            ((-20.0, 90.0), -60.0),
            ((-30.0, 10.0), -30.0),
            ((-80.0, 110.0), -60.0),
            ((-80.0, 50.0), -60.0),
            ((-120.0, 90.0), -60.0),
            ((-10.0, 70.0), -40.0),
        ];
        for sign in [1.0f32, -1.0] {
            for ((torque, speed), expected) in rows {
                let (torque, speed, expected) = (sign * torque, sign * speed, sign * expected);
                let got = dc_motor_effort(
                    10.0,
                    0.0,
                    60.0,
                    100.0,
                    50.0,
                    torque / 10.0,
                    0.0,
                    0.0,
                    speed,
                    0.0,
                );
                let ulp = expected.abs() * f32::EPSILON;
                assert!(
                    (got - expected).abs() <= ulp,
                    "({torque}, {speed}): got {got}, table {expected}"
                );
            }
        }
    }

    #[test]
    fn corner_follows_effort_limit() {
        // Raising the limit moves the corner: at 15 rad/s the curve allows 10.
        assert_eq!(
            dc_motor_effort(100.0, 0.0, 5.0, 20.0, 30.0, 2.0, 0.0, 0.0, 15.0, 0.0),
            5.0
        );
        assert_eq!(
            dc_motor_effort(100.0, 0.0, 15.0, 20.0, 30.0, 2.0, 0.0, 0.0, 15.0, 0.0),
            10.0
        );
    }
}
