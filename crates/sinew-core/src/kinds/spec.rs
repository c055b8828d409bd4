//! The kind spec: what every actuator kind declares about itself, and the
//! one interface through which both backends run its law.
//!
//! A kind is a config struct implementing [`Kind`]: its parameters (stored
//! per (env, target) in `[slot][env][ctrl column]` tables, so every one is
//! randomizable), its state slots (same layout, reset per env, advanced only
//! when the env's outputs are finite), the command fields its law reads, the
//! extra named input planes it reads (e.g. the external torque on a joint)
//! and output planes it writes (e.g. the friction loss the simulator
//! applies), the per-group data it needs (e.g. a lookup table), and its pure
//! scalar law over a [`LawIo`]. The CPU backend implements [`LawIo`] over slices and
//! inlines the law; the GPU backend runs the kind's WGSL twin
//! ([`Kind::WGSL`]), whose accessors (`param`, `target`, `pos`, `vel`,
//! `state`, `set_state`, `input`, `set_output`, `data`, `data_len`) mirror
//! [`LawIo`]'s methods.

use std::borrow::Cow;

use super::{ActuatorCfg, CommandField, CtrlMeaning};
use crate::error::Error;

/// The most parameter slots a kind may declare (checked at compile time by
/// the registry).
pub const MAX_PARAMS: usize = 32;
/// The most state slots a kind may declare.
pub const MAX_STATE: usize = 8;
/// The most input planes a kind may read.
pub const MAX_INPUTS: usize = 4;
/// The most output planes a kind may write.
pub const MAX_OUTPUTS: usize = 8;

/// One randomizable parameter of a kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParamSpec {
    /// The canonical name (setters, scenario files, WGSL constant suffix).
    pub name: &'static str,
    /// Other names a setter accepts (mjlab's, Isaac Lab's).
    pub aliases: &'static [&'static str],
    /// The unit, for docs and `sinew` listings.
    pub unit: &'static str,
    /// What it is.
    pub doc: &'static str,
    /// Its domain.
    pub domain: Domain,
}

impl ParamSpec {
    /// True when `name` is this parameter's name or one of its aliases.
    pub fn answers_to(&self, name: &str) -> bool {
        self.name == name || self.aliases.contains(&name)
    }
}

/// The values a parameter (or a state slot written by a setter) may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Domain {
    /// A gain: finite and ≥ 0.
    Gain,
    /// A limit: > 0, `inf` for none.
    Limit,
    /// Finite and > 0.
    Positive,
    /// Finite and ≥ 0.
    NonNegative,
    /// Any finite value.
    Finite,
    /// A fraction: finite, > 0 and ≤ 1.
    Fraction,
    /// Any value but NaN: a range end, `±inf` where unlimited.
    Extended,
}

impl Domain {
    /// Checks one value; the error is the rule broken.
    pub fn check(self, value: f32) -> Result<(), &'static str> {
        let ok = match self {
            Domain::Gain | Domain::NonNegative => value.is_finite() && value >= 0.0,
            Domain::Limit => value > 0.0,
            Domain::Positive => value.is_finite() && value > 0.0,
            Domain::Finite => value.is_finite(),
            Domain::Fraction => value > 0.0 && value <= 1.0,
            Domain::Extended => !value.is_nan(),
        };
        if ok {
            return Ok(());
        }
        Err(match self {
            Domain::Gain => "a gain must be finite and >= 0",
            Domain::Limit => "a limit must be > 0 (inf for none)",
            Domain::Positive => "must be finite and > 0",
            Domain::NonNegative => "must be finite and >= 0",
            Domain::Finite => "must be finite",
            Domain::Fraction => "must be > 0 and <= 1",
            Domain::Extended => "must not be NaN (inf for unlimited)",
        })
    }
}

/// One per-(env, target) state slot of a kind.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StateSpec {
    /// Its name (`read_state`/`set_state`, WGSL constant suffix).
    pub name: &'static str,
    /// The unit.
    pub unit: &'static str,
    /// What it holds.
    pub doc: &'static str,
    /// The value `reset` writes.
    pub reset: f32,
}

/// One extra named plane a kind reads or writes besides the command and
/// `ctrl`. An input plane is `(num_envs, num_targets)` like a command field
/// (column `j` is the robot's target `j`), set by the caller
/// ([`Backend::set_input`](crate::Backend::set_input)) and kept until set
/// again; an output plane is `(num_envs, num_ctrl)` like `ctrl`, written by
/// every step ([`Backend::read_output`](crate::Backend::read_output)). Kinds
/// that name the same plane share it: the name is the contract.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlaneSpec {
    /// Its name (setters, readers, WGSL constant suffix).
    pub name: &'static str,
    /// The unit.
    pub unit: &'static str,
    /// What it holds.
    pub doc: &'static str,
    /// An input's value until the caller sets one (0 for an output, and for
    /// the columns of kinds that do not write it).
    pub default: f32,
}

/// The output plane through which a kind joins the plan's force coupling
/// (MuJoCo's tendon `actuatorfrcrange` scaling, then the force-range clamp,
/// then joint-effort sums clamped by joint `actuatorfrcrange`s): a kind
/// that declares it writes it through [`LawIo::saturate`], and its columns
/// become members of the plan's [`MjStage`](crate::MjStage).
pub const RAW_FORCE: PlaneSpec = zeroed_plane(
    "raw_force",
    "N·m",
    "the actuator force before tendon scaling and the force-range clamp (actuator space)",
);

/// The state slot of every column in [`Stage::MuJoCo`]: MuJoCo's `act`,
/// which the plan's MuJoCo stage advances by `act_dot` each step (kept but
/// never read by a stateless actuator). It is the group's only slot: the
/// kinds whose columns reach that stage forward their command and keep no
/// state of their own.
pub const MJ_ACT: StateSpec = StateSpec {
    name: "act",
    unit: "the actuator's activation unit",
    doc: "MuJoCo's activation `act` (after `mj_step`)",
    reset: 0.0,
};

/// The slot of [`MJ_ACT`] in a MuJoCo-law group's state table (its only slot).
pub const MJ_ACT_SLOT: usize = 0;

/// The output plane the plan's MuJoCo stage writes for each column in
/// [`Stage::MuJoCo`] (0 elsewhere): MuJoCo's `act_dot`, the rate the
/// stage advanced [`MJ_ACT`] by (0 for a stateless actuator).
pub const ACT_DOT: PlaneSpec = zeroed_plane(
    "act_dot",
    "activation unit/s",
    "MuJoCo's `act_dot` of the step (0 for stateless actuators)",
);

/// A parameter with no aliases, for a kind's spec.
pub(crate) const fn param(
    name: &'static str,
    unit: &'static str,
    doc: &'static str,
    domain: Domain,
) -> ParamSpec {
    ParamSpec {
        name,
        aliases: &[],
        unit,
        doc,
        domain,
    }
}

/// A parameter with aliases (another system's names for it), for a kind's spec.
pub(crate) const fn aliased(
    name: &'static str,
    aliases: &'static [&'static str],
    unit: &'static str,
    doc: &'static str,
    domain: Domain,
) -> ParamSpec {
    ParamSpec {
        aliases,
        ..param(name, unit, doc, domain)
    }
}

/// A slot name made at run time (a learned group's, which depend on its
/// settings), interned: each distinct name is allocated once per process,
/// so the names stay `&'static` like the ones kinds declare.
pub(crate) fn interned(name: String) -> &'static str {
    use std::collections::BTreeSet;
    use std::sync::Mutex;
    static NAMES: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    match names.get(name.as_str()) {
        Some(&known) => known,
        None => {
            let name: &'static str = Box::leak(name.into_boxed_str());
            names.insert(name);
            name
        }
    }
}

/// A state slot that resets to 0, for a kind's spec.
pub(crate) const fn zeroed_state(
    name: &'static str,
    unit: &'static str,
    doc: &'static str,
) -> StateSpec {
    StateSpec {
        name,
        unit,
        doc,
        reset: 0.0,
    }
}

/// A plane whose default is 0, for a kind's spec.
pub(crate) const fn zeroed_plane(
    name: &'static str,
    unit: &'static str,
    doc: &'static str,
) -> PlaneSpec {
    PlaneSpec {
        name,
        unit,
        doc,
        default: 0.0,
    }
}

/// The index of `name` in a list of parameter specs, for a kind's named
/// slot constants; a missing name fails at compile time.
pub const fn param_slot(specs: &[ParamSpec], name: &str) -> usize {
    let mut i = 0;
    while i < specs.len() {
        if str_eq(specs[i].name, name) {
            return i;
        }
        i += 1;
    }
    panic!("no parameter of that name in the kind's PARAMS")
}

/// The index of `name` in a list of state specs (see [`param_slot`]).
pub const fn state_slot(specs: &[StateSpec], name: &str) -> usize {
    let mut i = 0;
    while i < specs.len() {
        if str_eq(specs[i].name, name) {
            return i;
        }
        i += 1;
    }
    panic!("no state slot of that name in the kind's STATE")
}

/// The index of `name` in a list of plane specs (see [`param_slot`]).
pub const fn plane_slot(specs: &[PlaneSpec], name: &str) -> usize {
    let mut i = 0;
    while i < specs.len() {
        if str_eq(specs[i].name, name) {
            return i;
        }
        i += 1;
    }
    panic!("no plane of that name in the kind's INPUTS or OUTPUTS")
}

/// The input and output planes of a plan whose kinds are `kinds` (sorted,
/// no repeats): each kind's planes in registry order, a name shared by
/// several kinds once. Both backends and the WGSL prelude index planes by
/// this order.
pub fn planes_of(kinds: &[super::KindId]) -> (Vec<PlaneSpec>, Vec<PlaneSpec>) {
    let (mut inputs, mut outputs): (Vec<PlaneSpec>, Vec<PlaneSpec>) = (Vec::new(), Vec::new());
    for kind in kinds {
        let spec = kind.spec();
        for (all, own) in [(&mut inputs, spec.inputs), (&mut outputs, spec.outputs)] {
            for plane in own {
                if !all.iter().any(|p| p.name == plane.name) {
                    all.push(*plane);
                }
            }
        }
    }
    (inputs, outputs)
}

/// The position of each of `own`'s planes among a plan's `all`.
pub fn plane_map(own: &[PlaneSpec], all: &[PlaneSpec]) -> Vec<usize> {
    own.iter()
        .map(|p| {
            all.iter()
                .position(|q| q.name == p.name)
                .expect("a plan holds every plane of its kinds")
        })
        .collect()
}

const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// What a law reads and writes for one (env, ctrl column). Every method is
/// `#[inline(always)]` in the backends' implementations, so a law compiles
/// to the same loop as one written against slices.
pub trait LawIo {
    /// Parameter slot `k` of this (env, column).
    fn param(&self, k: usize) -> f32;
    /// The (delayed) command target of `field`.
    fn target(&self, field: CommandField) -> f32;
    /// The joint (or tendon) position `q`, undelayed.
    fn pos(&self) -> f32;
    /// The joint (or tendon) velocity `q̇`, undelayed.
    fn vel(&self) -> f32;
    /// The command field this column forwards or computes from (a
    /// pass-through kind's field, MuJoCo's `ctrl`).
    fn field(&self) -> CommandField;
    /// The (delayed) command target of [`LawIo::field`]. A backend whose
    /// field is fixed for a whole loop overrides it with a read that does
    /// not choose the field per element.
    #[inline(always)]
    fn field_target(&self) -> f32 {
        self.target(self.field())
    }
    /// State slot `k` as it was before this step.
    fn state(&self, k: usize) -> f32;
    /// Writes state slot `k` for after this step; it is committed only
    /// when the env's outputs are finite. Slots not written keep their value.
    fn set_state(&mut self, k: usize, value: f32);
    /// Input plane `k` of the kind's [`Kind::INPUTS`] at this (env, target).
    fn input(&self, k: usize) -> f32;
    /// Writes output plane `k` of the kind's [`Kind::OUTPUTS`] at this
    /// (env, column). A law writes every output it declares at every step;
    /// an env zeroed for a non-finite value gets 0 in every output.
    fn set_output(&mut self, k: usize, value: f32);
    /// Entry `i` of the group's data ([`Kind::group_data`]); NaN past its
    /// end on the CPU. For a table the law indexes by value.
    fn data(&self, i: usize) -> f32;
    /// Entry `I` of the group's data, at an index the law fixes (a
    /// switch, a constant): [`LawIo::data`]`(I)`, which the CPU reads once
    /// per run rather than once per element (its first eight entries).
    #[inline(always)]
    fn data_at<const I: usize>(&self) -> f32 {
        self.data(I)
    }
    /// Length of the group's data.
    fn data_len(&self) -> usize;
    /// For a kind that declares [`Kind::POS_LOOKUP`]: its group's table
    /// (group data in [`lookup_data`](super::lookup_data)'s layout)
    /// interpolated at [`LawIo::pos`], as Isaac Lab's
    /// `LinearInterpolation` ([`lookup_limit`](super::lookup_limit)). The
    /// CPU computes these for a block of elements before their law
    /// ([`lookup_limits`](super::lookup_limits)).
    #[inline(always)]
    fn pos_lookup(&self) -> f32 {
        let head = std::array::from_fn(|i| self.data(i));
        super::lookup_limit(self.pos(), head[0] != 0.0, head, |i| self.data(i))
    }
    /// The factor the plan's force coupling applies to this column's raw
    /// force: 1, except when the coupling evaluates the law again with a
    /// tendon's `actuatorfrcrange` scale.
    fn force_scale(&self) -> f32;

    /// The force-range clamp of a kind that declares [`RAW_FORCE`] as its
    /// output `raw`: records `force` there (the coupling sums it per
    /// tendon), then returns it times [`LawIo::force_scale`], clamped to
    /// `[lo, hi]`. What the law adds after this (MuJoCo's cogging and LuGre
    /// terms) is added after the scaling, as in MuJoCo.
    #[inline(always)]
    fn saturate(&mut self, raw: usize, force: f32, lo: f32, hi: f32) -> f32 {
        self.set_output(raw, force);
        super::clip(force * self.force_scale(), lo, hi)
    }
}

/// Where a kind's columns go after their law.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// The law's value is the column's output.
    Law,
    /// The law forwards MuJoCo's `ctrl`; the plan's MuJoCo stage computes
    /// `actuator_force` per env.
    MuJoCo,
    /// The law forwards the position target; the plan's learned stage
    /// evaluates the network (on the GPU the kind's WGSL law does).
    Learned,
}

/// Everything a kind declares. One registry line in `kinds/mod.rs` turns
/// an implementation into a variant of [`ActuatorCfg`], a [`KindId`](super::KindId),
/// a CPU dispatch arm and a case of the WGSL law switch.
pub trait Kind: Clone + Into<ActuatorCfg> {
    /// The kind's name, as in mjlab without "Actuator" (`"IdealPd"`).
    const NAME: &'static str;
    /// Its snake-case key: the scenario files' `kind`, the WGSL prefix.
    const KEY: &'static str;
    /// Its randomizable parameters, in slot order.
    const PARAMS: &'static [ParamSpec];
    /// Its per-(env, target) state, in slot order (the WGSL prelude names
    /// each slot's index); see [`Kind::state_slots`].
    const STATE: &'static [StateSpec];
    /// The command fields its law reads, besides `pos` and `vel`.
    const READS: &'static [CommandField];
    /// The extra input planes its law reads ([`PlaneSpec`]).
    const INPUTS: &'static [PlaneSpec] = &[];
    /// The extra output planes its law writes ([`PlaneSpec`]).
    const OUTPUTS: &'static [PlaneSpec] = &[];
    /// Its WGSL twin: the law as `fn <KEY>_law() -> f32` over the WGSL
    /// accessors, and whatever helpers it needs.
    const WGSL: &'static str;
    /// Where its columns go after the law.
    const STAGE: Stage = Stage::Law;
    /// True when its targets may be sites (the simulator resolves the
    /// transmission; Sinew reads no joint state).
    const SITES: bool = false;
    /// True when its law costs several times a PD's per element (a table
    /// search: `benches/kind_instructions.sh` counts 14.9 instructions per
    /// element for the remotized PD, 2.5 for ideal PD; Spot's knees over
    /// all 12 columns took 636 instructions per env, over their own 4
    /// columns 530). A CPU tile of
    /// several laws runs every other law over all its columns and keeps
    /// each column's value from its own law; a costly law instead runs over
    /// its own columns alone, their values first gathered into rows of
    /// their own. For a cheap law that gather costs more than the columns
    /// it saves.
    const COSTLY: bool = false;
    /// True when its law reads [`LawIo::pos_lookup`]: its group data is a
    /// lookup table over the joint position in
    /// [`lookup_data`](super::lookup_data)'s layout. The CPU's loop then
    /// computes a block of elements' values in a pass of its own before
    /// the law's ([`lookup_limits`](super::lookup_limits): eight elements
    /// at a time with AVX2's gathers, which the compiler does not emit
    /// for a search in a law's loop), and the law's loop reads them.
    const POS_LOOKUP: bool = false;

    /// The configured value of parameter slot `k` (`k < PARAMS.len()`).
    fn param_value(&self, k: usize) -> f32;

    /// The state slots of a group of this configuration, in slot order:
    /// [`Kind::STATE`], unless their number depends on the settings (a
    /// learned network's history or hidden size, kept by the kind's own
    /// stage rather than its law).
    fn state_slots(&self) -> Cow<'static, [StateSpec]> {
        Cow::Borrowed(Self::STATE)
    }

    /// Reads the kind's settings from the fields a config file gives it (a
    /// scenario group's keys besides the group's own: `name`, `targets`,
    /// `kind`, `transmission`, `delay`, `armature`, …). A kind whose `Cfg`
    /// derives `serde::Deserialize` with `deny_unknown_fields` implements it
    /// as `Self::deserialize(fields)`, and is then readable from scenario
    /// files with no reader code; the default refuses.
    fn from_fields<'de, D: serde::Deserializer<'de>>(fields: D) -> Result<Self, D::Error> {
        let _ = fields;
        Err(serde::de::Error::custom(format!(
            "kind `{}` cannot be read from a file yet",
            Self::KEY
        )))
    }

    /// A typical configuration, valid on a joint of a robot whose joints
    /// each carry a native MuJoCo motor: what the parity suite steps for
    /// every registered kind (so a kind without one does not compile).
    fn example() -> Self;

    /// Checks the settings that are not parameters (each parameter's
    /// configured value is checked against its [`Domain`] before this).
    fn validate(&self, group: &str) -> Result<(), Error> {
        let _ = group;
        Ok(())
    }

    /// The command field the law forwards or computes from, when the kind
    /// fixes it; `None` when the plan resolves it from the robot (wrapped
    /// actuators).
    fn command_field(&self) -> Option<CommandField> {
        Some(CommandField::Effort)
    }

    /// What its ctrl columns hold.
    fn meaning(&self, field: CommandField) -> CtrlMeaning {
        let _ = field;
        CtrlMeaning::Effort
    }

    /// Per-group constants the law reads through [`LawIo::data`] (e.g. a
    /// lookup table); not randomizable.
    fn group_data(&self) -> Vec<f32> {
        Vec::new()
    }

    /// The `ctrlrange` and `forcerange` of the simulator actuator the kind
    /// compiles to, `None` where unlimited. Informational.
    fn ranges(&self) -> (Option<[f32; 2]>, Option<[f32; 2]>) {
        (None, None)
    }

    /// The MuJoCo actuator the kind compiles to when a group computes its
    /// force ([`GroupCfg::compute_force`](crate::GroupCfg::compute_force)).
    fn mujoco_equivalent(&self, group: &str) -> Result<Option<super::MjGeneralCfg>, Error> {
        let _ = group;
        Ok(None)
    }

    /// Warnings worth telling the user (mjlab's), not errors.
    fn warnings(&self, group: &str) -> Vec<String> {
        let _ = group;
        Vec::new()
    }

    /// The law for one (env, target): returns the column's value.
    fn law<I: LawIo>(io: &mut I) -> f32;

    /// [`Kind::law`]'s value and, where the kind has one, a probe for the
    /// CPU's non-finite check: a number that is not finite whenever one of
    /// the five command values or the value is not (it may also be when all
    /// are finite, on an overflow: the step then checks them one by one).
    /// The law's pass then tests the probe alone, not the six values. The
    /// default has none. A PD torque before its clamp is one: it sums the
    /// five values through `−`, `×` and `+` (a gain of 0 times an infinity
    /// is NaN), and the clamp of a finite torque to finite or infinite
    /// bounds is finite.
    #[inline(always)]
    fn law_probed<I: LawIo>(io: &mut I) -> (f32, Option<f32>) {
        (Self::law(io), None)
    }
}

/// Code generic over every registered kind (see [`KindId::visit`](super::KindId::visit)):
/// the backends' dispatch, the WGSL prelude, the tests that cover every kind.
pub trait KindVisitor {
    /// What a visit returns.
    type Output;
    /// Called with the kind as a type parameter.
    fn visit<K: Kind>(self) -> Self::Output;
}

/// A kind's declarations, without its type.
#[derive(Debug, Clone, Copy)]
pub struct SpecInfo {
    /// [`Kind::NAME`].
    pub name: &'static str,
    /// [`Kind::KEY`].
    pub key: &'static str,
    /// [`Kind::PARAMS`].
    pub params: &'static [ParamSpec],
    /// [`Kind::STATE`].
    pub state: &'static [StateSpec],
    /// [`Kind::READS`].
    pub reads: &'static [CommandField],
    /// [`Kind::INPUTS`].
    pub inputs: &'static [PlaneSpec],
    /// [`Kind::OUTPUTS`].
    pub outputs: &'static [PlaneSpec],
    /// [`Kind::WGSL`].
    pub wgsl: &'static str,
    /// [`Kind::STAGE`].
    pub stage: Stage,
    /// [`Kind::SITES`].
    pub sites: bool,
    /// [`Kind::COSTLY`].
    pub costly: bool,
}

pub(crate) struct InfoOf;

impl KindVisitor for InfoOf {
    type Output = SpecInfo;
    fn visit<K: Kind>(self) -> SpecInfo {
        SpecInfo {
            name: K::NAME,
            key: K::KEY,
            params: K::PARAMS,
            state: K::STATE,
            reads: K::READS,
            inputs: K::INPUTS,
            outputs: K::OUTPUTS,
            wgsl: K::WGSL,
            stage: K::STAGE,
            sites: K::SITES,
            costly: K::COSTLY,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::KindId;
    use std::cell::RefCell;

    /// A [`LawIo`] that records what a law touches.
    struct Recorder {
        field: CommandField,
        targets: RefCell<Vec<CommandField>>,
        params: RefCell<Vec<usize>>,
        state: RefCell<Vec<usize>>,
        written: Vec<usize>,
        inputs: RefCell<Vec<usize>>,
        outputs: Vec<usize>,
    }

    impl LawIo for Recorder {
        fn param(&self, k: usize) -> f32 {
            self.params.borrow_mut().push(k);
            1.0
        }
        fn target(&self, field: CommandField) -> f32 {
            self.targets.borrow_mut().push(field);
            0.5
        }
        fn pos(&self) -> f32 {
            0.25
        }
        fn vel(&self) -> f32 {
            -0.5
        }
        fn field(&self) -> CommandField {
            self.field
        }
        fn state(&self, k: usize) -> f32 {
            self.state.borrow_mut().push(k);
            0.0
        }
        fn set_state(&mut self, k: usize, _value: f32) {
            self.written.push(k);
        }
        fn input(&self, k: usize) -> f32 {
            self.inputs.borrow_mut().push(k);
            1.0
        }
        fn set_output(&mut self, k: usize, _value: f32) {
            self.outputs.push(k);
        }
        /// Two rows of group data: angles -1 and 1, values 2 and 3; 0 past
        /// them (a kind whose group data is longer, as a dcmotor's five
        /// values, reads zeros there).
        fn data(&self, i: usize) -> f32 {
            [-1.0, 1.0, 2.0, 3.0].get(i).copied().unwrap_or(0.0)
        }
        fn data_len(&self) -> usize {
            4
        }
        fn force_scale(&self) -> f32 {
            1.0
        }
    }

    /// Runs each kind's law with its column field set to each field the
    /// kind declares, and checks that it reads only declared command
    /// fields, parameter slots and state slots.
    struct ReadsOnlyWhatItDeclares;

    impl KindVisitor for ReadsOnlyWhatItDeclares {
        type Output = ();
        fn visit<K: Kind>(self) {
            // A kind driven by its input planes alone reads no command
            // field; its column's field is the default, effort.
            let fields = if K::READS.is_empty() {
                &[CommandField::Effort][..]
            } else {
                K::READS
            };
            for &field in fields {
                let mut io = Recorder {
                    field,
                    targets: RefCell::default(),
                    params: RefCell::default(),
                    state: RefCell::default(),
                    written: Vec::new(),
                    inputs: RefCell::default(),
                    outputs: Vec::new(),
                };
                let out = K::law(&mut io);
                assert!(out.is_finite(), "{}: {out}", K::NAME);
                for f in io.targets.take() {
                    assert!(K::READS.contains(&f), "{} reads {f} undeclared", K::NAME);
                }
                for k in io.params.take() {
                    assert!(k < K::PARAMS.len(), "{} reads parameter slot {k}", K::NAME);
                }
                for k in io.state.take().into_iter().chain(io.written) {
                    assert!(k < K::STATE.len(), "{} touches state slot {k}", K::NAME);
                }
                for k in io.inputs.take() {
                    assert!(k < K::INPUTS.len(), "{} reads input plane {k}", K::NAME);
                }
                for k in 0..K::OUTPUTS.len() {
                    assert!(
                        io.outputs.contains(&k),
                        "{} leaves output {k} unwritten",
                        K::NAME
                    );
                }
                for &k in &io.outputs {
                    assert!(k < K::OUTPUTS.len(), "{} writes output plane {k}", K::NAME);
                }
            }
        }
    }

    #[test]
    fn every_law_touches_only_what_its_spec_declares() {
        for &kind in KindId::ALL {
            kind.visit(ReadsOnlyWhatItDeclares);
        }
    }

    /// Kinds that name the same plane mean the same plane.
    #[test]
    fn planes_of_one_name_agree_across_kinds() {
        let (inputs, outputs) = planes_of(KindId::ALL);
        for &kind in KindId::ALL {
            let spec = kind.spec();
            for (own, all) in [(spec.inputs, &inputs), (spec.outputs, &outputs)] {
                for plane in own {
                    let shared = all.iter().find(|p| p.name == plane.name).unwrap();
                    assert_eq!(shared, plane, "{}: plane `{}`", spec.name, plane.name);
                }
            }
        }
    }

    #[test]
    fn every_kind_has_distinct_names_and_keys() {
        for (i, &a) in KindId::ALL.iter().enumerate() {
            let spec = a.spec();
            for b in &KindId::ALL[i + 1..] {
                assert_ne!(spec.key, b.spec().key);
                assert_ne!(spec.name, b.spec().name);
            }
            assert!(spec.inputs.len() <= MAX_INPUTS && spec.outputs.len() <= MAX_OUTPUTS);
            let params: Vec<&str> = spec.params.iter().map(|p| p.name).collect();
            let state: Vec<&str> = spec.state.iter().map(|s| s.name).collect();
            for (j, name) in params.iter().chain(&state).enumerate() {
                let rest = params.iter().chain(&state).skip(j + 1);
                assert!(
                    rest.clone().all(|other| other != name),
                    "{}: `{name}` twice",
                    spec.name
                );
            }
        }
    }
}
