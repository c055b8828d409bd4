//! The one error type of Sinew's data model.

use std::fmt;
use std::sync::Arc;

use crate::robot::Transmission;

/// A lower-level error kept as an [`Error`]'s source (what the graphics
/// API said), shared so that [`Error`] stays `Clone`. Two are equal when
/// they print the same.
///
/// ```
/// use std::error::Error as _;
/// use sinew_core::{Error, Source};
/// let lower = std::io::Error::other("device lost");
/// let e = Error::Gpu { what: "readback", message: lower.to_string(), source: Some(Source::new(lower)) };
/// assert_eq!(e.source().map(|s| s.to_string()).as_deref(), Some("device lost"));
/// assert_eq!(e.clone(), e);
/// ```
#[derive(Clone)]
pub struct Source(Arc<dyn std::error::Error + Send + Sync>);

impl Source {
    /// Keeps `error` as a source.
    pub fn new(error: impl std::error::Error + Send + Sync + 'static) -> Source {
        Source(Arc::new(error))
    }
}

impl fmt::Debug for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl std::error::Error for Source {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

impl PartialEq for Source {
    fn eq(&self, other: &Source) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.to_string() == other.to_string()
    }
}

/// Everything that can go wrong building or driving an actuator set.
///
/// Every variant names the group, the field and the value at fault, so a
/// message can be shown to the user as it is.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A target regex does not compile.
    #[error(
        "group `{group}`: target regex `{regex}` is not a valid regular expression: {message}"
    )]
    InvalidRegex {
        /// Group that holds the regex.
        group: String,
        /// The regex as written.
        regex: String,
        /// What the regex engine said.
        message: String,
    },
    /// A target regex matches none of the names of the group's transmission.
    #[error("group `{group}`: target regex `{regex}` matches no {transmission} name; the {transmission}s are [{available}]{hint}")]
    NoMatch {
        /// Group that holds the regex.
        group: String,
        /// The regex as written.
        regex: String,
        /// The namespace it was matched against.
        transmission: Transmission,
        /// The names of that namespace, comma-separated.
        available: String,
        /// Where the regex does match, if in another namespace.
        hint: String,
    },
    /// One name is matched by two regexes of the same group.
    #[error("group `{group}`: {transmission} `{name}` is matched by two of its regexes, `{first}` and `{second}`")]
    AmbiguousMatch {
        /// The group.
        group: String,
        /// The namespace.
        transmission: Transmission,
        /// The name matched twice.
        name: String,
        /// The first regex that matches it.
        first: String,
        /// The second regex that matches it.
        second: String,
    },
    /// A target is claimed by two groups.
    #[error("{transmission} `{name}` is claimed by group `{first}` and again by group `{second}` (its regex `{regex}`)")]
    TargetClaimed {
        /// The namespace.
        transmission: Transmission,
        /// The target claimed twice.
        name: String,
        /// Group that claimed it first.
        first: String,
        /// Group that claimed it again.
        second: String,
        /// The regex of the second group that matched it.
        regex: String,
    },
    /// A group lists no target regexes.
    #[error("group `{group}` lists no target regexes")]
    NoTargets {
        /// The group.
        group: String,
    },
    /// Two groups share a name.
    #[error("two groups are named `{name}`; group names must be unique")]
    DuplicateGroup {
        /// The repeated name.
        name: String,
    },
    /// The robot lists a name twice in one namespace.
    #[error("the robot lists {transmission} `{name}` twice")]
    DuplicateTarget {
        /// The namespace.
        transmission: Transmission,
        /// The repeated name.
        name: String,
    },
    /// A parameter value is out of its domain (config or setter).
    #[error("group `{group}`: {field} = {value} is invalid: {reason}")]
    InvalidParam {
        /// The group.
        group: String,
        /// The field, e.g. `stiffness` or `delay.hold_prob`.
        field: String,
        /// The offending value as written.
        value: String,
        /// Which rule it breaks.
        reason: &'static str,
    },
    /// A kind cannot drive this transmission.
    #[error("group `{group}`: a {kind} actuator cannot drive a {transmission} target")]
    TransmissionNotSupported {
        /// The group.
        group: String,
        /// The kind's name.
        kind: &'static str,
        /// The transmission asked for.
        transmission: Transmission,
    },
    /// Groups told to share one delay buffer disagree on its settings.
    #[error("delay buffer `{buffer}` is shared by groups `{first}` and `{second}`, but their delay settings differ")]
    DelayShareMismatch {
        /// The buffer's name.
        buffer: String,
        /// A group that uses it.
        first: String,
        /// Another group whose settings differ.
        second: String,
    },
    /// A wrapped group found no native actuator on its targets.
    #[error("group `{group}`: none of its targets [{targets}] has a native actuator on the robot")]
    NoNativeActuator {
        /// The group.
        group: String,
        /// The targets it matched.
        targets: String,
    },
    /// A wrapped group's command field cannot be detected from its native actuator.
    #[error("group `{group}`: cannot tell which command native actuator `{actuator}` takes (gain {gain:?}, bias {bias:?}); set `command_field`")]
    UndetectedCommandField {
        /// The group.
        group: String,
        /// The native actuator.
        actuator: String,
        /// Its gain type.
        gain: crate::robot::GainType,
        /// Its bias type.
        bias: crate::robot::BiasType,
    },
    /// A wrapped group mixes native actuators that take different commands.
    #[error("group `{group}`: native actuator `{first}` takes the {first_field} target but `{second}` takes the {second_field} target; split the group")]
    MixedCommandFields {
        /// The group.
        group: String,
        /// One actuator.
        first: String,
        /// Its field.
        first_field: crate::kinds::CommandField,
        /// Another actuator.
        second: String,
        /// Its field.
        second_field: crate::kinds::CommandField,
    },
    /// `num_envs` is zero.
    #[error("num_envs must be at least 1")]
    NoEnvs,
    /// A command was made for another shape than the engine's.
    #[error("the command is ({got_envs}, {got_targets}) but the engine steps ({num_envs}, {num_targets}) (num_envs, num_targets)")]
    CmdDims {
        /// Rows of the command.
        got_envs: usize,
        /// Columns of the command.
        got_targets: usize,
        /// Rows expected.
        num_envs: usize,
        /// Columns expected.
        num_targets: usize,
    },
    /// A command field has the wrong number of values.
    #[error("command field `{field}` holds {got} values, expected num_envs × num_targets = {num_envs} × {num_targets} = {expected}")]
    CmdShape {
        /// The field.
        field: &'static str,
        /// Values it holds.
        got: usize,
        /// Values expected.
        expected: usize,
        /// Rows expected.
        num_envs: usize,
        /// Columns expected.
        num_targets: usize,
    },
    /// An output or readback buffer has the wrong length.
    #[error("{what} holds {got} values, expected {expected}")]
    BufferShape {
        /// What the buffer is.
        what: &'static str,
        /// Values it holds.
        got: usize,
        /// Values expected.
        expected: usize,
    },
    /// A table handed to `par_rows_mut` is not whole env rows: its length
    /// is not a multiple of `num_envs`.
    #[error("par_rows_mut: table {table} holds {got} values, not a whole number of rows for {num_envs} envs")]
    RowsShape {
        /// The table's place in the array handed over (from 0).
        table: usize,
        /// Values it holds.
        got: usize,
        /// Envs of the plan.
        num_envs: usize,
    },
    /// A parameter handle does not belong to this plan.
    #[error("the handle of parameter `{name}` (group {group}) comes from another plan; take it from this plan's Plan::param_ref")]
    ForeignParam {
        /// The parameter's name.
        name: &'static str,
        /// The group index the handle holds.
        group: usize,
    },
    /// A command array is not in standard (C-contiguous, row-major) layout.
    #[error("command field `{field}` is not a C-contiguous (num_envs, num_targets) array; pass a standard-layout array (e.g. `.as_standard_layout()`)")]
    CmdLayout {
        /// The field.
        field: &'static str,
    },
    /// An env id is out of range.
    #[error("env id {env} is out of range: num_envs is {num_envs}")]
    EnvOutOfRange {
        /// The id.
        env: usize,
        /// The number of envs.
        num_envs: usize,
    },
    /// No group has this name.
    #[error("no group is named `{name}`; the groups are [{known}]")]
    UnknownGroup {
        /// The name asked for.
        name: String,
        /// The groups that exist.
        known: String,
    },
    /// The group's kind has no parameter of this name.
    #[error("group `{group}` ({kind}) has no parameter `{name}`; its parameters are [{known}]")]
    UnknownParam {
        /// The group.
        group: String,
        /// Its kind.
        kind: &'static str,
        /// The name asked for.
        name: String,
        /// The parameters it has.
        known: String,
    },
    /// The group has no state slot of this name.
    #[error("group `{group}` ({kind}) has no state `{name}`; its state slots are [{known}]")]
    UnknownState {
        /// The group.
        group: String,
        /// Its kind.
        kind: &'static str,
        /// The name asked for.
        name: String,
        /// The state slots it has.
        known: String,
    },
    /// No kind of the plan reads (or writes) an input (output) plane of that name.
    #[error("no kind of this actuator set has an {what} plane `{name}`; its {what} planes are [{known}]")]
    UnknownPlane {
        /// `"input"` or `"output"`.
        what: &'static str,
        /// The name asked for.
        name: String,
        /// The planes the plan has.
        known: String,
    },
    /// Setter values do not fit the env ids and the group's targets.
    #[error("group `{group}`: {field} got {got} values for {num_envs} env(s) × {num_targets} target(s); give 1, {num_envs} (one per env) or {} (one per env and target)", num_envs * num_targets)]
    ValuesShape {
        /// The group.
        group: String,
        /// The field being set.
        field: String,
        /// Values given.
        got: usize,
        /// Envs selected.
        num_envs: usize,
        /// Targets of the group.
        num_targets: usize,
    },
    /// `set_lags` or a lag readback on a group without a delay.
    #[error("group `{group}` has no delay; give it a `DelayCfg` to use lags")]
    NoDelay {
        /// The group.
        group: String,
    },
    /// No GPU adapter could be opened.
    #[error("no GPU adapter: {reason}")]
    NoGpuAdapter {
        /// What the graphics API said, and what to install.
        reason: String,
        /// The graphics API's own error, where there is one.
        #[source]
        source: Option<Source>,
    },
    /// A MuJoCo shortcut ([`MjPositionCfg`](crate::MjPositionCfg), …) got
    /// a value MuJoCo's compiler rejects.
    #[error("<{shortcut}>: {field} = {value} is invalid: {reason}")]
    InvalidShortcut {
        /// The MJCF element, e.g. `position`.
        shortcut: &'static str,
        /// The attribute.
        field: &'static str,
        /// The offending value.
        value: String,
        /// Which rule it breaks.
        reason: &'static str,
    },
    /// The robot's MuJoCo mechanics (fixed tendons, actuator-force ranges)
    /// name something that does not exist or hold a bad value.
    #[error("robot: {item}: {reason}")]
    InvalidMechanics {
        /// What is at fault, e.g. `fixed tendon `t0` joint `j9``.
        item: String,
        /// What is wrong.
        reason: String,
    },
    /// The group computes no MuJoCo force, so it has no activation.
    #[error("group `{group}` computes no MuJoCo force, so it has no activation (state `act`); use an MjGeneral kind or set compute_force")]
    NoActivation {
        /// The group.
        group: String,
    },
    /// A learned network's weights are missing, misshapen, not finite or do
    /// not fit the group's settings.
    #[error("network {origin}: tensor `{tensor}`: {reason}")]
    InvalidNetwork {
        /// Where the network comes from: its file, or the group using it.
        origin: String,
        /// The tensor at fault (`0.weight`, `lstm.weight_ih_l0`, …), or
        /// what stands in for one (`(metadata activations)`, `(file)`).
        tensor: String,
        /// What is wrong.
        reason: String,
    },
    /// Something asks for more memory than one allocation may take or the
    /// machine has available ([`crate::memory`]).
    #[error("{group}: {field} = {value} needs {} bytes, but {}", fmt_bytes(*.bytes), fmt_available(*.available))]
    TooLarge {
        /// Where the request comes from: a group, `(plan)`, a file.
        group: String,
        /// The field that sets the size (`num_envs`, `history_length`, …).
        field: String,
        /// Its value.
        value: String,
        /// Bytes needed; `None` when the count overflows 64 bits.
        bytes: Option<u64>,
        /// Bytes the machine has available, when it says.
        available: Option<u64>,
    },
    /// The GPU device cannot hold this plan or run these kernels.
    #[error("GPU {what}: {message}")]
    Gpu {
        /// What was being done (e.g. `device`, `read_ctrl`, `encode_step`).
        what: &'static str,
        /// What went wrong.
        message: String,
        /// The graphics API's own error, where there is one.
        #[source]
        source: Option<Source>,
    },
}

fn fmt_bytes(bytes: Option<u64>) -> String {
    bytes.map_or("more than 2^64".to_owned(), |b| b.to_string())
}

fn fmt_available(available: Option<u64>) -> String {
    match available {
        Some(a) => format!("this machine has {a} bytes available"),
        None => format!(
            "one allocation may take at most {} bytes",
            crate::memory::MAX_ALLOCATION
        ),
    }
}

impl Error {
    /// Names `group` in a shortcut's error (the other variants already do).
    pub fn in_group(self, group: &str) -> Error {
        match self {
            Error::InvalidShortcut {
                shortcut,
                field,
                value,
                reason,
            } => Error::InvalidParam {
                group: group.to_owned(),
                field: format!("{shortcut}.{field}"),
                value,
                reason,
            },
            other => other,
        }
    }
}

/// Which boundary an [`Error`] comes from, for callers that handle them
/// apart (the Python package raises a different exception for each).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The configuration: groups, targets, parameters, networks, mechanics,
    /// the size of the plan.
    Config,
    /// A call's arrays: their shape or memory layout.
    Shape,
    /// A call names something the plan does not have: a group, parameter,
    /// state, plane, delay or activation, or an env out of range.
    Lookup,
    /// The GPU: no adapter, or the device failed.
    Device,
}

impl Error {
    /// The boundary this error comes from.
    ///
    /// ```
    /// use sinew_core::{Error, ErrorKind};
    /// let e = Error::EnvOutOfRange { env: 9, num_envs: 4 };
    /// assert_eq!(e.kind(), ErrorKind::Lookup);
    /// ```
    pub fn kind(&self) -> ErrorKind {
        use Error as E;
        match self {
            E::InvalidRegex { .. }
            | E::NoMatch { .. }
            | E::AmbiguousMatch { .. }
            | E::TargetClaimed { .. }
            | E::NoTargets { .. }
            | E::DuplicateGroup { .. }
            | E::DuplicateTarget { .. }
            | E::InvalidParam { .. }
            | E::TransmissionNotSupported { .. }
            | E::DelayShareMismatch { .. }
            | E::NoNativeActuator { .. }
            | E::UndetectedCommandField { .. }
            | E::MixedCommandFields { .. }
            | E::NoEnvs
            | E::InvalidShortcut { .. }
            | E::InvalidMechanics { .. }
            | E::InvalidNetwork { .. }
            | E::TooLarge { .. } => ErrorKind::Config,
            E::CmdDims { .. }
            | E::CmdShape { .. }
            | E::BufferShape { .. }
            | E::RowsShape { .. }
            | E::CmdLayout { .. }
            | E::ValuesShape { .. } => ErrorKind::Shape,
            E::EnvOutOfRange { .. }
            | E::ForeignParam { .. }
            | E::UnknownGroup { .. }
            | E::UnknownParam { .. }
            | E::UnknownState { .. }
            | E::UnknownPlane { .. }
            | E::NoDelay { .. }
            | E::NoActivation { .. } => ErrorKind::Lookup,
            E::NoGpuAdapter { .. } | E::Gpu { .. } => ErrorKind::Device,
        }
    }
}
