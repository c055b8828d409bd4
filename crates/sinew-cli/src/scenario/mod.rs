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

mod groups;
mod locate;
mod schema;

pub use groups::kind_fields;
use groups::*;
use locate::*;
use schema::*;

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

/// A path relative to the scenario file's folder.
pub(crate) fn relative_to(base: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_owned()
    } else {
        base.join(path)
    }
}
