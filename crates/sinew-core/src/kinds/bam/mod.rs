//! BAM's servo models (Rhoban's "Better Actuator Models", Duclusaud et al.,
//! ICRA 2025): the firmware control law and DC-motor torque of Dynamixel,
//! Feetech, eRob and Unitree servos, and the M1–M6 friction budget, as
//! kinds. `../shared/reference/actuator-math.md` Part 3 has the math; each
//! formula here follows BAM's operation order (`bam/actuator.py`, the
//! vendor files and `Model.compute_frictions`), in `f32`.
//!
//! Every servo kind reads the position target (the goal), `q` and `q̇`, and
//! two input planes: `torque_enable` (1 when never set; BAM multiplies the
//! torque by it, so give 0 or 1) and `external_torque` (τ_e, what the
//! simulator's other forces put on the joint: gravity, contacts, coupling;
//! read only by the friction budget). Its ctrl column is the motor torque
//! τ_m, to apply as a `<motor>` with gear 1; it writes two output planes,
//! `frictionloss` (F_s, N·m) and `damping` (K_v, N·m·s/rad), for the
//! simulator's `dof_frictionloss` and `dof_damping`, as BAM's MuJoCo
//! controller sets them. Unlike that controller, which computes them from
//! the previous step's torques, Sinew computes them from this step's τ_m and
//! the τ_e given for this step. The control law sees the raw `q`; BAM's
//! encoder offset `q_offset` only moves where a testbench evaluates gravity
//! ([`Pendulum::q_offset`]), and the rotor inertia is the group's
//! `armature` ([`GroupCfg::armature`](crate::GroupCfg::armature)).
//!
//! Each servo kind has a testbench twin ([`BamBenchCfg`]): the same servo
//! driving BAM's pendulum (`bam/simulate.py`), its position and velocity
//! kept as state and integrated by BAM's step, so that thousands of logs or
//! candidate parameter sets replay at once on either backend.

mod bounds;
mod family;
mod fits;
mod servos;

pub use family::{
    bam_fit, model_friction_params, BamFamily, BamFit, BamParamRange, BamServo, BamSettings,
    BAM_MODELS,
};
pub use fits::BAM_FITS;
pub use servos::{
    current_command, voltage_duty, xl330_bus_torque, BamCurrentCfg, BamErobCfg, BamGo1Cfg,
    BamSts3215Cfg, BamVoltageCfg,
};

use super::ideal_pd::clip;
use super::spec::{param_slot, state_slot, Domain, Kind, LawIo, ParamSpec, PlaneSpec, StateSpec};
use super::{ActuatorCfg, CommandField};
use crate::error::Error;
use crate::math;

/// The input plane a servo reads its torque enable from.
pub const TORQUE_ENABLE: PlaneSpec = PlaneSpec {
    name: "torque_enable",
    unit: "0 or 1",
    doc: "The servo's torque enable: the motor torque is multiplied by it.",
    default: 1.0,
};

/// The input plane of the torque the simulator's other forces put on a joint.
pub const EXTERNAL_TORQUE: PlaneSpec = PlaneSpec {
    name: "external_torque",
    unit: "N·m",
    doc: "τ_e: the torque on the joint besides the motor's and the friction's \
          (gravity, contacts, coupling), read by load-dependent friction.",
    default: 0.0,
};

/// The output plane of the friction budget's static part.
pub const FRICTIONLOSS: PlaneSpec = PlaneSpec {
    name: "frictionloss",
    unit: "N·m",
    doc: "F_s: the dry friction to set as the joint's frictionloss.",
    default: 0.0,
};

/// The output plane of the friction budget's viscous coefficient.
pub const DAMPING_OUT: PlaneSpec = PlaneSpec {
    name: "damping",
    unit: "N·m·s/rad",
    doc: "K_v: the viscous friction to set as the joint's damping.",
    default: 0.0,
};

/// Every servo kind's input planes, in this order.
const SERVO_INPUTS: &[PlaneSpec] = &[TORQUE_ENABLE, EXTERNAL_TORQUE];
/// The output plane of the firmware's command.
pub const COMMAND: PlaneSpec = PlaneSpec {
    name: "command",
    unit: "V, A or N·m",
    doc: "The firmware's command (BAM's `control`): volts for voltage-controlled \
          servos, amperes for current-controlled ones and the eRob, N·m for the Go1.",
    default: 0.0,
};

/// Every servo kind's output planes, in this order.
const SERVO_OUTPUTS: &[PlaneSpec] = &[FRICTIONLOSS, DAMPING_OUT, COMMAND];
const IN_ENABLE: usize = 0;
const IN_EXTERNAL: usize = 1;
const OUT_FRICTIONLOSS: usize = 0;
const OUT_DAMPING: usize = 1;
const OUT_COMMAND: usize = 2;

/// A parameter with its BAM aliases.
pub(crate) use super::spec::aliased as param;

/// The M1–M6 friction budget's coefficients (BAM's parameter names), the
/// last 13 parameters of every servo kind.
///
/// `F_s = K_c + K_l·|τ_e − τ_m| + |K_e·τ_e − K_m·τ_m| +
/// s·(K_cs + K_ls·|τ_e − τ_m| + |K_es·τ_e − K_ms·τ_m| + Q)`, with the Stribeck factor
/// `s = exp(−|q̇/θ̇_s|^α)` and M6's quadratic term `Q = K_eq·τ_e²` when
/// `|τ_e| < |τ_m|`, `K_mq·τ_m²` when `|τ_e| > |τ_m|`, 0 on a tie, counted
/// only when `sign(τ_e) ≠ sign(τ_m)` (sign(0) = 0), as BAM's
/// `Model.compute_frictions` does (BAM's mjlab port has neither the gate nor
/// the tie rule). Each model is this formula with the coefficients it does
/// not fit at 0: M1 `K_c`; M2 adds `K_cs`; M3 `K_c`, `K_l`; M4 adds `K_cs`,
/// `K_ls`; M5 `K_c`, `K_e`, `K_m`, `K_cs`, `K_es`, `K_ms`; M6 adds `K_eq`,
/// `K_mq`. Zero terms add exactly 0, so each model's value is BAM's. `K_v`
/// is returned as the damping.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BamFriction {
    /// `K_c` (N·m). Default 0.
    pub friction_base: f32,
    /// `K_v` (N·m·s/rad). Default 0.
    pub friction_viscous: f32,
    /// `K_cs` (N·m). Default 0.
    pub friction_stribeck: f32,
    /// `θ̇_s` (rad/s), > 0. Default 1.
    pub dtheta_stribeck: f32,
    /// `α`, > 0. Default 1.
    pub alpha: f32,
    /// `K_l` (M3, M4). Default 0.
    pub load_friction_base: f32,
    /// `K_ls` (M4). Default 0.
    pub load_friction_stribeck: f32,
    /// `K_m` (M5, M6). Default 0.
    pub load_friction_motor: f32,
    /// `K_e` (M5, M6). Default 0.
    pub load_friction_external: f32,
    /// `K_ms` (M5, M6). Default 0.
    pub load_friction_motor_stribeck: f32,
    /// `K_es` (M5, M6). Default 0.
    pub load_friction_external_stribeck: f32,
    /// `K_mq` (M6, 1/N·m). Default 0.
    pub load_friction_motor_quad: f32,
    /// `K_eq` (M6, 1/N·m). Default 0.
    pub load_friction_external_quad: f32,
}

impl Default for BamFriction {
    fn default() -> Self {
        BamFriction {
            friction_base: 0.0,
            friction_viscous: 0.0,
            friction_stribeck: 0.0,
            dtheta_stribeck: 1.0,
            alpha: 1.0,
            load_friction_base: 0.0,
            load_friction_stribeck: 0.0,
            load_friction_motor: 0.0,
            load_friction_external: 0.0,
            load_friction_motor_stribeck: 0.0,
            load_friction_external_stribeck: 0.0,
            load_friction_motor_quad: 0.0,
            load_friction_external_quad: 0.0,
        }
    }
}

/// How many friction coefficients a servo kind ends its parameters with.
pub const FRICTION_COUNT: usize = 13;

/// The friction coefficients' specs, in [`BamFriction::values`] order.
pub const FRICTION_PARAMS: [ParamSpec; FRICTION_COUNT] = {
    use Domain::{NonNegative as Nn, Positive as Pos};
    [
        param(
            "friction_base",
            &["K_c"],
            "N·m",
            "Coulomb friction K_c.",
            Nn,
        ),
        param(
            "friction_viscous",
            &["K_v"],
            "N·m·s/rad",
            "Viscous friction K_v.",
            Nn,
        ),
        param(
            "friction_stribeck",
            &["K_cs"],
            "N·m",
            "Stribeck friction K_cs.",
            Nn,
        ),
        param(
            "dtheta_stribeck",
            &[],
            "rad/s",
            "Stribeck velocity θ̇_s.",
            Pos,
        ),
        param("alpha", &[], "1", "Stribeck exponent α.", Pos),
        param(
            "load_friction_base",
            &["K_l"],
            "1",
            "Load friction K_l (M3, M4).",
            Nn,
        ),
        param(
            "load_friction_stribeck",
            &["K_ls"],
            "1",
            "Stribeck load friction K_ls (M4).",
            Nn,
        ),
        param(
            "load_friction_motor",
            &["K_m"],
            "1",
            "Motor-side load friction K_m.",
            Nn,
        ),
        param(
            "load_friction_external",
            &["K_e"],
            "1",
            "External-side load friction K_e.",
            Nn,
        ),
        param(
            "load_friction_motor_stribeck",
            &["K_ms"],
            "1",
            "Motor-side Stribeck load friction K_ms.",
            Nn,
        ),
        param(
            "load_friction_external_stribeck",
            &["K_es"],
            "1",
            "External-side Stribeck load friction K_es.",
            Nn,
        ),
        param(
            "load_friction_motor_quad",
            &["K_mq"],
            "1/(N·m)",
            "Motor-side quadratic friction K_mq (M6).",
            Nn,
        ),
        param(
            "load_friction_external_quad",
            &["K_eq"],
            "1/(N·m)",
            "External-side quadratic friction K_eq (M6).",
            Nn,
        ),
    ]
};

impl BamFriction {
    /// The coefficients in [`FRICTION_PARAMS`] order.
    pub fn values(&self) -> [f32; FRICTION_COUNT] {
        [
            self.friction_base,
            self.friction_viscous,
            self.friction_stribeck,
            self.dtheta_stribeck,
            self.alpha,
            self.load_friction_base,
            self.load_friction_stribeck,
            self.load_friction_motor,
            self.load_friction_external,
            self.load_friction_motor_stribeck,
            self.load_friction_external_stribeck,
            self.load_friction_motor_quad,
            self.load_friction_external_quad,
        ]
    }

    /// `(F_s, K_v)` for these coefficients (see [`bam_friction`]).
    pub fn budget(&self, tau_m: f32, tau_e: f32, dq: f32) -> (f32, f32) {
        let v = self.values();
        bam_friction(|k| v[k], tau_m, tau_e, dq)
    }
}

/// The friction budget on its own, for a motor torque computed by any
/// law: the column forwards the effort target τ_m as the effort to apply
/// (a `<motor>` with gear 1), and writes F_s and K_v from τ_m, the
/// `external_torque` input and `q̇`.
impl Kind for BamFriction {
    const NAME: &'static str = "BamFriction";
    const KEY: &'static str = "bam_friction";
    const PARAMS: &'static [ParamSpec] = &FRICTION_PARAMS;
    const STATE: &'static [StateSpec] = &[];
    const READS: &'static [CommandField] = &[CommandField::Effort];
    const INPUTS: &'static [PlaneSpec] = &[EXTERNAL_TORQUE];
    const OUTPUTS: &'static [PlaneSpec] = &[FRICTIONLOSS, DAMPING_OUT];
    const WGSL: &'static str = include_str!("../../../../../shaders/bam.wgsl");

    fn param_value(&self, k: usize) -> f32 {
        self.values()[k]
    }

    fn from_fields<'de, D: serde::Deserializer<'de>>(fields: D) -> Result<Self, D::Error> {
        <Self as serde::Deserialize>::deserialize(fields)
    }

    /// An M6 budget of the size BAM fits for an XL-330, with the M3/M4
    /// load terms on too, so that every term of the formula runs.
    fn example() -> Self {
        BamFriction {
            friction_base: 0.0048,
            friction_viscous: 0.0054,
            friction_stribeck: 0.0047,
            dtheta_stribeck: 2.89,
            alpha: 8.68,
            load_friction_base: 0.02,
            load_friction_stribeck: 0.03,
            load_friction_motor: 0.267,
            load_friction_external: 0.001,
            load_friction_motor_stribeck: 0.002,
            load_friction_external_stribeck: 0.0808,
            load_friction_motor_quad: 0.00997,
            load_friction_external_quad: 0.0049,
        }
    }

    #[inline(always)]
    fn law<I: LawIo>(io: &mut I) -> f32 {
        let tau = io.target(CommandField::Effort);
        let (fs, kv) = bam_friction(|k| io.param(k), tau, io.input(0), io.vel());
        io.set_output(OUT_FRICTIONLOSS, fs);
        io.set_output(OUT_DAMPING, kv);
        tau
    }
}

/// numpy's `sign`: −1, 0 or 1 (a zero keeps its sign, which compares equal).
#[inline(always)]
fn sign(x: f32) -> f32 {
    if x > 0.0 {
        1.0
    } else if x < 0.0 {
        -1.0
    } else {
        x
    }
}

/// The friction budget `(F_s, K_v)` from the motor torque, the external
/// torque and the joint velocity, `p(k)` the `k`-th coefficient in
/// [`FRICTION_PARAMS`] order (twin of `bam_friction` in `shaders/bam.wgsl`).
#[inline(always)]
pub fn bam_friction(p: impl Fn(usize) -> f32, tau_m: f32, tau_e: f32, dq: f32) -> (f32, f32) {
    let load = (tau_e - tau_m).abs();
    let directional = (tau_e * p(8) - tau_m * p(7)).abs();
    let directional_stribeck = (tau_e * p(10) - tau_m * p(9)).abs();
    let x = (dq / p(3)).abs();
    // BAM takes 0^α as 0 for any α; `pow` runs either way, so that the
    // loop has no branch.
    let x_alpha = math::pow(x, p(4));
    let s = math::exp(-(if x == 0.0 { 0.0 } else { x_alpha }));
    let (ae, am) = (tau_e.abs(), tau_m.abs());
    // Both loaded whichever is used: a load under a branch keeps the
    // CPU's loop from running in vector lanes.
    let (quad_motor, quad_external) = (p(11), p(12));
    let quad = if ae < am {
        quad_external * (ae * ae)
    } else if ae > am {
        quad_motor * (am * am)
    } else {
        0.0
    };
    let gate = if sign(tau_e) != sign(tau_m) { 1.0 } else { 0.0 };
    let mut fs = p(0);
    fs += p(5) * load;
    fs += directional;
    fs += s * p(2);
    fs += p(6) * load * s;
    fs += directional_stribeck * s;
    fs += s * quad * gate;
    (fs, p(1))
}

/// `a` then `b`, as one array of `M = a.len() + b.len()` entries (the
/// kinds' parameter and state lists are built from shared parts).
pub(crate) const fn concat<T: Copy, const M: usize>(a: &[T], b: &[T]) -> [T; M] {
    assert!(M == a.len() + b.len() && M > 0);
    let mut out = [if a.is_empty() { b[0] } else { a[0] }; M];
    let mut i = 0;
    while i < M {
        out[i] = if i < a.len() { a[i] } else { b[i - a.len()] };
        i += 1;
    }
    out
}

/// What a servo firmware adds to the kind spec: its motor torque. Each
/// servo kind's parameters are its own, then [`FRICTION_PARAMS`]; its law is
/// [`servo_law`], and its testbench twin is [`BamBenchCfg<Self>`].
pub trait Servo: Kind {
    /// The testbench twin's [`Kind::NAME`].
    const BENCH_NAME: &'static str;
    /// The testbench twin's [`Kind::KEY`].
    const BENCH_KEY: &'static str;
    /// The testbench twin's parameters: [`Kind::PARAMS`], then
    /// [`BENCH_PARAMS`] (less `dt` when the servo has its own).
    const BENCH_PARAMS: &'static [ParamSpec];
    /// The testbench twin's state: [`Kind::STATE`], then [`BENCH_STATE`].
    const BENCH_STATE: &'static [StateSpec];

    /// The firmware's command (V, A or N·m: BAM's `control`) and the motor
    /// torque τ_m for goal `goal` at the raw position `q` and velocity `dq`,
    /// `enable` the torque enable. Parameter slots are the servo's own (the
    /// bench keeps them).
    fn motor<I: LawIo>(io: &mut I, goal: f32, q: f32, dq: f32, enable: f32) -> (f32, f32);
}

/// A servo kind's law: τ_m from the command and the joint state, and the
/// friction budget from τ_m, the external torque input and `q̇`.
#[inline(always)]
pub fn servo_law<S: Servo, I: LawIo>(io: &mut I) -> f32 {
    let (goal, q, dq) = (io.target(CommandField::Position), io.pos(), io.vel());
    let enable = io.input(IN_ENABLE);
    let (command, tau) = S::motor(io, goal, q, dq, enable);
    let first = S::PARAMS.len() - FRICTION_COUNT;
    let (fs, kv) = bam_friction(|k| io.param(first + k), tau, io.input(IN_EXTERNAL), dq);
    io.set_output(OUT_FRICTIONLOSS, fs);
    io.set_output(OUT_DAMPING, kv);
    io.set_output(OUT_COMMAND, command);
    tau
}

/// The DC motor torque of a voltage-driven servo: `k_t·V/R − k_t²·q̇/R`.
#[inline(always)]
pub fn dc_motor_torque(kt: f32, resistance: f32, volts: f32, dq: f32) -> f32 {
    let mut tau = kt * volts / resistance;
    tau -= kt * kt * dq / resistance;
    tau
}

// ---------------------------------------------------------------- testbench

/// Standard gravity in BAM's testbench (its sign is part of the formula).
pub const BENCH_GRAVITY: f32 = -9.80665;
/// The testbench's velocity clip (rad/s).
pub const BENCH_MAX_VELOCITY: f32 = 100.0;

/// BAM's pendulum testbench (`bam/testbench.py`, `bam/logs.py`): what a
/// log records about its bench, and the servo fit's armature and encoder
/// offset.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pendulum {
    /// The pendulum's end mass (kg).
    pub mass: f32,
    /// Its length (m).
    pub length: f32,
    /// The arm's own mass (kg), spread along it; BAM's logs default to 0.
    #[serde(default)]
    pub arm_mass: f32,
    /// The servo's rotor inertia (kg·m²), from its fit.
    #[serde(default)]
    pub armature: f32,
    /// The fit's encoder offset (rad): gravity acts at `q + q_offset`.
    #[serde(default)]
    pub q_offset: f32,
    /// The log's step (s).
    pub dt: f32,
}

/// The testbench's own parameters, after the servo's.
pub const BENCH_PARAMS: [ParamSpec; 6] = [
    param("mass", &[], "kg", "Pendulum end mass.", Domain::NonNegative),
    param("length", &[], "m", "Pendulum length.", Domain::NonNegative),
    param(
        "arm_mass",
        &[],
        "kg",
        "Pendulum arm mass.",
        Domain::NonNegative,
    ),
    param(
        "armature",
        &[],
        "kg·m²",
        "Servo rotor inertia.",
        Domain::NonNegative,
    ),
    param(
        "q_offset",
        &[],
        "rad",
        "Encoder offset: gravity acts at q + q_offset.",
        Domain::Finite,
    ),
    param("dt", &[], "s", "The step.", Domain::Positive),
];

/// The testbench's state, after the servo's: the pendulum's position and
/// velocity (set them from a log's first entry after a reset).
pub const BENCH_STATE: [StateSpec; 2] = [
    StateSpec {
        name: "q",
        unit: "rad",
        doc: "The bench's joint position, as the servo reads it (without q_offset).",
        reset: 0.0,
    },
    StateSpec {
        name: "dq",
        unit: "rad/s",
        doc: "The bench's joint velocity.",
        reset: 0.0,
    },
];

/// The testbench's extra output: the joint acceleration of the step.
pub const ACCELERATION: PlaneSpec = PlaneSpec {
    name: "acceleration",
    unit: "rad/s²",
    doc: "q̈ of the testbench step.",
    default: 0.0,
};

/// The testbench's extra output: the torque gravity puts on the joint.
pub const GRAVITY_TORQUE: PlaneSpec = PlaneSpec {
    name: "gravity_torque",
    unit: "N·m",
    doc: "τ_e of the testbench step: gravity at q + q_offset.",
    default: 0.0,
};

const BENCH_INPUTS: &[PlaneSpec] = &[TORQUE_ENABLE];
const BENCH_OUTPUTS: &[PlaneSpec] = &[
    FRICTIONLOSS,
    DAMPING_OUT,
    COMMAND,
    ACCELERATION,
    GRAVITY_TORQUE,
];
const OUT_ACCELERATION: usize = 3;
const OUT_GRAVITY: usize = 4;

impl Pendulum {
    /// The values in [`BENCH_PARAMS`] order.
    pub fn values(&self) -> [f32; 6] {
        [
            self.mass,
            self.length,
            self.arm_mass,
            self.armature,
            self.q_offset,
            self.dt,
        ]
    }
}

/// A servo on BAM's pendulum testbench: one env is one bench (its log, its
/// parameter set). Each step reads the goal (the position target) and the
/// torque enable, computes the firmware's command from the bench's own
/// state `q`, `q̇` (the command's `pos` and `vel` are not read), the motor
/// torque, gravity `τ_e = (m + m_arm/2)·g·ℓ·sin(q + q_offset)`, the friction
/// budget from τ_m and τ_e, and BAM's step: `τ_stop = (I/dt)·q̇ + τ_m + τ_e`,
/// `τ_f = −sign(τ_stop)·min(|τ_stop|, F_s + K_v·|q̇|)`, `q̈ = (τ_m + τ_e + τ_f)/I`,
/// `q̇ ← clip(q̇ + q̈·dt, ±100)`, `q ← q + (q̇·dt + ½q̈·dt²)` with the new `q̇`,
/// where `I = m·ℓ² + m_arm·ℓ²/3 + armature`. Its ctrl column is τ_m; its
/// outputs are F_s, K_v, the firmware's command, q̈ and τ_e; `read_state("q")` after a step is BAM's
/// simulated position before the next log entry.
#[derive(Debug, Clone, PartialEq)]
pub struct BamBenchCfg<S> {
    /// The servo.
    pub servo: S,
    /// The bench.
    pub pendulum: Pendulum,
}

impl<S: Servo> BamBenchCfg<S> {
    const DT: usize = param_slot(S::BENCH_PARAMS, "dt");
    const MASS: usize = param_slot(S::BENCH_PARAMS, "mass");
    const Q: usize = state_slot(S::BENCH_STATE, "q");
    const DQ: usize = state_slot(S::BENCH_STATE, "dq");
}

impl<S: Servo> Kind for BamBenchCfg<S>
where
    BamBenchCfg<S>: Into<ActuatorCfg>,
{
    const NAME: &'static str = S::BENCH_NAME;
    const KEY: &'static str = S::BENCH_KEY;
    const PARAMS: &'static [ParamSpec] = S::BENCH_PARAMS;
    const STATE: &'static [StateSpec] = S::BENCH_STATE;
    const READS: &'static [CommandField] = &[CommandField::Position];
    const INPUTS: &'static [PlaneSpec] = BENCH_INPUTS;
    const OUTPUTS: &'static [PlaneSpec] = BENCH_OUTPUTS;
    const WGSL: &'static str = S::WGSL;

    fn param_value(&self, k: usize) -> f32 {
        let own = S::PARAMS.len();
        if k < own {
            self.servo.param_value(k)
        } else {
            // A servo with its own `dt` lists the bench's without it.
            let bench = &S::BENCH_PARAMS[k];
            let i = BENCH_PARAMS.iter().position(|p| p.name == bench.name);
            self.pendulum.values()[i.expect("a bench parameter")]
        }
    }

    fn example() -> Self {
        BamBenchCfg {
            servo: S::example(),
            pendulum: Pendulum {
                mass: 0.49,
                length: 0.1,
                arm_mass: 0.02,
                armature: 0.0018,
                q_offset: 0.03,
                dt: 0.005,
            },
        }
    }

    fn validate(&self, group: &str) -> Result<(), Error> {
        self.servo.validate(group)
    }

    fn group_data(&self) -> Vec<f32> {
        self.servo.group_data()
    }

    #[inline(always)]
    fn law<I: LawIo>(io: &mut I) -> f32 {
        bench_law::<S, I>(io, Self::MASS, Self::DT, Self::Q, Self::DQ)
    }
}

/// One testbench step (see [`BamBenchCfg`]); `mass` is the first bench
/// parameter's slot, `dt` the step's, `q`/`dq` the state slots.
#[inline(always)]
pub fn bench_law<S: Servo, I: LawIo>(
    io: &mut I,
    mass: usize,
    dt: usize,
    q: usize,
    dq: usize,
) -> f32 {
    let (m, l, ma, armature, q_offset) = (
        io.param(mass),
        io.param(mass + 1),
        io.param(mass + 2),
        io.param(mass + 3),
        io.param(mass + 4),
    );
    let dt = io.param(dt);
    let (pos, vel) = (io.state(q), io.state(dq));
    let goal = io.target(CommandField::Position);
    let enable = io.input(IN_ENABLE);
    let (command, tau_m) = S::motor(io, goal, pos, vel, enable);
    let tau_e = (m + ma / 2.0) * BENCH_GRAVITY * l * crate::math::sin(pos + q_offset);
    let mut inertia = m * (l * l);
    inertia += ma / 3.0 * (l * l);
    inertia += armature;
    let first = S::PARAMS.len() - FRICTION_COUNT;
    let (fs, kv) = bam_friction(|k| io.param(first + k), tau_m, tau_e, vel);
    let mut net = tau_m + tau_e;
    let tau_stop = inertia / dt * vel + net;
    let tau_f = -sign(tau_stop) * tau_stop.abs().min(fs + kv * vel.abs());
    net += tau_f;
    let ddq = net / inertia;
    let vel_next = clip(vel + ddq * dt, -BENCH_MAX_VELOCITY, BENCH_MAX_VELOCITY);
    let pos_next = pos + (vel_next * dt + 0.5 * ddq * (dt * dt));
    io.set_state(q, pos_next);
    io.set_state(dq, vel_next);
    io.set_output(OUT_FRICTIONLOSS, fs);
    io.set_output(OUT_DAMPING, kv);
    io.set_output(OUT_COMMAND, command);
    io.set_output(OUT_ACCELERATION, ddq);
    io.set_output(OUT_GRAVITY, tau_e);
    tau_m
}
