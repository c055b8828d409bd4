//! The TOML form of a scenario file, as serde reads it, and the
//! conversions of its enums into the library's.

use super::*;

pub(super) type S<T> = Spanned<T>;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FileToml {
    pub(super) name: Option<String>,
    pub(super) num_envs: S<usize>,
    pub(super) steps: S<usize>,
    pub(super) dt: S<f64>,
    #[serde(default)]
    pub(super) seed: u32,
    #[serde(default)]
    pub(super) sort_actuators: bool,
    pub(super) robot: S<RobotToml>,
    pub(super) groups: Vec<S<GroupToml>>,
    #[serde(default)]
    pub(super) command: Option<S<CommandSpec>>,
    #[serde(default)]
    pub(super) output: Option<S<OutputSpec>>,
    /// Input planes held at one value for the whole run.
    #[serde(default)]
    pub(super) inputs: Option<S<std::collections::BTreeMap<String, f32>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RobotToml {
    #[serde(default)]
    pub(super) joints: Option<S<Vec<String>>>,
    #[serde(default)]
    pub(super) tendons: Option<S<Vec<String>>>,
    #[serde(default)]
    pub(super) sites: Option<S<Vec<String>>>,
    #[serde(default)]
    pub(super) native_actuators: Vec<NativeToml>,
    #[serde(default)]
    pub(super) fixed_tendons: Option<S<Vec<FixedTendonToml>>>,
    /// `joint = [lo, hi]`: MuJoCo's joint `actuatorfrcrange`.
    #[serde(default)]
    pub(super) joint_actuator_force_ranges:
        Option<S<std::collections::BTreeMap<String, (f32, f32)>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FixedTendonToml {
    pub(super) name: String,
    /// `[[joint, coef], …]`.
    pub(super) joints: Vec<(String, f32)>,
    #[serde(default)]
    pub(super) actuator_force_range: Option<(f32, f32)>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct NativeToml {
    pub(super) name: String,
    #[serde(default)]
    pub(super) transmission: TransmissionToml,
    pub(super) target: String,
    pub(super) gain: GainToml,
    pub(super) bias: BiasToml,
    #[serde(default)]
    pub(super) dyn_type: DynToml,
    #[serde(default)]
    pub(super) gainprm: [f32; 3],
    #[serde(default)]
    pub(super) biasprm: [f32; 3],
}

#[derive(Deserialize, Default, Clone, Copy)]
#[serde(rename_all = "snake_case")]
pub(super) enum TransmissionToml {
    #[default]
    Joint,
    Tendon,
    Site,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
pub(super) enum GainToml {
    Fixed,
    Affine,
    Muscle,
    User,
    #[serde(rename = "dcmotor")]
    DcMotor,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
pub(super) enum BiasToml {
    None,
    Affine,
    Muscle,
    User,
    #[serde(rename = "dcmotor")]
    DcMotor,
}

#[derive(Deserialize, Default, Clone, Copy)]
#[serde(rename_all = "snake_case")]
pub(super) enum DynToml {
    #[default]
    None,
    Integrator,
    Filter,
    #[serde(alias = "filterexact")]
    FilterExact,
    Muscle,
    User,
}

#[derive(Deserialize, Clone, Copy, PartialEq, Eq, Debug)]
#[serde(rename_all = "snake_case")]
pub(super) enum KindToml {
    /// A registered kind this reader has no code for: its settings are read
    /// by [`sinew::KindId::from_fields`] from the group's other keys.
    #[serde(skip)]
    Other(sinew::KindId),
    IdealPd,
    DcMotor,
    BuiltinPosition,
    BuiltinVelocity,
    BuiltinMotor,
    BuiltinMuscle,
    Wrapped,
    MjGeneral,
    LearnedMlp,
    LstmNet,
}

#[derive(Deserialize, Clone, Copy, PartialEq, Eq, Debug)]
#[serde(rename_all = "snake_case")]
pub(super) enum OrderToml {
    PosVel,
    VelPos,
}

#[derive(Deserialize, Clone, Copy, PartialEq, Eq, Debug)]
#[serde(rename_all = "snake_case")]
pub(super) enum HistoryInitToml {
    Backfill,
    Zeros,
}

#[derive(Deserialize, Clone, Copy, PartialEq, Eq, Debug)]
#[serde(rename_all = "snake_case")]
pub(super) enum FieldToml {
    Position,
    Velocity,
    Effort,
}

/// `armature = 0.01` or mjlab's reflected inertia of a two-stage planetary
/// gearbox, `I0·(r1·r2)² + I1·r2² + I2` (r0 must be 1).
#[derive(Deserialize, Clone)]
#[serde(untagged)]
pub(super) enum ArmatureToml {
    Value(f32),
    Planetary(PlanetaryToml),
}

#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub(super) struct PlanetaryToml {
    pub(super) rotor_inertia: [f64; 3],
    pub(super) gear_ratio: [f64; 3],
}

/// mjlab's gains from a natural frequency and damping ratio on the armature:
/// `kp = a·ω²`, `kd = 2ζ·a·ω`, `ω = 2π·f`.
#[derive(Deserialize, Clone, Copy)]
#[serde(deny_unknown_fields)]
pub(super) struct GainsToml {
    pub(super) natural_frequency_hz: f64,
    pub(super) damping_ratio: f64,
}

#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub(super) struct DelayToml {
    #[serde(default)]
    pub(super) min_lag: u32,
    pub(super) max_lag: u32,
    #[serde(default)]
    pub(super) hold_prob: f32,
    #[serde(default)]
    pub(super) update_period: u32,
    #[serde(default = "yes")]
    pub(super) per_env_phase: bool,
    #[serde(default)]
    pub(super) resample: ResampleToml,
    /// `"auto"` (mjlab's rule, default), `"own"`, or a buffer name shared by
    /// every group that names it.
    #[serde(default)]
    pub(super) share: Option<String>,
}

#[derive(Deserialize, Clone, Copy, Default)]
#[serde(rename_all = "snake_case")]
pub(super) enum ResampleToml {
    #[default]
    EveryStep,
    OnReset,
}

/// A group as the reader knows it. Unknown keys are checked by hand
/// against [`group_keys`] (or handed to a kind read by
/// [`sinew::KindId::from_fields`]), so serde ignores them here.
#[derive(Deserialize)]
pub(super) struct GroupToml {
    pub(super) name: S<String>,
    pub(super) targets: S<Vec<S<String>>>,
    /// The kind; a `preset` names it instead.
    pub(super) kind: Option<S<String>>,
    /// One of BAM's shipped servo fits (`xl330/m6`): the kind and its
    /// settings, which the group's own fields override.
    pub(super) preset: Option<S<String>>,
    #[serde(default)]
    pub(super) transmission: TransmissionToml,
    pub(super) stiffness: Option<S<f32>>,
    pub(super) damping: Option<S<f32>>,
    pub(super) effort_limit: Option<S<f32>>,
    pub(super) saturation_effort: Option<S<f32>>,
    pub(super) velocity_limit: Option<S<f32>>,
    pub(super) gains: Option<S<GainsToml>>,
    pub(super) gear: Option<S<f32>>,
    pub(super) command_field: Option<S<FieldToml>>,
    pub(super) armature: Option<S<ArmatureToml>>,
    pub(super) frictionloss: Option<S<f32>>,
    pub(super) viscous_damping: Option<S<f32>>,
    pub(super) delay: Option<S<DelayToml>>,
    // Muscle (MuJoCo `<muscle>`), MuJoCo's defaults.
    pub(super) length_range: Option<S<(f32, f32)>>,
    pub(super) timeconst: Option<S<(f32, f32)>>,
    pub(super) tausmooth: Option<S<f32>>,
    pub(super) range: Option<S<(f32, f32)>>,
    pub(super) force: Option<S<f32>>,
    pub(super) scale: Option<S<f32>>,
    pub(super) lmin: Option<S<f32>>,
    pub(super) lmax: Option<S<f32>>,
    pub(super) vmax: Option<S<f32>>,
    pub(super) fpmax: Option<S<f32>>,
    pub(super) fvmax: Option<S<f32>>,
    pub(super) acc0: Option<S<f32>>,
    // Builtin and wrapped kinds: compute MuJoCo's force instead of passing through.
    pub(super) compute_force: Option<S<bool>>,
    // MuJoCo `<general>`, as mjModel stores it.
    pub(super) dyn_type: Option<S<DynToml>>,
    pub(super) dynprm: Option<S<Vec<f32>>>,
    pub(super) gain_type: Option<S<GainToml>>,
    pub(super) gainprm: Option<S<Vec<f32>>>,
    pub(super) bias_type: Option<S<BiasToml>>,
    pub(super) biasprm: Option<S<Vec<f32>>>,
    pub(super) ctrl_range: Option<S<(f32, f32)>>,
    pub(super) force_range: Option<S<(f32, f32)>>,
    pub(super) act_range: Option<S<(f32, f32)>>,
    pub(super) act_early: Option<S<bool>>,
    // Learned networks: a safetensors file (relative to the scenario), the
    // layer order and activations when its metadata lacks them.
    pub(super) network: Option<S<String>>,
    pub(super) layers: Option<S<Vec<String>>>,
    pub(super) activations: Option<S<Vec<String>>>,
    pub(super) history_length: Option<S<u32>>,
    pub(super) taps: Option<S<Vec<u32>>>,
    pub(super) input_order: Option<S<OrderToml>>,
    pub(super) history_init: Option<S<HistoryInitToml>>,
    pub(super) pos_scale: Option<S<f32>>,
    pub(super) vel_scale: Option<S<f32>>,
    pub(super) torque_scale: Option<S<f32>>,
}

pub(super) fn transmission(t: TransmissionToml) -> Transmission {
    match t {
        TransmissionToml::Joint => Transmission::Joint,
        TransmissionToml::Tendon => Transmission::Tendon,
        TransmissionToml::Site => Transmission::Site,
    }
}

pub(super) fn command_field(f: FieldToml) -> CommandField {
    match f {
        FieldToml::Position => CommandField::Position,
        FieldToml::Velocity => CommandField::Velocity,
        FieldToml::Effort => CommandField::Effort,
    }
}

pub(super) fn gain_type(g: GainToml) -> GainType {
    match g {
        GainToml::Fixed => GainType::Fixed,
        GainToml::Affine => GainType::Affine,
        GainToml::Muscle => GainType::Muscle,
        GainToml::User => GainType::User,
        GainToml::DcMotor => GainType::DcMotor,
    }
}

pub(super) fn bias_type(b: BiasToml) -> BiasType {
    match b {
        BiasToml::None => BiasType::None,
        BiasToml::Affine => BiasType::Affine,
        BiasToml::Muscle => BiasType::Muscle,
        BiasToml::User => BiasType::User,
        BiasToml::DcMotor => BiasType::DcMotor,
    }
}

pub(super) fn dyn_type(d: DynToml) -> DynType {
    match d {
        DynToml::None => DynType::None,
        DynToml::Integrator => DynType::Integrator,
        DynToml::Filter => DynType::Filter,
        DynToml::FilterExact => DynType::FilterExact,
        DynToml::Muscle => DynType::Muscle,
        DynToml::User => DynType::User,
    }
}
