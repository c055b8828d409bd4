//! Scenario files: a robot, its actuator groups, a batch size, a command
//! source and the outputs to write, in TOML. Unknown fields are errors, and
//! every error names the field and the line.
//!
//! ```toml
//! num_envs = 4096
//! steps = 1000
//! dt = 0.005                  # physics step (s): the time axis of the command
//! seed = 0                    # the lag RNG's seed
//!
//! [robot]
//! joints = ["hip", "knee"]
//!
//! [[groups]]
//! name = "legs"
//! targets = [".*"]
//! kind = "dc_motor"
//! effort_limit = 23.7
//! saturation_effort = 23.7
//! velocity_limit = 30.1
//! armature = { rotor_inertia = [1.1e-4, 0, 0], gear_ratio = [1, 6, 1] }
//! gains = { natural_frequency_hz = 10, damping_ratio = 2 }
//! delay = { min_lag = 0, max_lag = 2 }
//!
//! [command]
//! source = "sine"             # sine | chirp | step | uniform | npy
//! amplitude = 0.3
//! frequency = 1.0
//! ```

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use sinew::{
    Activation, ActuatorCfg, BiasType, BuiltinMotorCfg, BuiltinMuscleCfg, BuiltinPositionCfg,
    BuiltinVelocityCfg, CommandField, DcMotorCfg, DelayCfg, DelayShare, DynType, FixedTendon,
    GainType, GroupCfg, HistoryInit, IdealPdCfg, InputOrder, LearnedMlpCfg, LstmNet, LstmNetCfg,
    MjGeneralCfg, Mlp, NativeActuator, NetSpec, Plan, PlanOptions, Resample, Robot, Transmission,
    WrappedCfg,
};
use toml::Spanned;

use crate::command::CommandSpec;
use crate::CliError;

/// The largest scenario file read (bytes).
pub const MAX_SCENARIO_BYTES: u64 = 16 << 20;

/// A parsed scenario, ready to compile.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Display name (the file's `name`, else its file stem).
    pub name: String,
    /// Where it came from (a path or `preset <name>`), for messages.
    pub origin: String,
    /// Envs per batch.
    pub num_envs: usize,
    /// Steps `run` takes.
    pub steps: usize,
    /// Physics step (s).
    pub dt: f64,
    /// The robot's target names.
    pub robot: Robot,
    /// The groups, compiled from the file.
    pub groups: Vec<GroupCfg>,
    /// Plan options (seed, mjlab's actuator sort).
    pub options: PlanOptions,
    /// How each step's command is made.
    pub command: CommandSpec,
    /// What `run` writes.
    pub output: OutputSpec,
    /// The `[inputs]` table: input planes (e.g. `torque_enable`,
    /// `muscle_target_neg`) held at one value for every (env, target) the
    /// whole run; planes it does not name keep their defaults.
    pub inputs: std::collections::BTreeMap<String, f32>,
    /// Line of each `(group, field)` for messages about values.
    lines: HashMap<(String, String), usize>,
    /// Line of each top-level and robot field (`num_envs`, `dt`,
    /// `robot.joints`, `output`, …).
    file_lines: HashMap<&'static str, usize>,
}

/// What `sinew run` writes besides its summary.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputSpec {
    /// `ctrl.npy`, `(steps written, envs, num_ctrl)` f32. Default true.
    #[serde(default = "yes")]
    pub ctrl: bool,
    /// `nonfinite.npy`, `(steps written, envs)` u8: 1 where the step zeroed
    /// the env. Default true.
    #[serde(default = "yes")]
    pub nonfinite: bool,
    /// `lags_<group>.npy`, `(steps written, envs)` u32, one per delay buffer.
    /// Default false.
    #[serde(default)]
    pub lags: bool,
    /// Which envs to write (default all).
    #[serde(default)]
    pub envs: Option<Vec<u32>>,
    /// Write every n-th step (default 1).
    #[serde(default = "one")]
    pub every: usize,
}

fn yes() -> bool {
    true
}
fn one() -> usize {
    1
}

impl Default for OutputSpec {
    fn default() -> Self {
        OutputSpec {
            ctrl: true,
            nonfinite: true,
            lags: false,
            envs: None,
            every: 1,
        }
    }
}

type S<T> = Spanned<T>;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileToml {
    name: Option<String>,
    num_envs: S<usize>,
    steps: S<usize>,
    dt: S<f64>,
    #[serde(default)]
    seed: u32,
    #[serde(default)]
    sort_actuators: bool,
    robot: S<RobotToml>,
    groups: Vec<S<GroupToml>>,
    #[serde(default)]
    command: Option<S<CommandSpec>>,
    #[serde(default)]
    output: Option<S<OutputSpec>>,
    /// Input planes held at one value for the whole run.
    #[serde(default)]
    inputs: Option<S<std::collections::BTreeMap<String, f32>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RobotToml {
    #[serde(default)]
    joints: Option<S<Vec<String>>>,
    #[serde(default)]
    tendons: Option<S<Vec<String>>>,
    #[serde(default)]
    sites: Option<S<Vec<String>>>,
    #[serde(default)]
    native_actuators: Vec<NativeToml>,
    #[serde(default)]
    fixed_tendons: Option<S<Vec<FixedTendonToml>>>,
    /// `joint = [lo, hi]`: MuJoCo's joint `actuatorfrcrange`.
    #[serde(default)]
    joint_actuator_force_ranges: Option<S<std::collections::BTreeMap<String, (f32, f32)>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FixedTendonToml {
    name: String,
    /// `[[joint, coef], …]`.
    joints: Vec<(String, f32)>,
    #[serde(default)]
    actuator_force_range: Option<(f32, f32)>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NativeToml {
    name: String,
    #[serde(default)]
    transmission: TransmissionToml,
    target: String,
    gain: GainToml,
    bias: BiasToml,
    #[serde(default)]
    dyn_type: DynToml,
    #[serde(default)]
    gainprm: [f32; 3],
    #[serde(default)]
    biasprm: [f32; 3],
}

#[derive(Deserialize, Default, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum TransmissionToml {
    #[default]
    Joint,
    Tendon,
    Site,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum GainToml {
    Fixed,
    Affine,
    Muscle,
    User,
    #[serde(rename = "dcmotor")]
    DcMotor,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum BiasToml {
    None,
    Affine,
    Muscle,
    User,
    #[serde(rename = "dcmotor")]
    DcMotor,
}

#[derive(Deserialize, Default, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum DynToml {
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
enum KindToml {
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
enum OrderToml {
    PosVel,
    VelPos,
}

#[derive(Deserialize, Clone, Copy, PartialEq, Eq, Debug)]
#[serde(rename_all = "snake_case")]
enum HistoryInitToml {
    Backfill,
    Zeros,
}

#[derive(Deserialize, Clone, Copy, PartialEq, Eq, Debug)]
#[serde(rename_all = "snake_case")]
enum FieldToml {
    Position,
    Velocity,
    Effort,
}

/// `armature = 0.01` or mjlab's reflected inertia of a two-stage planetary
/// gearbox, `I0·(r1·r2)² + I1·r2² + I2` (r0 must be 1).
#[derive(Deserialize, Clone)]
#[serde(untagged)]
enum ArmatureToml {
    Value(f32),
    Planetary(PlanetaryToml),
}

#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct PlanetaryToml {
    rotor_inertia: [f64; 3],
    gear_ratio: [f64; 3],
}

/// mjlab's gains from a natural frequency and damping ratio on the armature:
/// `kp = a·ω²`, `kd = 2ζ·a·ω`, `ω = 2π·f`.
#[derive(Deserialize, Clone, Copy)]
#[serde(deny_unknown_fields)]
struct GainsToml {
    natural_frequency_hz: f64,
    damping_ratio: f64,
}

#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct DelayToml {
    #[serde(default)]
    min_lag: u32,
    max_lag: u32,
    #[serde(default)]
    hold_prob: f32,
    #[serde(default)]
    update_period: u32,
    #[serde(default = "yes")]
    per_env_phase: bool,
    #[serde(default)]
    resample: ResampleToml,
    /// `"auto"` (mjlab's rule, default), `"own"`, or a buffer name shared by
    /// every group that names it.
    #[serde(default)]
    share: Option<String>,
}

#[derive(Deserialize, Clone, Copy, Default)]
#[serde(rename_all = "snake_case")]
enum ResampleToml {
    #[default]
    EveryStep,
    OnReset,
}

/// A group as the reader knows it. Unknown keys are checked by hand
/// against [`group_keys`] (or handed to a kind read by
/// [`sinew::KindId::from_fields`]), so serde ignores them here.
#[derive(Deserialize)]
struct GroupToml {
    name: S<String>,
    targets: S<Vec<S<String>>>,
    /// The kind; a `preset` names it instead.
    kind: Option<S<String>>,
    /// One of BAM's shipped servo fits (`xl330/m6`): the kind and its
    /// settings, which the group's own fields override.
    preset: Option<S<String>>,
    #[serde(default)]
    transmission: TransmissionToml,
    stiffness: Option<S<f32>>,
    damping: Option<S<f32>>,
    effort_limit: Option<S<f32>>,
    saturation_effort: Option<S<f32>>,
    velocity_limit: Option<S<f32>>,
    gains: Option<S<GainsToml>>,
    gear: Option<S<f32>>,
    command_field: Option<S<FieldToml>>,
    armature: Option<S<ArmatureToml>>,
    frictionloss: Option<S<f32>>,
    viscous_damping: Option<S<f32>>,
    delay: Option<S<DelayToml>>,
    // Muscle (MuJoCo `<muscle>`), MuJoCo's defaults.
    length_range: Option<S<(f32, f32)>>,
    timeconst: Option<S<(f32, f32)>>,
    tausmooth: Option<S<f32>>,
    range: Option<S<(f32, f32)>>,
    force: Option<S<f32>>,
    scale: Option<S<f32>>,
    lmin: Option<S<f32>>,
    lmax: Option<S<f32>>,
    vmax: Option<S<f32>>,
    fpmax: Option<S<f32>>,
    fvmax: Option<S<f32>>,
    acc0: Option<S<f32>>,
    // Builtin and wrapped kinds: compute MuJoCo's force instead of passing through.
    compute_force: Option<S<bool>>,
    // MuJoCo `<general>`, as mjModel stores it.
    dyn_type: Option<S<DynToml>>,
    dynprm: Option<S<Vec<f32>>>,
    gain_type: Option<S<GainToml>>,
    gainprm: Option<S<Vec<f32>>>,
    bias_type: Option<S<BiasToml>>,
    biasprm: Option<S<Vec<f32>>>,
    ctrl_range: Option<S<(f32, f32)>>,
    force_range: Option<S<(f32, f32)>>,
    act_range: Option<S<(f32, f32)>>,
    act_early: Option<S<bool>>,
    // Learned networks: a safetensors file (relative to the scenario), the
    // layer order and activations when its metadata lacks them.
    network: Option<S<String>>,
    layers: Option<S<Vec<String>>>,
    activations: Option<S<Vec<String>>>,
    history_length: Option<S<u32>>,
    taps: Option<S<Vec<u32>>>,
    input_order: Option<S<OrderToml>>,
    history_init: Option<S<HistoryInitToml>>,
    pos_scale: Option<S<f32>>,
    vel_scale: Option<S<f32>>,
    torque_scale: Option<S<f32>>,
}

/// Every key of a `[[groups]]` table the reader knows: [`GroupToml`]'s
/// fields, as its `Deserialize` implementation declares them.
fn group_keys() -> &'static [&'static str] {
    static KEYS: std::sync::OnceLock<&'static [&'static str]> = std::sync::OnceLock::new();
    KEYS.get_or_init(|| {
        let found = std::cell::Cell::new(&[][..]);
        let _ = GroupToml::deserialize(FieldNames(&found));
        found.get()
    })
}

/// A deserializer that only records the field names a struct asks for.
struct FieldNames<'a>(&'a std::cell::Cell<&'static [&'static str]>);

impl<'de> serde::Deserializer<'de> for FieldNames<'_> {
    type Error = serde::de::value::Error;

    fn deserialize_any<V: serde::de::Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(serde::de::Error::custom("field names only"))
    }

    fn deserialize_struct<V: serde::de::Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.0.set(fields);
        Err(serde::de::Error::custom("field names only"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

/// The keys of a group that are the group's own, not its kind's.
const GROUP_OWN_KEYS: &[&str] = &[
    "name",
    "targets",
    "kind",
    "preset",
    "transmission",
    "armature",
    "frictionloss",
    "viscous_damping",
    "delay",
];

/// The byte offset of `key = …` in the table whose header starts at
/// `span` (up to the next header), if written there at the start of a line.
fn key_offset(text: &str, span: &std::ops::Range<usize>, key: &str) -> Option<usize> {
    let body = text.get(span.start..)?;
    let mut offset = span.start;
    for (i, line) in body.split_inclusive('\n').enumerate() {
        if i > 0 && is_header(line) {
            return None;
        }
        let indent = line.len() - line.trim_start().len();
        let rest = line.trim_start().strip_prefix(key).map(str::trim_start);
        if rest.is_some_and(|r| r.starts_with('=')) {
            return Some(offset + indent);
        }
        offset += line.len();
    }
    None
}

/// The key a value at byte `offset` belongs to: the identifier before the
/// last `=` ahead of it on its line (`key = value`, also inside inline
/// tables). `None` when the line has no `=` before the offset: the error
/// is then in a key or a header, and no earlier key is at fault.
fn key_before(text: &str, offset: usize) -> Option<&str> {
    let head = text.get(..offset)?;
    let line = &head[head.rfind('\n').map_or(0, |i| i + 1)..];
    let name = line[..line.rfind('=')?].trim_end();
    let start = name
        .char_indices()
        .rev()
        .find(|&(_, c)| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .map_or(0, |(i, c)| i + c.len_utf8());
    Some(&name[start..]).filter(|k| !k.is_empty())
}

/// Whether `line` is a table header (`[robot]`, `[[groups]]`), not a line
/// of an array value.
fn is_header(line: &str) -> bool {
    line.starts_with('[')
        && line
            .trim_start_matches(['[', ' '])
            .starts_with(|c: char| c.is_alphabetic() || c == '_' || c == '"' || c == '\'')
}

/// The `name` of the `[[groups]]` entry whose table holds byte `offset` of
/// `text`, when the text parses as TOML and that entry has a name.
fn group_at(text: &str, offset: usize) -> Option<String> {
    #[derive(Deserialize)]
    struct Groups {
        #[serde(default)]
        groups: Vec<S<toml::Table>>,
    }
    let file: Groups = toml::from_str(text).ok()?;
    // An inline table's span holds its values; a `[[groups]]` entry's span
    // is its header, and its values follow up to the next header that is
    // not one of its own subtables (`[groups.delay]`).
    let group = file.groups.iter().rev().find(|g| {
        let span = g.span();
        span.contains(&offset)
            || span.end <= offset
                && text.get(span.end..offset).is_some_and(|between| {
                    !between
                        .lines()
                        .any(|l| is_header(l) && !l.starts_with("[groups."))
                })
    })?;
    group.get_ref().get("name")?.as_str().map(str::to_owned)
}

/// 1-based line of byte `offset` in `text`.
pub(crate) fn line_at(text: &str, offset: usize) -> usize {
    let bytes = text.as_bytes();
    bytes[..offset.min(bytes.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

impl Scenario {
    /// Reads and parses a scenario file (an `.npy` command source is found
    /// relative to it).
    pub fn load(path: &Path) -> Result<Scenario, CliError> {
        let io = |message: String| CliError::Io {
            path: path.to_owned(),
            message,
        };
        let bytes = sinew::memory::read_user_file(path, MAX_SCENARIO_BYTES).map_err(io)?;
        let text = String::from_utf8(bytes).map_err(|e| io(format!("is not UTF-8 text: {e}")))?;
        let dir = path.parent().unwrap_or(Path::new("."));
        let mut scenario = Scenario::parse_in(&text, &path.display().to_string(), dir)?;
        if scenario.name.is_empty() {
            scenario.name = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
        }
        scenario
            .command
            .resolve_paths(path.parent().unwrap_or(Path::new(".")));
        Ok(scenario)
    }

    /// Parses scenario text; `origin` names it in messages. Network files
    /// are found relative to the current directory.
    pub fn parse(text: &str, origin: &str) -> Result<Scenario, CliError> {
        Scenario::parse_in(text, origin, Path::new("."))
    }

    /// [`Scenario::parse`] with network files found relative to `dir`.
    pub fn parse_in(text: &str, origin: &str, dir: &Path) -> Result<Scenario, CliError> {
        let at = |span: Option<std::ops::Range<usize>>, message: String| CliError::Scenario {
            origin: origin.to_owned(),
            line: span.map(|s| line_at(text, s.start)),
            message,
        };
        let file: FileToml = toml::from_str(text).map_err(|e| {
            // toml names unknown and missing fields itself; for a wrong value
            // name the key it was given for.
            let message = e.message().trim();
            let key = e.span().and_then(|span| key_before(text, span.start));
            let message = match key {
                Some(key) if !message.contains("field `") => format!("field `{key}`: {message}"),
                _ => message.to_owned(),
            };
            // A value inside a group names the group, as the group's other
            // errors do.
            match e.span().and_then(|span| group_at(text, span.start)) {
                Some(group) => at(e.span(), format!("group `{group}`: {message}")),
                None => at(e.span(), message),
            }
        })?;
        for (field, value) in [("num_envs", &file.num_envs), ("steps", &file.steps)] {
            if *value.get_ref() == 0 {
                return Err(at(
                    Some(value.span()),
                    format!("`{field}` must be at least 1"),
                ));
            }
        }
        // The plan keeps `dt` as f32: 1e-300 and 1e300 are no step there.
        let dt32 = *file.dt.get_ref() as f32;
        if !(dt32.is_finite() && dt32 > 0.0) {
            return Err(at(
                Some(file.dt.span()),
                format!(
                    "`dt` must be a positive number of seconds (in f32 range), got {}",
                    file.dt.get_ref()
                ),
            ));
        }
        let mut file_lines = HashMap::new();
        let mut note = |key: &'static str, span: Option<std::ops::Range<usize>>| {
            if let Some(span) = span {
                file_lines.insert(key, line_at(text, span.start));
            }
        };
        note("num_envs", Some(file.num_envs.span()));
        note("dt", Some(file.dt.span()));
        note("robot", Some(file.robot.span()));
        note("output", file.output.as_ref().map(|o| o.span()));
        note("inputs", file.inputs.as_ref().map(|o| o.span()));
        let r = file.robot.into_inner();
        note("robot.joints", r.joints.as_ref().map(|v| v.span()));
        note("robot.tendons", r.tendons.as_ref().map(|v| v.span()));
        note("robot.sites", r.sites.as_ref().map(|v| v.span()));
        note(
            "robot.fixed_tendons",
            r.fixed_tendons.as_ref().map(|v| v.span()),
        );
        note(
            "robot.joint_actuator_force_ranges",
            r.joint_actuator_force_ranges.as_ref().map(|v| v.span()),
        );
        let names = |v: Option<S<Vec<String>>>| v.map(S::into_inner).unwrap_or_default();
        let robot = Robot {
            joints: names(r.joints),
            tendons: names(r.tendons),
            sites: names(r.sites),
            native_actuators: r
                .native_actuators
                .into_iter()
                .map(|n| NativeActuator {
                    name: n.name,
                    transmission: transmission(n.transmission),
                    target: n.target,
                    gain: gain_type(n.gain),
                    bias: bias_type(n.bias),
                    dyn_type: dyn_type(n.dyn_type),
                    gainprm: n.gainprm,
                    biasprm: n.biasprm,
                    general: None,
                })
                .collect(),
            fixed_tendons: r
                .fixed_tendons
                .map(S::into_inner)
                .unwrap_or_default()
                .into_iter()
                .map(|t| FixedTendon {
                    name: t.name,
                    joints: t.joints,
                    actuator_force_range: t.actuator_force_range.map(|(lo, hi)| [lo, hi]),
                })
                .collect(),
            joint_actuator_force_ranges: r
                .joint_actuator_force_ranges
                .map(S::into_inner)
                .unwrap_or_default()
                .into_iter()
                .map(|(joint, (lo, hi))| (joint, [lo, hi]))
                .collect(),
        };
        // The groups again as plain tables: the keys the reader does not
        // know, for the unknown-field check and for kinds read generically.
        let raw: toml::Table = toml::from_str(text).map_err(|e| at(None, e.to_string()))?;
        let raw_groups: Vec<&toml::Table> = match raw.get("groups") {
            Some(toml::Value::Array(items)) => items.iter().filter_map(|g| g.as_table()).collect(),
            _ => Vec::new(),
        };
        let mut lines = HashMap::new();
        let mut groups = Vec::with_capacity(file.groups.len());
        for (i, group) in file.groups.iter().enumerate() {
            let raw_group = raw_groups.get(i).copied();
            groups.push(
                group_cfg(group, raw_group, text, dir, *file.dt.get_ref(), &mut lines)
                    .map_err(|(span, m)| at(Some(span), m))?,
            );
        }
        let command = match file.command {
            Some(c) => {
                let span = c.span();
                let spec = c.into_inner();
                spec.validate().map_err(|m| at(Some(span), m))?;
                spec
            }
            None => CommandSpec::default(),
        };
        let output_span = file.output.as_ref().map(|o| o.span());
        let output = file.output.map(S::into_inner).unwrap_or_default();
        if output.every == 0 {
            return Err(at(output_span, "`output.every` must be at least 1".into()));
        }
        if let Some(&env) = output
            .envs
            .iter()
            .flatten()
            .find(|&&e| e as usize >= *file.num_envs.get_ref())
        {
            return Err(at(
                output_span,
                format!(
                    "`output.envs` lists env {env}, but num_envs is {}",
                    file.num_envs.get_ref()
                ),
            ));
        }
        let scenario = Scenario {
            name: file.name.unwrap_or_default(),
            origin: origin.to_owned(),
            num_envs: *file.num_envs.get_ref(),
            steps: *file.steps.get_ref(),
            dt: *file.dt.get_ref(),
            robot,
            groups,
            options: PlanOptions {
                sort_actuators: file.sort_actuators,
                seed: file.seed,
                timestep: *file.dt.get_ref() as f32,
            },
            command,
            output,
            inputs: file.inputs.map(S::into_inner).unwrap_or_default(),
            lines,
            file_lines,
        };
        // Compile once now, so that every error of the file shows at load.
        let plan = scenario.plan(scenario.num_envs)?;
        let len = plan.num_envs() * plan.num_targets();
        for (name, value) in &scenario.inputs {
            plan.check_input(name, len)
                .map_err(|e| scenario.field_error("inputs", e.to_string()))?;
            if !value.is_finite() {
                return Err(scenario
                    .field_error("inputs", format!("`inputs.{name}` = {value} is not finite")));
            }
        }
        Ok(scenario)
    }

    /// The plan for `num_envs` envs; a library error is given the line of
    /// the group field it names.
    pub fn plan(&self, num_envs: usize) -> Result<Plan, CliError> {
        Plan::new(
            &self.robot,
            self.groups.clone(),
            num_envs,
            self.options.clone(),
        )
        .map_err(|e| self.locate(e))
    }

    /// An error about a top-level field (`num_envs`, `output`, …) at its line.
    pub fn field_error(&self, field: &str, message: String) -> CliError {
        CliError::Scenario {
            origin: self.origin.clone(),
            line: self.file_lines.get(field).copied(),
            message,
        }
    }

    /// Attaches the line of the field a library error names.
    pub fn locate(&self, e: sinew::Error) -> CliError {
        use sinew::Error as E;
        let key = match &e {
            E::InvalidRegex { group, regex, .. }
            | E::NoMatch { group, regex, .. }
            | E::AmbiguousMatch {
                group,
                first: regex,
                ..
            } => Some((group.clone(), format!("targets:{regex}"))),
            E::TargetClaimed { second, regex, .. } => {
                Some((second.clone(), format!("targets:{regex}")))
            }
            E::InvalidParam { group, field, .. } => Some((group.clone(), field.clone())),
            E::DelayShareMismatch { second, .. } => Some((second.clone(), "delay".into())),
            E::TransmissionNotSupported { group, .. }
            | E::NoNativeActuator { group, .. }
            | E::UndetectedCommandField { group, .. }
            | E::MixedCommandFields { group, .. } => Some((group.clone(), String::new())),
            E::DuplicateGroup { name } => Some((name.clone(), String::new())),
            E::NoTargets { group } => Some((group.clone(), "targets".into())),
            // A network's own errors name the group in their origin.
            E::InvalidNetwork { origin, .. } => origin
                .rsplit_once("(group `")
                .and_then(|(_, rest)| rest.strip_suffix("`)"))
                .map(|group| (group.to_owned(), "network".into())),
            _ => None,
        };
        let file_key = match &e {
            E::NoEnvs | E::TooLarge { .. } => Some("num_envs"),
            E::InvalidParam { field, .. } if field == "timestep" => Some("dt"),
            E::InvalidMechanics { item, .. } if item.starts_with("fixed tendon") => {
                Some("robot.fixed_tendons")
            }
            E::InvalidMechanics { .. } => Some("robot.joint_actuator_force_ranges"),
            E::DuplicateTarget { transmission, .. } => Some(match transmission {
                Transmission::Joint => "robot.joints",
                Transmission::Tendon => "robot.tendons",
                Transmission::Site => "robot.sites",
            }),
            _ => None,
        };
        let line = key
            .and_then(|(group, field)| {
                let lookup = |f: &str| self.lines.get(&(group.clone(), f.to_owned())).copied();
                lookup(&field)
                    .or_else(|| field.split('.').next().and_then(lookup))
                    .or_else(|| lookup(""))
            })
            .or_else(|| {
                let key = file_key?;
                let section = key.split('.').next().unwrap_or(key);
                self.file_lines
                    .get(key)
                    .or_else(|| self.file_lines.get(section))
                    .copied()
            });
        CliError::Scenario {
            origin: self.origin.clone(),
            line,
            message: e.to_string(),
        }
    }
}

fn transmission(t: TransmissionToml) -> Transmission {
    match t {
        TransmissionToml::Joint => Transmission::Joint,
        TransmissionToml::Tendon => Transmission::Tendon,
        TransmissionToml::Site => Transmission::Site,
    }
}

type Located = (std::ops::Range<usize>, String);

/// A group's BAM preset: its servo at the scenario's step and the fitted
/// rotor inertia.
struct Preset {
    servo: sinew::bam::BamServo,
    armature: Option<f32>,
}

/// The servo of the preset a group names: one of BAM's shipped fits
/// (`xl330/m6`) or a parameter file in BAM's layout (`*.json`, relative to
/// the scenario; what `sinew fit` writes).
fn preset_servo(p: &S<String>, group: &str, dir: &Path, dt: f64) -> Result<Preset, Located> {
    let name = p.get_ref();
    let located = |message: String| {
        (
            p.span(),
            format!("group `{group}`: field `preset`: {message}"),
        )
    };
    let params = match sinew::bam::bam_fit(name) {
        Some(fit) => crate::servo::BamParams::from_fit(fit),
        None if name.ends_with(".json") => {
            crate::servo::BamParams::read(&relative_to(dir, Path::new(name)), None)
                .map_err(located)?
        }
        None => {
            let known: Vec<String> = sinew::bam::BAM_FITS.iter().map(|f| f.name()).collect();
            return Err(located(format!(
                "no BAM fit `{name}`; the fits are {}, or name a parameter file (`*.json`)",
                known.join(", ")
            )));
        }
    };
    // eRob and Go1 take kp from the log: a preset starts them at 1, for the
    // group to set.
    let needs_kp = matches!(
        params.family,
        sinew::bam::BamFamily::Erob80x100
            | sinew::bam::BamFamily::Erob80x50
            | sinew::bam::BamFamily::UnitreeGo1
    );
    let settings = sinew::bam::BamSettings {
        kp: needs_kp.then_some(1.0),
        ..Default::default()
    };
    let servo = params
        .family
        .servo(group, &|n| params.get(n), settings, dt as f32)
        .map_err(|e| (p.span(), e.to_string()))?;
    Ok(Preset {
        servo,
        armature: params.get("armature").map(|a| a as f32),
    })
}

fn servo_key(preset: &Preset) -> &'static str {
    preset.servo.clone().actuator().kind_id().spec().key
}

/// Writes `over`'s keys into `base`, table into table.
fn merge(base: &mut toml::Table, over: toml::Table) {
    for (key, value) in over {
        match (base.get_mut(&key), value) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge(b, o),
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
}

/// The group fields kind `kind` takes besides [`COMMON_FIELDS`].
fn allowed_fields(kind: KindToml) -> &'static [&'static str] {
    match kind {
        KindToml::Other(_) => group_keys(),
        KindToml::IdealPd => &["stiffness", "damping", "effort_limit", "gains"],
        KindToml::DcMotor => &[
            "stiffness",
            "damping",
            "effort_limit",
            "saturation_effort",
            "velocity_limit",
            "gains",
        ],
        KindToml::BuiltinPosition => &[
            "stiffness",
            "damping",
            "effort_limit",
            "gains",
            "compute_force",
        ],
        KindToml::BuiltinVelocity => &["damping", "effort_limit", "compute_force"],
        KindToml::BuiltinMotor => &["effort_limit", "gear", "compute_force"],
        KindToml::BuiltinMuscle => &[
            "compute_force",
            "acc0",
            "gear",
            "length_range",
            "timeconst",
            "tausmooth",
            "range",
            "force",
            "scale",
            "lmin",
            "lmax",
            "vmax",
            "fpmax",
            "fvmax",
        ],
        KindToml::Wrapped => &["command_field", "compute_force"],
        KindToml::MjGeneral => &[
            "command_field",
            "dyn_type",
            "dynprm",
            "gain_type",
            "gainprm",
            "bias_type",
            "biasprm",
            "ctrl_range",
            "force_range",
            "act_range",
            "act_early",
            "gear",
            "length_range",
            "acc0",
        ],
        KindToml::LearnedMlp => &[
            "effort_limit",
            "saturation_effort",
            "velocity_limit",
            "network",
            "layers",
            "activations",
            "history_length",
            "taps",
            "input_order",
            "history_init",
            "pos_scale",
            "vel_scale",
            "torque_scale",
        ],
        KindToml::LstmNet => &[
            "effort_limit",
            "saturation_effort",
            "velocity_limit",
            "network",
            "layers",
            "activations",
        ],
    }
}

/// Fields every kind takes.
const COMMON_FIELDS: [&str; 4] = ["armature", "frictionloss", "viscous_damping", "delay"];

/// The fields a `[[groups]]` table of kind `id` may set besides `name`,
/// `targets`, `kind` and `transmission`: the kind's own, then the ones
/// every kind takes. What the Python package's config classes accept.
pub fn kind_fields(id: sinew::KindId) -> Vec<&'static str> {
    let key = id.spec().key;
    let known = KindToml::deserialize(
        serde::de::value::StrDeserializer::<serde::de::value::Error>::new(key),
    );
    let mut fields: Vec<&'static str> = match known {
        Ok(kind) => allowed_fields(kind).to_vec(),
        Err(_) => {
            let found = std::cell::Cell::new(&[][..]);
            let _ = id.from_fields(FieldNames(&found));
            found.get().to_vec()
        }
    };
    if matches!(id, sinew::KindId::MjPid | sinew::KindId::MjDcMotor) {
        // The MJCF element's attributes, compiled at the scenario's dt.
        fields.push("mjcf");
    }
    fields.extend(COMMON_FIELDS);
    fields
}

/// One `[[groups]]` entry as a library group, recording the line of each field.
fn group_cfg(
    spanned: &S<GroupToml>,
    raw: Option<&toml::Table>,
    text: &str,
    dir: &Path,
    dt: f64,
    lines: &mut HashMap<(String, String), usize>,
) -> Result<GroupCfg, Located> {
    let g = spanned.get_ref();
    let name = g.name.get_ref().clone();
    // Group names become file names (`lags_<group>.npy`) and TSV cells.
    if name.is_empty()
        || name
            .chars()
            .any(|c| c.is_control() || c == '/' || c == '\\')
    {
        return Err((
            g.name.span(),
            format!(
                "field `name`: {name:?} cannot name a group: it must be non-empty, with no `/`, \
                 `\\` or control characters"
            ),
        ));
    }
    let mut note = |field: &str, span: std::ops::Range<usize>| {
        lines.insert((name.clone(), field.to_owned()), line_at(text, span.start));
    };
    note("", spanned.span());
    note("targets", g.targets.span());
    for t in g.targets.get_ref() {
        note(&format!("targets:{}", t.get_ref()), t.span());
    }
    // Every optional field with its span when set: their lines go into the
    // map, and those of the kind-specific ones are checked against the kind.
    macro_rules! spans {
        ($($field:ident),*) => {
            [$((stringify!($field), g.$field.as_ref().map(|v| v.span()))),*]
        };
    }
    let fields = spans!(
        stiffness,
        damping,
        effort_limit,
        saturation_effort,
        velocity_limit,
        gains,
        gear,
        command_field,
        length_range,
        timeconst,
        tausmooth,
        range,
        force,
        scale,
        lmin,
        lmax,
        vmax,
        fpmax,
        fvmax,
        acc0,
        compute_force,
        dyn_type,
        dynprm,
        gain_type,
        gainprm,
        bias_type,
        biasprm,
        ctrl_range,
        force_range,
        act_range,
        act_early,
        network,
        layers,
        activations,
        history_length,
        taps,
        input_order,
        history_init,
        pos_scale,
        vel_scale,
        torque_scale,
        armature,
        frictionloss,
        viscous_damping,
        delay
    );
    for (field, span) in &fields {
        if let Some(span) = span {
            note(field, span.clone());
        }
    }
    let err = |span: std::ops::Range<usize>, message: String| {
        Err((span, format!("group `{name}`: {message}")))
    };
    // A preset names the kind; a `kind` beside it must agree.
    let preset = match &g.preset {
        None => None,
        Some(p) => Some((preset_servo(p, &name, dir, dt)?, p.span())),
    };
    let preset_key = preset.as_ref().map(|(servo, _)| servo_key(servo));
    let (kind_text, kind_span) = match (&g.kind, preset_key) {
        (Some(k), Some(key)) if k.get_ref() != key => {
            return err(
                k.span(),
                format!(
                    "field `kind`: `{}` differs from the preset's kind `{key}`; leave `kind` out",
                    k.get_ref()
                ),
            )
        }
        (Some(k), _) => (k.get_ref().as_str(), k.span()),
        (None, Some(key)) => (key, spanned.span()),
        (None, None) => {
            return err(
                spanned.span(),
                "needs field `kind` (or a BAM servo `preset`)".into(),
            )
        }
    };
    let kind = match KindToml::deserialize(serde::de::value::StrDeserializer::<
        serde::de::value::Error,
    >::new(kind_text))
    {
        Ok(kind) => kind,
        Err(_) => match sinew::KindId::from_key(kind_text) {
            Some(id) => KindToml::Other(id),
            None => {
                let known: Vec<&str> = sinew::KindId::ALL.iter().map(|k| k.spec().key).collect();
                return err(
                    kind_span,
                    format!(
                        "field `kind`: unknown kind `{kind_text}`; the kinds are {}",
                        known.join(", ")
                    ),
                );
            }
        },
    };
    let kind_name = match kind {
        KindToml::Other(id) => id.spec().name.to_owned(),
        known => format!("{known:?}"),
    };
    let group_span = spanned.span();
    if let Some(raw) = raw {
        for key in raw.keys() {
            let offset = key_offset(text, &group_span, key);
            // Every key is noted, for messages about the kind's own fields.
            if let Some(offset) = offset {
                lines
                    .entry((name.clone(), key.clone()))
                    .or_insert(line_at(text, offset));
            }
            if !matches!(kind, KindToml::Other(_)) && !group_keys().contains(&key.as_str()) {
                let at = offset.map_or(group_span.clone(), |o| o..o + key.len());
                return err(
                    at,
                    format!(
                        "unknown field `{key}`, expected one of {}",
                        group_keys()
                            .iter()
                            .map(|k| format!("`{k}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                );
            }
        }
    }

    // Fields each kind takes; any other set field is an error.
    let allowed = allowed_fields(kind);
    for (field, span) in fields {
        if let Some(span) = span {
            if !COMMON_FIELDS.contains(&field) && !allowed.contains(&field) {
                return err(
                    span,
                    format!(
                        "field `{field}` does not apply to kind {}; it takes {}",
                        snake(&kind_name),
                        allowed.join(", ")
                    ),
                );
            }
        }
    }

    let armature = match g.armature.as_ref().map(|a| (a.get_ref(), a.span())) {
        // A preset's fitted rotor inertia, unless the group sets its own.
        None => preset.as_ref().and_then(|(preset, _)| preset.armature),
        Some((ArmatureToml::Value(v), _)) => Some(*v),
        Some((ArmatureToml::Planetary(p), span)) => {
            if p.gear_ratio[0] != 1.0 {
                return err(
                    span,
                    format!(
                        "field `armature`: gear_ratio[0] must be 1 (the rotor stage), got {}",
                        p.gear_ratio[0]
                    ),
                );
            }
            let [i0, i1, i2] = p.rotor_inertia;
            let [_, r1, r2] = p.gear_ratio;
            Some((i0 * (r1 * r2).powi(2) + i1 * r2 * r2 + i2) as f32)
        }
    };
    let value = |v: &Option<S<f32>>| v.as_ref().map(|s| *s.get_ref());
    let required = |field: &str, v: &Option<S<f32>>| -> Result<f32, Located> {
        value(v).ok_or_else(|| {
            (
                spanned.span(),
                format!(
                    "group `{name}`: kind {} needs field `{field}`",
                    snake(&kind_name)
                ),
            )
        })
    };
    // kp and kd: given, or from `gains` on the armature.
    let (stiffness, damping) = match g.gains.as_ref() {
        Some(gains) => {
            if g.stiffness.is_some() || g.damping.is_some() {
                return err(
                    gains.span(),
                    "give either `gains` or `stiffness`/`damping`, not both".into(),
                );
            }
            let Some(a) = armature else {
                return err(
                    gains.span(),
                    "field `gains` derives kp and kd from the armature: set `armature`".into(),
                );
            };
            let GainsToml {
                natural_frequency_hz: f,
                damping_ratio: zeta,
            } = *gains.get_ref();
            let w = 2.0 * std::f64::consts::PI * f;
            let a = f64::from(a);
            let (kp, kd) = ((a * w * w) as f32, (2.0 * zeta * a * w) as f32);
            // Name what the user wrote, not the kp and kd derived from it.
            for (what, v) in [("stiffness", kp), ("damping", kd)] {
                if !(v.is_finite() && v >= 0.0) {
                    return err(
                        gains.span(),
                        format!(
                            "field `gains`: natural_frequency_hz = {f} and damping_ratio = \
                             {zeta} on armature {a} give {what} = {v}; it must be finite and >= 0"
                        ),
                    );
                }
            }
            (Some(kp), Some(kd))
        }
        None => (value(&g.stiffness), value(&g.damping)),
    };
    let need = |field: &str, v: Option<f32>| {
        v.ok_or_else(|| {
            (
                spanned.span(),
                format!(
                    "group `{name}`: kind {} needs field `{field}` (or `gains`)",
                    snake(&kind_name)
                ),
            )
        })
    };
    let actuator: ActuatorCfg = match kind {
        KindToml::Other(id) => {
            let mut fields = raw.cloned().unwrap_or_default();
            fields.retain(|key: &str, _| !GROUP_OWN_KEYS.contains(&key));
            // A kind stepped at the physics timestep takes the scenario's.
            let timestep = id.spec().params.iter().any(|p| p.name == "timestep");
            if timestep && !fields.contains_key("timestep") {
                fields.insert("timestep".into(), toml::Value::Float(dt));
            }
            if let Some(mjcf) = fields.remove("mjcf") {
                mjcf_actuator(id, mjcf, &fields, dt).map_err(|e| {
                    (
                        group_span.clone(),
                        format!("group `{name}`: field `mjcf`: {e}"),
                    )
                })?
            } else {
                if let Some((servo, span)) = &preset {
                    let mut base = match toml::Value::try_from(&servo.servo) {
                        Ok(toml::Value::Table(t)) => t,
                        _ => {
                            return err(
                                span.clone(),
                                "field `preset`: cannot be written out".into(),
                            )
                        }
                    };
                    merge(&mut base, fields);
                    fields = base;
                }
                id.from_fields(toml::Value::Table(fields)).map_err(|e| {
                    (
                        group_span.clone(),
                        format!("group `{name}`: kind {}: {e}", id.spec().key),
                    )
                })?
            }
        }
        KindToml::IdealPd => IdealPdCfg {
            stiffness: need("stiffness", stiffness)?,
            damping: need("damping", damping)?,
            effort_limit: value(&g.effort_limit).unwrap_or(f32::INFINITY),
        }
        .into(),
        KindToml::DcMotor => DcMotorCfg {
            stiffness: need("stiffness", stiffness)?,
            damping: need("damping", damping)?,
            effort_limit: required("effort_limit", &g.effort_limit)?,
            saturation_effort: required("saturation_effort", &g.saturation_effort)?,
            velocity_limit: required("velocity_limit", &g.velocity_limit)?,
        }
        .into(),
        KindToml::BuiltinPosition => BuiltinPositionCfg {
            stiffness: need("stiffness", stiffness)?,
            damping: damping.unwrap_or(0.0),
            effort_limit: value(&g.effort_limit),
        }
        .into(),
        KindToml::BuiltinVelocity => BuiltinVelocityCfg {
            damping: required("damping", &g.damping)?,
            effort_limit: value(&g.effort_limit),
        }
        .into(),
        KindToml::BuiltinMotor => BuiltinMotorCfg {
            effort_limit: required("effort_limit", &g.effort_limit)?,
            gear: value(&g.gear).unwrap_or(1.0),
        }
        .into(),
        KindToml::BuiltinMuscle => {
            let d = BuiltinMuscleCfg::default();
            let pair =
                |v: &Option<S<(f32, f32)>>, default| v.as_ref().map_or(default, |s| *s.get_ref());
            BuiltinMuscleCfg {
                length_range: pair(&g.length_range, d.length_range),
                gear: value(&g.gear).unwrap_or(d.gear),
                timeconst: pair(&g.timeconst, d.timeconst),
                tausmooth: value(&g.tausmooth).unwrap_or(d.tausmooth),
                range: pair(&g.range, d.range),
                force: value(&g.force).unwrap_or(d.force),
                scale: value(&g.scale).unwrap_or(d.scale),
                lmin: value(&g.lmin).unwrap_or(d.lmin),
                lmax: value(&g.lmax).unwrap_or(d.lmax),
                vmax: value(&g.vmax).unwrap_or(d.vmax),
                fpmax: value(&g.fpmax).unwrap_or(d.fpmax),
                fvmax: value(&g.fvmax).unwrap_or(d.fvmax),
                acc0: value(&g.acc0).unwrap_or(d.acc0),
            }
            .into()
        }
        KindToml::Wrapped => WrappedCfg {
            command_field: g
                .command_field
                .as_ref()
                .map(|f| command_field(*f.get_ref())),
        }
        .into(),
        KindToml::MjGeneral => {
            let d = MjGeneralCfg::default();
            let prm = |v: &Option<S<Vec<f32>>>, default: [f32; 10]| match v {
                None => Ok(default),
                Some(s) if s.get_ref().len() > 10 => Err((
                    s.span(),
                    format!(
                        "group `{name}`: MuJoCo keeps 10 parameters; {} given",
                        s.get_ref().len()
                    ),
                )),
                Some(s) => {
                    let mut out = [0.0; 10];
                    out[..s.get_ref().len()].copy_from_slice(s.get_ref());
                    Ok(out)
                }
            };
            let range = |v: &Option<S<(f32, f32)>>| {
                v.as_ref().map(|s| {
                    let (lo, hi) = *s.get_ref();
                    [lo, hi]
                })
            };
            MjGeneralCfg {
                command_field: g
                    .command_field
                    .as_ref()
                    .map_or(d.command_field, |f| command_field(*f.get_ref())),
                dyn_type: g
                    .dyn_type
                    .as_ref()
                    .map_or(d.dyn_type, |t| dyn_type(*t.get_ref())),
                dynprm: prm(&g.dynprm, d.dynprm)?,
                gain_type: g
                    .gain_type
                    .as_ref()
                    .map_or(d.gain_type, |t| gain_type(*t.get_ref())),
                gainprm: prm(&g.gainprm, d.gainprm)?,
                bias_type: g
                    .bias_type
                    .as_ref()
                    .map_or(d.bias_type, |t| bias_type(*t.get_ref())),
                biasprm: prm(&g.biasprm, d.biasprm)?,
                ctrl_range: range(&g.ctrl_range),
                force_range: range(&g.force_range),
                act_range: range(&g.act_range),
                act_early: g.act_early.as_ref().is_some_and(|b| *b.get_ref()),
                gear: value(&g.gear).unwrap_or(d.gear),
                length_range: range(&g.length_range).unwrap_or(d.length_range),
                acc0: value(&g.acc0).unwrap_or(d.acc0),
            }
            .into()
        }
        KindToml::LearnedMlp | KindToml::LstmNet => {
            let Some(file) = &g.network else {
                return err(
                    spanned.span(),
                    format!(
                        "kind {} needs field `network` (a .safetensors file)",
                        snake(&kind_name)
                    ),
                );
            };
            let path = dir.join(file.get_ref());
            let mut spec = NetSpec {
                layers: g.layers.as_ref().map(|l| l.get_ref().clone()),
                activations: None,
            };
            if let Some(names) = &g.activations {
                let parsed: Option<Vec<Activation>> = names
                    .get_ref()
                    .iter()
                    .map(|n| Activation::from_name(n))
                    .collect();
                let Some(parsed) = parsed else {
                    return err(
                        names.span(),
                        format!(
                            "field `activations`: {:?} holds an unknown name; known: {}",
                            names.get_ref(),
                            Activation::known_names()
                        ),
                    );
                };
                spec.activations = Some(parsed);
            }
            let net_err = |e: sinew::Error| (file.span(), format!("group `{name}`: {e}"));
            let limits = (
                required("effort_limit", &g.effort_limit)?,
                required("saturation_effort", &g.saturation_effort)?,
                required("velocity_limit", &g.velocity_limit)?,
            );
            if kind == KindToml::LstmNet {
                let net = LstmNet::load(&path, &spec).map_err(net_err)?;
                LstmNetCfg::new(net, limits.0, limits.1, limits.2).into()
            } else {
                let net = Mlp::load(&path, &spec).map_err(net_err)?;
                if let (Some(h), Some(t)) = (&g.history_length, &g.taps) {
                    let span = h.span().start.max(t.span().start)..h.span().end.max(t.span().end);
                    return err(span, "give `history_length` or `taps`, not both".into());
                }
                if let Some(h) = g
                    .history_length
                    .as_ref()
                    .filter(|h| *h.get_ref() as usize > sinew::MAX_HISTORY)
                {
                    return err(
                        h.span(),
                        format!(
                            "field `history_length`: {} is more than the {} steps a history may hold",
                            h.get_ref(),
                            sinew::MAX_HISTORY
                        ),
                    );
                }
                let mut cfg = LearnedMlpCfg::new(net, limits.0, limits.1, limits.2)
                    .with_history_length(g.history_length.as_ref().map_or(3, |h| *h.get_ref()))
                    .with_scales(
                        value(&g.pos_scale).unwrap_or(1.0),
                        value(&g.vel_scale).unwrap_or(1.0),
                        value(&g.torque_scale).unwrap_or(1.0),
                    );
                if let Some(t) = &g.taps {
                    cfg = cfg.with_taps(t.get_ref().clone());
                }
                if let Some(o) = &g.input_order {
                    cfg = cfg.with_input_order(match o.get_ref() {
                        OrderToml::PosVel => InputOrder::PosVel,
                        OrderToml::VelPos => InputOrder::VelPos,
                    });
                }
                if let Some(i) = &g.history_init {
                    cfg = cfg.with_history_init(match i.get_ref() {
                        HistoryInitToml::Backfill => HistoryInit::Backfill,
                        HistoryInitToml::Zeros => HistoryInit::Zeros,
                    });
                }
                cfg.into()
            }
        }
    };
    let mut cfg = GroupCfg::new(
        name.clone(),
        g.targets.get_ref().iter().map(|t| t.get_ref().clone()),
        actuator,
    )
    .with_transmission(transmission(g.transmission));
    cfg.armature = armature;
    cfg.compute_force = g.compute_force.as_ref().is_some_and(|b| *b.get_ref());
    cfg.frictionloss = value(&g.frictionloss);
    cfg.viscous_damping = value(&g.viscous_damping);
    if let Some(d) = &g.delay {
        let d = d.get_ref();
        cfg.delay = Some(DelayCfg {
            min_lag: d.min_lag,
            max_lag: d.max_lag,
            hold_prob: d.hold_prob,
            update_period: d.update_period,
            per_env_phase: d.per_env_phase,
            resample: match d.resample {
                ResampleToml::EveryStep => Resample::EveryStep,
                ResampleToml::OnReset => Resample::OnReset,
            },
            share: match d.share.as_deref() {
                None | Some("auto") => DelayShare::Auto,
                Some("own") => DelayShare::Own,
                Some(buffer) => DelayShare::Named(buffer.to_owned()),
            },
        });
    }
    Ok(cfg)
}

fn command_field(f: FieldToml) -> CommandField {
    match f {
        FieldToml::Position => CommandField::Position,
        FieldToml::Velocity => CommandField::Velocity,
        FieldToml::Effort => CommandField::Effort,
    }
}

fn gain_type(g: GainToml) -> GainType {
    match g {
        GainToml::Fixed => GainType::Fixed,
        GainToml::Affine => GainType::Affine,
        GainToml::Muscle => GainType::Muscle,
        GainToml::User => GainType::User,
        GainToml::DcMotor => GainType::DcMotor,
    }
}

fn bias_type(b: BiasToml) -> BiasType {
    match b {
        BiasToml::None => BiasType::None,
        BiasToml::Affine => BiasType::Affine,
        BiasToml::Muscle => BiasType::Muscle,
        BiasToml::User => BiasType::User,
        BiasToml::DcMotor => BiasType::DcMotor,
    }
}

fn dyn_type(d: DynToml) -> DynType {
    match d {
        DynToml::None => DynType::None,
        DynToml::Integrator => DynType::Integrator,
        DynToml::Filter => DynType::Filter,
        DynToml::FilterExact => DynType::FilterExact,
        DynToml::Muscle => DynType::Muscle,
        DynToml::User => DynType::User,
    }
}

/// `IdealPd` → `ideal_pd`.
fn snake(camel: &str) -> String {
    let mut out = String::new();
    for (i, c) in camel.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            out.push('_');
        }
        out.extend(c.to_lowercase());
    }
    out
}

/// A MuJoCo 4 kind written as its MJCF element's attributes (`mjcf = {
/// motorconst = [0.05], resistance = 2, … }`), compiled as MuJoCo compiles
/// them at the group's `timestep` (the scenario's `dt` unless given).
/// `fields` are the group's other kind fields: only `timestep` may stand
/// beside `mjcf`.
fn mjcf_actuator(
    id: sinew::KindId,
    mjcf: toml::Value,
    fields: &toml::Table,
    dt: f64,
) -> Result<ActuatorCfg, String> {
    if let Some(other) = fields.keys().find(|k| k.as_str() != "timestep") {
        return Err(format!(
            "`{other}` beside `mjcf`: write every attribute inside `mjcf`"
        ));
    }
    let dt = fields
        .get("timestep")
        .and_then(|t| t.as_float().or_else(|| t.as_integer().map(|i| i as f64)))
        .unwrap_or(dt);
    match id {
        sinew::KindId::MjDcMotor => {
            let attrs: sinew::DcMotorMjcf = mjcf.try_into().map_err(|e| e.to_string())?;
            Ok(attrs.compile(dt as f32).map_err(|e| e.to_string())?.into())
        }
        sinew::KindId::MjPid => {
            let attrs: sinew::PidMjcf = mjcf.try_into().map_err(|e| e.to_string())?;
            if attrs.kv.is_none() && attrs.dampratio.is_some() || attrs.inheritrange > 0.0 {
                return Err(
                    "`dampratio` and `inheritrange` need the model's inertia and joint \
                            range, which a scenario does not have: give `kv` and `posrange`"
                        .into(),
                );
            }
            Ok(attrs
                .compile(dt as f32, 0.0, [0.0, 0.0])
                .map_err(|e| e.to_string())?
                .into())
        }
        other => Err(format!(
            "kind {} has no MJCF element; `mjcf` is for mj_dcmotor and mj_pid",
            other.spec().key
        )),
    }
}

/// A path relative to the scenario file's folder.
pub(crate) fn relative_to(base: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_owned()
    } else {
        base.join(path)
    }
}
