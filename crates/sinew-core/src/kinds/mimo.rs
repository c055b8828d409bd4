//! MIMo's actuation models (trieschlab/MIMo, `mimoActuation/`): the
//! spring-damper torque motor, the two-muscle model and the positional
//! (joint-locking) model, with MIMo's muscle curves as public functions.
//!
//! The muscle model follows MIMo's `MuscleModel` (after Schumacher et al.,
//! arXiv:2207.03952): per joint two antagonist muscles, each with its
//! activation as state; MIMo's force–length curve with its second, shifted
//! bump, its force–velocity curve normalized by `vmax` alone and its
//! cubic-then-linear passive curve; and the joint torque
//! `−(m1·F1·fmax_neg + m2·F2·fmax_pos)`.
//!
//! **Step semantics.** One [`step`](crate::Backend::step) of a
//! [`MimoMuscleCfg`] group is one MIMo muscle update: the activations
//! advance one Euler step of `timestep` toward the targets, then the fibre
//! lengths, forces and the torque follow from the joint state the step is
//! given. The torque a step returns is the one for the physics step that
//! starts from that joint state. MIMo's env step updates the activations
//! `frame_skip + 1` times per `frame_skip` physics steps (`action()` runs
//! one update whose torque every substep overwrites): to reproduce it, call
//! `step` once with the state at the start of the env step and discard its
//! efforts, then once before each physics substep and apply those.

use super::ideal_pd::clip;
use super::spec::{
    param, param_slot, plane_slot, state_slot, zeroed_plane, Domain, Kind, LawIo, ParamSpec,
    PlaneSpec, StateSpec,
};
use super::{invalid, CommandField, CtrlMeaning};
use crate::error::Error;

/// MIMo's muscle constants (`MuscleModel`): `lmin`.
pub const LMIN: f32 = 0.5;
/// `lmax`.
pub const LMAX: f32 = 1.6;
/// `fvmax`: the force–velocity curve's plateau.
pub const FVMAX: f32 = 1.2;
/// `fpmax`: the passive curve's scale.
pub const FPMAX: f32 = 1.3;
/// The normalized fibre length at the joint's range ends: `lce_min`.
pub const LCE_MIN: f32 = 0.75;
/// `lce_max`.
pub const LCE_MAX: f32 = 1.05;
/// MIMo's activation time constant (s).
pub const TAU: f32 = 0.01;
/// MIMo's `EPS` in the moment-arm parametrization.
pub const EPS: f32 = 1e-10;

/// MuJoCo's piecewise-quadratic bump as MIMo writes it (`muscle.bump`):
/// 0 outside `(a, b)`, 1 at `mid`, with `left = (a+mid)/2` and
/// `right = (mid+b)/2` joining the quadratic pieces.
#[inline(always)]
pub fn bump(length: f32, a: f32, mid: f32, b: f32) -> f32 {
    let left = 0.5 * (a + mid);
    let right = 0.5 * (mid + b);
    if length <= a || length >= b {
        0.0
    } else if length < left {
        let x = (length - a) * (length - a) * 0.5;
        x / ((left - a) * (left - a))
    } else if length < mid {
        let x = (mid - length) * (mid - length) * 0.5;
        1.0 - x / ((mid - left) * (mid - left))
    } else if length < right {
        let x = (length - mid) * (length - mid) * 0.5;
        1.0 - x / ((right - mid) * (right - mid))
    } else {
        let x = (b - length) * (b - length) * 0.5;
        x / ((b - right) * (b - right))
    }
}

/// MIMo's force–length curve: `bump(L; lmin, 1, lmax) + 0.15·bump(L; lmin,
/// (lmin+0.95)/2, 0.95)` (the second, shifted bump is not MuJoCo's).
#[inline(always)]
pub fn force_length(length: f32) -> f32 {
    bump(length, LMIN, 1.0, LMAX) + 0.15 * bump(length, LMIN, 0.5 * (LMIN + 0.95), 0.95)
}

/// MIMo's force–velocity curve of `v = l̇ce/vmax`, with `c = fvmax − 1`:
/// 0 below −1, `(v+1)²` up to 0, `fvmax − (c−v)²/c` up to `c`, `fvmax` above.
#[inline(always)]
pub fn force_velocity(v: f32) -> f32 {
    let c = FVMAX - 1.0;
    if v <= -1.0 {
        0.0
    } else if v <= 0.0 {
        (v + 1.0) * (v + 1.0)
    } else if v <= c {
        FVMAX - (c - v) * (c - v) / c
    } else {
        FVMAX
    }
}

/// MIMo's passive curve, with `b = (lmax+1)/2`: 0 up to 1,
/// `¼·fpmax·((L−1)/(b−1))³` up to `b`, then `¼·fpmax·(1 + 3(L−b)/(b−1))`.
#[inline(always)]
pub fn force_passive(length: f32) -> f32 {
    let b = 0.5 * (LMAX + 1.0);
    if length <= 1.0 {
        0.0
    } else if length <= b {
        let x = (length - 1.0) / (b - 1.0);
        0.25 * FPMAX * x * x * x
    } else {
        let x = (length - b) / (b - 1.0);
        0.25 * FPMAX * (1.0 + 3.0 * x)
    }
}

/// The two muscles' moment arms and reference lengths of a joint
/// (`_compute_parametrization`): `(m1, lce1_ref, m2, lce2_ref)`, with
/// `m1 > 0` (muscle 1 pulls toward negative angles) and `m2 < 0`.
#[inline(always)]
pub fn muscle_parametrization(range_lo: f32, range_hi: f32, springref: f32) -> [f32; 4] {
    let phi_min = range_lo - springref;
    let phi_max = range_hi - springref;
    let span = LCE_MAX - LCE_MIN + EPS;
    let m1 = span / (phi_max - phi_min + EPS);
    let m2 = span / (phi_min - phi_max - EPS);
    [m1, LCE_MIN - m1 * phi_min, m2, LCE_MIN - m2 * phi_max]
}

/// One muscle's state after an update: its fibre length and velocity, the
/// three curves and the normalized force `F = FL·FV·act + FP`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MuscleState {
    /// Normalized fibre length `lce = (q − q_s)·m + ref`.
    pub lce: f32,
    /// Its rate `m·q̇` (lce units/s).
    pub lce_dot: f32,
    /// [`force_length`] of `lce`.
    pub fl: f32,
    /// [`force_velocity`] of `lce_dot/vmax`.
    pub fv: f32,
    /// [`force_passive`] of `lce`.
    pub fp: f32,
    /// `FL·FV·act + FP`.
    pub force: f32,
}

/// One muscle: moment arm `m`, reference length `lce_ref`, `vmax`, at
/// joint offset `phi = q − q_s` and velocity `dq`, with activation `act`.
#[inline(always)]
pub fn muscle_state(m: f32, lce_ref: f32, vmax: f32, phi: f32, dq: f32, act: f32) -> MuscleState {
    let lce = phi * m + lce_ref;
    let lce_dot = m * dq;
    let fl = force_length(lce);
    let fv = force_velocity(lce_dot / vmax);
    let fp = force_passive(lce);
    MuscleState {
        lce,
        lce_dot,
        fl,
        fv,
        fp,
        force: fl * fv * act + fp,
    }
}

/// MIMo's activation update: `clip(act + (h·(target − act))/τ, 0, 1)` in
/// this operation order.
#[inline(always)]
pub fn activation_step(act: f32, target: f32, timestep: f32, tau: f32) -> f32 {
    clip(act + (timestep * (target - act)) / tau, 0.0, 1.0)
}

/// MIMo's `MuscleModel` on one joint: two antagonist muscles.
///
/// Inputs: the planes `muscle_target_neg` and `muscle_target_pos`
/// (`(num_envs, num_targets)`, the activation targets of muscle 1, which
/// pulls toward negative angles, and of muscle 2; MIMo's action split in
/// halves), clipped to [0, 1]. State: `activation_neg`, `activation_pos`
/// (reset 0). Each step (see the [module docs](self) for MIMo's call
/// sequence): `act ← clip(act + (h·(target − act))/τ, 0, 1)`; with
/// `(m1, ref1, m2, ref2)` from the joint range and spring reference
/// ([`muscle_parametrization`]), `lce_i = (q − q_s)·m_i + ref_i`,
/// `l̇ce_i = m_i·q̇`, `F_i = FL(lce_i)·FV(l̇ce_i/vmax)·act_i + FP(lce_i)`;
/// the column is the joint torque `τ = −(m1·F1·fmax_neg + m2·F2·fmax_pos)`
/// (N·m), to apply as a motor (MIMo writes it into MuJoCo's gear with
/// ctrl 1). Output planes: `muscle_activation_neg`/`_pos` (the updated
/// activations) and `muscle_force_neg`/`_pos` (`F·fmax`, MIMo's
/// observations), and `muscle_cost` (`act1²·fmax_neg + act2²·fmax_pos`:
/// MIMo's cost is the sum of this over an env's joints divided by
/// `2n·Σ fmax` over its `2n` muscles, see [`mimo_muscle_cost`]).
/// MIMo also zeroes the joints' stiffness and divides their damping by 20
/// when it sets the model up; that stays the simulator's.
#[derive(Debug, Clone, Copy, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MimoMuscleCfg {
    /// The joint range's lower end (rad).
    pub range_lo: f32,
    /// The joint range's upper end (rad), above `range_lo`.
    pub range_hi: f32,
    /// The joint's spring reference `q_s` (rad): MuJoCo's `springref`.
    #[serde(default)]
    pub springref: f32,
    /// Largest fibre velocity (lce units/s), > 0: MIMo's `user[0]`.
    pub vmax: f32,
    /// Muscle 1's force scale (N·m per unit force per unit moment arm),
    /// ≥ 0: `user[1]`.
    pub fmax_neg: f32,
    /// Muscle 2's force scale, ≥ 0: `user[2]`.
    pub fmax_pos: f32,
    /// The update's step `h` (s), > 0: MuJoCo's `opt.timestep` (MIMo 0.005).
    pub timestep: f32,
    /// The activation time constant (s), > 0. Default MIMo's 0.01.
    #[serde(default = "default_tau")]
    pub tau: f32,
}

fn default_tau() -> f32 {
    TAU
}

/// The planes [`MimoMuscleCfg`] reads.
pub const MUSCLE_INPUTS: [PlaneSpec; 2] = [
    PlaneSpec {
        name: "muscle_target_neg",
        unit: "1",
        doc: "activation target of muscle 1 (toward negative angles), clipped to [0, 1]",
        default: 0.0,
    },
    PlaneSpec {
        name: "muscle_target_pos",
        unit: "1",
        doc: "activation target of muscle 2 (toward positive angles), clipped to [0, 1]",
        default: 0.0,
    },
];

/// The planes [`MimoMuscleCfg`] writes.
pub const MUSCLE_OUTPUTS: [PlaneSpec; 5] = [
    zeroed_plane(
        "muscle_activation_neg",
        "1",
        "muscle 1's activation after the step",
    ),
    zeroed_plane(
        "muscle_activation_pos",
        "1",
        "muscle 2's activation after the step",
    ),
    zeroed_plane(
        "muscle_force_neg",
        "N·m",
        "muscle 1's force F·fmax_neg (MIMo's observation)",
    ),
    zeroed_plane(
        "muscle_force_pos",
        "N·m",
        "muscle 2's force F·fmax_pos (MIMo's observation)",
    ),
    zeroed_plane(
        "muscle_cost",
        "N·m",
        "act1²·fmax_neg + act2²·fmax_pos: MIMo's cost is its sum over the env divided by 2n·Σfmax",
    ),
];

impl MimoMuscleCfg {
    /// A joint of range `[range_lo, range_hi]` with MIMo's time constant,
    /// spring reference 0, the given `vmax`, force scales and step.
    pub fn new(range_lo: f32, range_hi: f32, vmax: f32, fmax: [f32; 2], timestep: f32) -> Self {
        MimoMuscleCfg {
            range_lo,
            range_hi,
            springref: 0.0,
            vmax,
            fmax_neg: fmax[0],
            fmax_pos: fmax[1],
            timestep,
            tau: TAU,
        }
    }
}

impl Kind for MimoMuscleCfg {
    const NAME: &'static str = "MimoMuscle";
    const KEY: &'static str = "mimo_muscle";
    const PARAMS: &'static [ParamSpec] = &[
        param("range_lo", "rad", "joint range, lower end", Domain::Finite),
        param("range_hi", "rad", "joint range, upper end", Domain::Finite),
        param("springref", "rad", "spring reference q_s", Domain::Finite),
        param("vmax", "1/s", "largest fibre velocity", Domain::Positive),
        param(
            "fmax_neg",
            "N·m",
            "muscle 1's force scale",
            Domain::NonNegative,
        ),
        param(
            "fmax_pos",
            "N·m",
            "muscle 2's force scale",
            Domain::NonNegative,
        ),
        param(
            "timestep",
            "s",
            "activation update step h",
            Domain::Positive,
        ),
        param("tau", "s", "activation time constant", Domain::Positive),
    ];
    const STATE: &'static [StateSpec] = &[
        StateSpec {
            name: "activation_neg",
            unit: "1",
            doc: "muscle 1's activation",
            reset: 0.0,
        },
        StateSpec {
            name: "activation_pos",
            unit: "1",
            doc: "muscle 2's activation",
            reset: 0.0,
        },
    ];
    const READS: &'static [CommandField] = &[];
    const INPUTS: &'static [PlaneSpec] = &MUSCLE_INPUTS;
    const OUTPUTS: &'static [PlaneSpec] = &MUSCLE_OUTPUTS;
    const WGSL: &'static str = include_str!("../../../../shaders/mimo.wgsl");

    fn param_value(&self, k: usize) -> f32 {
        [
            self.range_lo,
            self.range_hi,
            self.springref,
            self.vmax,
            self.fmax_neg,
            self.fmax_pos,
            self.timestep,
            self.tau,
        ][k]
    }

    fn from_fields<'de, D: serde::Deserializer<'de>>(fields: D) -> Result<Self, D::Error> {
        <Self as serde::Deserialize>::deserialize(fields)
    }

    fn example() -> Self {
        // MIMo v1's hip_bend (`act:hip_bend`, MIMo_meta.xml user data).
        MimoMuscleCfg::new(-0.296_705_97, 0.532_325_4, 0.8574, [32.93, 22.97], 0.005)
    }

    fn validate(&self, group: &str) -> Result<(), Error> {
        if self.range_hi <= self.range_lo {
            return Err(invalid(
                group,
                "range_hi",
                self.range_hi,
                "the joint range must be non-empty: range_hi > range_lo",
            ));
        }
        Ok(())
    }

    #[inline(always)]
    fn law<I: LawIo>(io: &mut I) -> f32 {
        const LO: usize = param_slot(MimoMuscleCfg::PARAMS, "range_lo");
        const HI: usize = param_slot(MimoMuscleCfg::PARAMS, "range_hi");
        const QS: usize = param_slot(MimoMuscleCfg::PARAMS, "springref");
        const VMAX: usize = param_slot(MimoMuscleCfg::PARAMS, "vmax");
        const FNEG: usize = param_slot(MimoMuscleCfg::PARAMS, "fmax_neg");
        const FPOS: usize = param_slot(MimoMuscleCfg::PARAMS, "fmax_pos");
        const H: usize = param_slot(MimoMuscleCfg::PARAMS, "timestep");
        const T: usize = param_slot(MimoMuscleCfg::PARAMS, "tau");
        const A1: usize = state_slot(MimoMuscleCfg::STATE, "activation_neg");
        const A2: usize = state_slot(MimoMuscleCfg::STATE, "activation_pos");
        const IN1: usize = plane_slot(&MUSCLE_INPUTS, "muscle_target_neg");
        const IN2: usize = plane_slot(&MUSCLE_INPUTS, "muscle_target_pos");
        const OUT_A1: usize = plane_slot(&MUSCLE_OUTPUTS, "muscle_activation_neg");
        const OUT_A2: usize = plane_slot(&MUSCLE_OUTPUTS, "muscle_activation_pos");
        const OUT_F1: usize = plane_slot(&MUSCLE_OUTPUTS, "muscle_force_neg");
        const OUT_F2: usize = plane_slot(&MUSCLE_OUTPUTS, "muscle_force_pos");
        const OUT_COST: usize = plane_slot(&MUSCLE_OUTPUTS, "muscle_cost");
        let (h, tau) = (io.param(H), io.param(T));
        let a1 = activation_step(io.state(A1), clip(io.input(IN1), 0.0, 1.0), h, tau);
        let a2 = activation_step(io.state(A2), clip(io.input(IN2), 0.0, 1.0), h, tau);
        let qs = io.param(QS);
        let [m1, ref1, m2, ref2] = muscle_parametrization(io.param(LO), io.param(HI), qs);
        let (phi, dq, vmax) = (io.pos() - qs, io.vel(), io.param(VMAX));
        let f1 = muscle_state(m1, ref1, vmax, phi, dq, a1).force;
        let f2 = muscle_state(m2, ref2, vmax, phi, dq, a2).force;
        let (fmax1, fmax2) = (io.param(FNEG), io.param(FPOS));
        io.set_state(A1, a1);
        io.set_state(A2, a2);
        io.set_output(OUT_A1, a1);
        io.set_output(OUT_A2, a2);
        io.set_output(OUT_F1, f1 * fmax1);
        io.set_output(OUT_F2, f2 * fmax2);
        io.set_output(OUT_COST, a1 * a1 * fmax1 + a2 * a2 * fmax2);
        -(m1 * f1 * fmax1 + m2 * f2 * fmax2)
    }
}

/// MIMo's muscle cost of one env from its [`MimoMuscleCfg`] columns: the
/// `muscle_cost` plane's values and each column's `(fmax_neg, fmax_pos)`:
/// `Σ (act1²·fmax_neg + act2²·fmax_pos) / (2n·Σ (fmax_neg + fmax_pos))`.
pub fn mimo_muscle_cost(cost_terms: &[f32], fmax: &[[f32; 2]]) -> f32 {
    let total: f32 = fmax.iter().map(|f| f[0] + f[1]).sum();
    cost_terms.iter().sum::<f32>() / (2.0 * fmax.len() as f32 * total)
}

/// MIMo's `SpringDamperModel` on one joint: the action (the effort target)
/// clipped to the action space `[action_lo, action_hi]` (MIMo's float32
/// cast of the actuator's `forcerange`). The column is `u`, MuJoCo's `ctrl`
/// for the joint's motor (gear `gear`; MuJoCo clamps the force to its own
/// `forcerange` again); output planes `mimo_torque` (`gear·u`, MIMo's
/// "simulation torque" and observation) and `mimo_cost` (`|u²·gear|`: MIMo's
/// cost is its sum over the env divided by `n·Σ gear`). The spring and the
/// damper are the joint's own (stiffness, damping about `springref`), left
/// to the simulator.
#[derive(Debug, Clone, Copy, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MimoSpringDamperCfg {
    /// The motor's gear: its maximum isometric torque (N·m), ≥ 0.
    pub gear: f32,
    /// The action space's lower bound (MuJoCo's `forcerange[0]`).
    pub action_lo: f32,
    /// The action space's upper bound (`forcerange[1]`), ≥ `action_lo`.
    pub action_hi: f32,
}

/// The planes [`MimoSpringDamperCfg`] writes.
pub const SPRING_DAMPER_OUTPUTS: [PlaneSpec; 2] = [
    zeroed_plane("mimo_torque", "N·m", "gear·u, MIMo's simulation torque"),
    zeroed_plane(
        "mimo_cost",
        "N·m",
        "|u²·gear|: MIMo's cost is its sum over the env divided by n·Σgear",
    ),
];

impl Kind for MimoSpringDamperCfg {
    const NAME: &'static str = "MimoSpringDamper";
    const KEY: &'static str = "mimo_spring_damper";
    const PARAMS: &'static [ParamSpec] = &[
        param(
            "gear",
            "N·m",
            "the motor's gear (maximum isometric torque)",
            Domain::NonNegative,
        ),
        param(
            "action_lo",
            "1",
            "the action space's lower bound",
            Domain::Finite,
        ),
        param(
            "action_hi",
            "1",
            "the action space's upper bound",
            Domain::Finite,
        ),
    ];
    const STATE: &'static [StateSpec] = &[];
    const READS: &'static [CommandField] = &[CommandField::Effort];
    const OUTPUTS: &'static [PlaneSpec] = &SPRING_DAMPER_OUTPUTS;
    const WGSL: &'static str = include_str!("../../../../shaders/mimo.wgsl");

    fn param_value(&self, k: usize) -> f32 {
        [self.gear, self.action_lo, self.action_hi][k]
    }

    fn from_fields<'de, D: serde::Deserializer<'de>>(fields: D) -> Result<Self, D::Error> {
        <Self as serde::Deserialize>::deserialize(fields)
    }

    fn example() -> Self {
        // MIMo v1's hip_bend.
        MimoSpringDamperCfg {
            gear: 10.58,
            action_lo: -1.0,
            action_hi: 0.765,
        }
    }

    fn validate(&self, group: &str) -> Result<(), Error> {
        if self.action_hi < self.action_lo {
            return Err(invalid(
                group,
                "action_hi",
                self.action_hi,
                "the action space must not be empty: action_hi >= action_lo",
            ));
        }
        Ok(())
    }

    fn meaning(&self, _field: CommandField) -> CtrlMeaning {
        CtrlMeaning::EffortTarget
    }

    #[inline(always)]
    fn law<I: LawIo>(io: &mut I) -> f32 {
        const GEAR: usize = param_slot(MimoSpringDamperCfg::PARAMS, "gear");
        const LO: usize = param_slot(MimoSpringDamperCfg::PARAMS, "action_lo");
        const HI: usize = param_slot(MimoSpringDamperCfg::PARAMS, "action_hi");
        const TORQUE: usize = plane_slot(&SPRING_DAMPER_OUTPUTS, "mimo_torque");
        const COST: usize = plane_slot(&SPRING_DAMPER_OUTPUTS, "mimo_cost");
        let u = clip(io.target(CommandField::Effort), io.param(LO), io.param(HI));
        let gear = io.param(GEAR);
        io.set_output(TORQUE, gear * u);
        io.set_output(COST, (u * u * gear).abs());
        u
    }
}

/// MIMo's `PositionalModel` on one joint: the position target clipped to
/// the joint range (MIMo's float32 bounds), the angle the simulator's joint
/// lock holds (a MuJoCo joint equality, `q = qpos0 + target`). MIMo's own
/// code locks hip_bend's target on hip_lean1 and hip_lean's on hip_bend1
/// (its constraints in equality-id order, not actuator order); this kind
/// gives each target to its own joint, as intended.
#[derive(Debug, Clone, Copy, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MimoPositionalCfg {
    /// The joint range's lower end (rad).
    pub range_lo: f32,
    /// The joint range's upper end (rad), ≥ `range_lo`.
    pub range_hi: f32,
}

impl Kind for MimoPositionalCfg {
    const NAME: &'static str = "MimoPositional";
    const KEY: &'static str = "mimo_positional";
    const PARAMS: &'static [ParamSpec] = &[
        param("range_lo", "rad", "joint range, lower end", Domain::Finite),
        param("range_hi", "rad", "joint range, upper end", Domain::Finite),
    ];
    const STATE: &'static [StateSpec] = &[];
    const READS: &'static [CommandField] = &[CommandField::Position];
    const WGSL: &'static str = include_str!("../../../../shaders/mimo.wgsl");

    fn param_value(&self, k: usize) -> f32 {
        [self.range_lo, self.range_hi][k]
    }

    fn from_fields<'de, D: serde::Deserializer<'de>>(fields: D) -> Result<Self, D::Error> {
        <Self as serde::Deserialize>::deserialize(fields)
    }

    fn example() -> Self {
        MimoPositionalCfg {
            range_lo: -0.296_705_97,
            range_hi: 0.532_325_4,
        }
    }

    fn validate(&self, group: &str) -> Result<(), Error> {
        if self.range_hi < self.range_lo {
            return Err(invalid(
                group,
                "range_hi",
                self.range_hi,
                "the joint range must not be empty: range_hi >= range_lo",
            ));
        }
        Ok(())
    }

    fn command_field(&self) -> Option<CommandField> {
        Some(CommandField::Position)
    }

    fn meaning(&self, _field: CommandField) -> CtrlMeaning {
        CtrlMeaning::PositionTarget
    }

    #[inline(always)]
    fn law<I: LawIo>(io: &mut I) -> f32 {
        const LO: usize = param_slot(MimoPositionalCfg::PARAMS, "range_lo");
        const HI: usize = param_slot(MimoPositionalCfg::PARAMS, "range_hi");
        clip(
            io.target(CommandField::Position),
            io.param(LO),
            io.param(HI),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn curves_are_continuous_at_their_breakpoints_and_hit_their_landmarks() {
        assert_eq!(force_length(1.0), 1.0 + 0.15 * bump(1.0, LMIN, 0.725, 0.95));
        assert_eq!(bump(0.725, LMIN, 0.725, 0.95), 1.0);
        assert_eq!(force_velocity(0.0), 1.0);
        assert_eq!(force_velocity(5.0), FVMAX);
        assert_eq!(force_velocity(-2.0), 0.0);
        assert_eq!(force_passive(1.0), 0.0);
        approx::assert_relative_eq!(force_passive(1.3), 0.25 * FPMAX, max_relative = 1e-6);
        for (f, x) in [
            (force_length as fn(f32) -> f32, 0.6125),
            (force_length, 0.8375),
            (force_length, 1.3),
            (force_passive, 1.3),
            (force_velocity, FVMAX - 1.0),
        ] {
            let (below, above) = (f(x - 1e-4), f(x + 1e-4));
            approx::assert_abs_diff_eq!(below, above, epsilon = 1e-3);
        }
    }

    #[test]
    fn the_parametrization_maps_the_range_onto_lce_min_max() {
        let [m1, r1, m2, r2] = muscle_parametrization(-0.3, 0.5, 0.1);
        assert!(m1 > 0.0 && m2 < 0.0);
        let lce = |m: f32, r: f32, q: f32| (q - 0.1) * m + r;
        approx::assert_relative_eq!(lce(m1, r1, -0.3), LCE_MIN, max_relative = 1e-6);
        approx::assert_relative_eq!(lce(m1, r1, 0.5), LCE_MAX, max_relative = 1e-6);
        approx::assert_relative_eq!(lce(m2, r2, 0.5), LCE_MIN, max_relative = 1e-6);
        approx::assert_relative_eq!(lce(m2, r2, -0.3), LCE_MAX, max_relative = 1e-6);
    }

    #[test]
    fn activation_moves_toward_its_target_and_stays_in_the_unit_interval() {
        assert_eq!(activation_step(0.0, 1.0, 0.005, TAU), 0.5);
        assert_eq!(activation_step(0.2, 1.0, 0.025, TAU), 1.0);
        assert_eq!(activation_step(0.8, 0.0, 0.025, TAU), 0.0);
    }
}
