//! The compiled actuator set: ctrl column order, per-group column ranges,
//! delay buffers, parameter defaults, and the contiguous runs a backend
//! evaluates. Backends share it and the setter logic below.

use crate::cmd::CMD_FIELDS;
use crate::delay::{DelayCfg, DelayParams, DelayShare, DelayState};
use crate::error::Error;
use crate::group::GroupCfg;
use crate::kinds::{
    detect_command_field, ActuatorCfg, CommandField, CtrlMeaning, KindId, MjActuator, MjGeneralCfg,
    ParamSpec, PlaneSpec, Stage, StateSpec, MJ_DEFAULT_TIMESTEP,
};
use crate::net::LearnedStage;
use crate::robot::{NameIndex, Robot, TargetRegex, Transmission};
use mujoco::mj_stage;
use std::collections::{HashMap, HashSet};

mod build;
mod mj_lanes;
mod mujoco;
mod tables;

pub use mujoco::{
    MjDriver, MjMember, MjPathEntry, MjStage, MjTendonLimit, MjTileRows, MJ_FROM_LAW,
};
pub use tables::{ColumnOrder, EnvIds, Lags, ParamRef, Values};

/// Options of the whole actuator set.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanOptions {
    /// mjlab's `EntityCfg.sort_actuators`: wrapped groups first, then every
    /// (group, target) ordered by (joint < tendon < site, definition index)
    /// instead of declaration order. Default false.
    pub sort_actuators: bool,
    /// Seed of the lag RNG. Default 0.
    pub seed: u32,
    /// The physics step (s) that MuJoCo-law activations advance by each
    /// step (MuJoCo's `opt.timestep`). Default 0.002, MuJoCo's.
    pub timestep: f32,
}

impl Default for PlanOptions {
    fn default() -> Self {
        PlanOptions {
            sort_actuators: false,
            seed: 0,
            timestep: MJ_DEFAULT_TIMESTEP,
        }
    }
}

/// One compiled group.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupInfo {
    /// The configuration as given.
    pub cfg: GroupCfg,
    /// The command field its law forwards or computes from.
    pub field: CommandField,
    /// Where its columns go after the law: [`Stage::MuJoCo`] for MuJoCo-law
    /// kinds and groups that compute their force.
    pub stage: Stage,
    /// Offset of its [`ActuatorCfg::group_data`] in [`Plan::group_data`].
    pub data_offset: usize,
    /// Length of its group data.
    pub data_len: usize,
    /// Resolved target names, in definition order.
    pub targets: Vec<String>,
    /// Command column of each target.
    pub cmd_columns: Vec<usize>,
    /// Ctrl column of each target.
    pub ctrl_columns: Vec<usize>,
    /// Index of its delay buffer in [`Plan::buffers`].
    pub delay_buffer: Option<usize>,
    /// Each of its kind's [`Kind::INPUTS`](crate::Kind::INPUTS): the plane's
    /// index in [`Plan::input_planes`].
    pub input_planes: Vec<usize>,
    /// Each of its kind's [`Kind::OUTPUTS`](crate::Kind::OUTPUTS): the
    /// plane's index in [`Plan::output_planes`].
    pub output_planes: Vec<usize>,
    /// [`GroupInfo::state`].
    state: Vec<StateSpec>,
}

impl GroupInfo {
    /// Its kind.
    pub fn kind(&self) -> KindId {
        self.cfg.actuator.kind_id()
    }

    /// Its state slots, `[slot][env][ctrl]` in the plan's state table: its
    /// kind's for its settings ([`ActuatorCfg::state`]), or MuJoCo's
    /// activation ([`MJ_ACT`](crate::MJ_ACT)) for a group in [`Stage::MuJoCo`].
    pub fn state(&self) -> &[StateSpec] {
        &self.state
    }
}

/// What one ctrl column is.
#[derive(Debug, Clone, PartialEq)]
pub struct CtrlColumn {
    /// Index of the group in [`Plan::groups`].
    pub group: usize,
    /// The target's name.
    pub target: String,
    /// Its transmission.
    pub transmission: Transmission,
    /// Its command column.
    pub cmd_column: usize,
    /// What the value means to the simulator.
    pub meaning: CtrlMeaning,
    /// `ctrlrange` of the simulator actuator this compiles to, if limited.
    pub ctrl_range: Option<[f32; 2]>,
    /// `forcerange` of the simulator actuator, if limited.
    pub force_range: Option<[f32; 2]>,
}

/// One delay buffer: one lag and one history per env, shared by its groups.
#[derive(Debug, Clone, PartialEq)]
pub struct DelayBuffer {
    /// The settings.
    pub cfg: DelayCfg,
    /// Step-loop form of the settings.
    pub params: DelayParams,
    /// Groups that share it.
    pub groups: Vec<usize>,
    /// Command column of each ring column.
    pub cmd_columns: Vec<usize>,
    /// Offset of this buffer's ring inside an env's ring row (floats).
    pub ring_offset: usize,
    auto_key: Option<(KindId, Transmission)>,
    name: Option<String>,
}

impl DelayBuffer {
    /// Floats per env: `history_len × 3 fields × columns`, laid out
    /// `[slot][field][column]`.
    pub fn ring_len(&self) -> usize {
        self.params.len as usize * 3 * self.cmd_columns.len()
    }
}

/// Where a run's position, velocity and effort targets come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetSource {
    /// The command, at the run's command columns.
    Cmd,
    /// The delayed frame of a buffer, from this ring column on.
    Ring {
        /// The buffer.
        buffer: usize,
        /// First ring column.
        column: usize,
    },
}

/// A stretch of ctrl columns that runs one law over contiguous inputs: the
/// unit a backend's inner loop vectorizes over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Run {
    /// The kind whose law runs.
    pub kind: KindId,
    /// The command field of its columns.
    pub field: CommandField,
    /// Its first group. Every group of a run shares its kind, command
    /// field, stage and group data.
    pub group: usize,
    /// First ctrl column (also the first column of every parameter table).
    pub ctrl_start: usize,
    /// First command column (for `pos`/`vel`, and the targets when not delayed).
    pub cmd_start: usize,
    /// Number of columns.
    pub len: usize,
    /// Where the targets come from.
    pub targets: TargetSource,
}

impl Run {
    /// The run of its column `i` alone.
    pub fn element(&self, i: usize) -> Run {
        assert!(i < self.len, "column {i} of a run of {}", self.len);
        Run {
            ctrl_start: self.ctrl_start + i,
            cmd_start: self.cmd_start + i,
            len: 1,
            targets: match self.targets {
                TargetSource::Cmd => TargetSource::Cmd,
                TargetSource::Ring { buffer, column } => TargetSource::Ring {
                    buffer,
                    column: column + i,
                },
            },
            ..*self
        }
    }
}

/// The compiled actuator set for `num_envs` envs.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    num_envs: usize,
    num_targets: usize,
    seed: u32,
    groups: Vec<GroupInfo>,
    ctrl: Vec<CtrlColumn>,
    buffers: Vec<DelayBuffer>,
    runs: Vec<Run>,
    gathered_runs: Vec<Run>,
    ring_stride: usize,
    claimed: Vec<(usize, usize)>,
    param_defaults: Vec<f32>,
    state_resets: Vec<f32>,
    inputs: Vec<PlaneSpec>,
    outputs: Vec<PlaneSpec>,
    group_data: Vec<f32>,
    warnings: Vec<String>,
    mj: MjStage,
    learned: LearnedStage,
    timestep: f32,
}

impl Plan {
    /// Bytes a backend's per-env tables take for this plan, with the
    /// caller's command (`None` when the count overflows): what
    /// [`Plan::new`] checks against the memory the machine has available.
    pub fn memory_bytes(&self) -> Option<u64> {
        let c = self.num_ctrl();
        let floats = [
            CMD_FIELDS.len() * self.num_targets,
            c,
            self.num_param_slots() * c,
            2 * self.num_state_slots() * c,
            self.inputs.len() * self.num_targets,
            self.outputs.len() * c,
            self.ring_stride,
            self.mj.effort_width(),
        ]
        .iter()
        .try_fold(0u64, |a, &b| a.checked_add(b as u64))?;
        let delay_states = (self.buffers.len() * std::mem::size_of::<DelayState>()) as u64;
        // Per-env flags and headers.
        let per_env = floats.checked_mul(4)?.checked_add(delay_states + 16)?;
        per_env.checked_mul(self.num_envs as u64)
    }

    /// The kinds the plan's groups use, in id order, each once.
    pub fn kinds(&self) -> Vec<KindId> {
        let mut kinds: Vec<KindId> = self.groups.iter().map(|g| g.kind()).collect();
        kinds.sort_unstable();
        kinds.dedup();
        kinds
    }

    /// The input planes its kinds read ([`Kind::INPUTS`](crate::Kind::INPUTS)),
    /// each `(num_envs, num_targets)`, set with
    /// [`Backend::set_input`](crate::Backend::set_input).
    pub fn input_planes(&self) -> &[PlaneSpec] {
        &self.inputs
    }

    /// The output planes its kinds write ([`Kind::OUTPUTS`](crate::Kind::OUTPUTS)),
    /// each `(num_envs, num_ctrl)`, read with
    /// [`Backend::read_output`](crate::Backend::read_output).
    pub fn output_planes(&self) -> &[PlaneSpec] {
        &self.outputs
    }

    /// The index of input plane `name` in [`Plan::input_planes`].
    pub fn input_index(&self, name: &str) -> Result<usize, Error> {
        plane_index(&self.inputs, "input", name)
    }

    /// The index of output plane `name` in [`Plan::output_planes`].
    pub fn output_index(&self, name: &str) -> Result<usize, Error> {
        plane_index(&self.outputs, "output", name)
    }

    /// Every input plane at its default, `[plane][env][target]`.
    pub fn input_defaults(&self) -> Vec<f32> {
        let plane = self.num_envs * self.num_targets;
        self.inputs
            .iter()
            .flat_map(|p| std::iter::repeat_n(p.default, plane))
            .collect()
    }

    /// Number of envs.
    pub fn num_envs(&self) -> usize {
        self.num_envs
    }
    /// Command columns (the robot's joints + tendons + sites).
    pub fn num_targets(&self) -> usize {
        self.num_targets
    }
    /// Ctrl columns.
    pub fn num_ctrl(&self) -> usize {
        self.ctrl.len()
    }
    /// The lag RNG's seed.
    pub fn seed(&self) -> u32 {
        self.seed
    }
    /// The groups, in declaration order.
    pub fn groups(&self) -> &[GroupInfo] {
        &self.groups
    }
    /// Every ctrl column in output order, with its meaning.
    pub fn ctrl_columns(&self) -> &[CtrlColumn] {
        &self.ctrl
    }
    /// The delay buffers.
    pub fn buffers(&self) -> &[DelayBuffer] {
        &self.buffers
    }
    /// The contiguous runs the step evaluates.
    pub fn runs(&self) -> &[Run] {
        &self.runs
    }
    /// The runs over command rows gathered into ctrl order (row `c` of a
    /// gathered field is the command column of ctrl column `c`, its targets
    /// already delayed where its group is): each run's `cmd_start` is its
    /// `ctrl_start`, its targets are [`TargetSource::Cmd`], and neighbours
    /// with the same law merge, so groups over scattered joints, delayed or
    /// not, become one run per law.
    pub fn gathered_runs(&self) -> &[Run] {
        &self.gathered_runs
    }
    /// Floats of delay history per env (all buffers).
    pub fn ring_stride(&self) -> usize {
        self.ring_stride
    }
    /// Command column ranges `(start, len)` that some group reads: the
    /// non-finite check covers exactly these.
    pub fn claimed_columns(&self) -> &[(usize, usize)] {
        &self.claimed
    }
    /// Parameter slots: the most parameters of any kind in the plan. Tables
    /// are `[slot][env][ctrl column]`; a column's slot `k` holds its kind's
    /// `k`-th parameter (unused slots hold 0).
    pub fn num_param_slots(&self) -> usize {
        self.param_defaults.len() / self.ctrl.len().max(1)
    }
    /// State slots: the most state slots of any kind in the plan, laid out
    /// as the parameters.
    pub fn num_state_slots(&self) -> usize {
        self.state_resets.len() / self.ctrl.len().max(1)
    }
    /// The configured parameter values, `[slot][ctrl column]`: every env's row.
    pub fn param_defaults(&self) -> &[f32] {
        &self.param_defaults
    }
    /// The state each slot resets to, `[slot][ctrl column]`.
    pub fn state_resets(&self) -> &[f32] {
        &self.state_resets
    }
    /// Every group's [`ActuatorCfg::group_data`], at its
    /// [`GroupInfo::data_offset`].
    pub fn group_data(&self) -> &[f32] {
        &self.group_data
    }
    /// One group's data.
    pub fn data_of(&self, group: &GroupInfo) -> &[f32] {
        &self.group_data[group.data_offset..][..group.data_len]
    }
    /// Things worth telling the user that are not errors (mjlab's warnings).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }
    /// The MuJoCo stage (empty when no group computes MuJoCo's force).
    pub fn mj(&self) -> &MjStage {
        &self.mj
    }
    /// This plan with its MuJoCo stage computed one actuator at a time, in
    /// the general loop: no vector lanes, no tiles of envs. The results are
    /// the same bits, only slower; the lane forms are checked against it.
    #[doc(hidden)]
    pub fn without_mj_lanes(mut self) -> Plan {
        self.mj.one_at_a_time();
        self
    }
    /// The learned-network stage (empty when no group is learned).
    pub fn learned(&self) -> &LearnedStage {
        &self.learned
    }
    /// The physics step MuJoCo activations advance by.
    pub fn timestep(&self) -> f32 {
        self.timestep
    }

    /// Checks that a caller's buffer holds `expected` values.
    pub fn check_len(what: &'static str, got: usize, expected: usize) -> Result<(), Error> {
        if got == expected {
            Ok(())
        } else {
            Err(Error::BufferShape {
                what,
                got,
                expected,
            })
        }
    }

    /// Checks a `(num_envs, num_ctrl)` output buffer's length.
    pub fn check_ctrl_len(&self, got: usize) -> Result<(), Error> {
        Self::check_len("the ctrl buffer", got, self.num_envs * self.num_ctrl())
    }

    /// The delay buffer of `group`, after checking that a per-env output
    /// (`what`, e.g. lags or delay states) holds `num_envs` values.
    pub fn per_env_buffer_of(
        &self,
        group: &str,
        what: &'static str,
        got: usize,
    ) -> Result<usize, Error> {
        let b = self.buffer_of(group)?;
        Self::check_len(what, got, self.num_envs)?;
        Ok(b)
    }

    /// The delay buffer of a group.
    pub fn buffer_of(&self, group: &str) -> Result<usize, Error> {
        let g = self.group_index(group)?;
        self.groups[g].delay_buffer.ok_or_else(|| Error::NoDelay {
            group: group.to_owned(),
        })
    }

    /// Resets the delay state of the selected envs at global step `step`.
    pub fn reset_delay_states(
        &self,
        env_ids: EnvIds<'_>,
        states: &mut [DelayState],
        step: u32,
    ) -> Result<(), Error> {
        let n = self.check_env_ids(env_ids)?;
        let nb = self.buffers.len();
        for i in 0..n {
            let env = Self::env_at(env_ids, i);
            self.reset_env(env, step, &mut states[env * nb..(env + 1) * nb]);
        }
        Ok(())
    }

    /// The post-reset delay state of one env (one entry per buffer) at
    /// global step `step`.
    pub fn reset_env(&self, env: usize, step: u32, states: &mut [DelayState]) {
        for (state, buffer) in states.iter_mut().zip(&self.buffers) {
            buffer.params.reset(state, self.seed, env as u32, step);
        }
    }
}

fn plane_index(planes: &[PlaneSpec], what: &'static str, name: &str) -> Result<usize, Error> {
    planes
        .iter()
        .position(|p| p.name == name)
        .ok_or_else(|| Error::UnknownPlane {
            what,
            name: name.to_owned(),
            known: names_of(planes.iter().map(|p| p.name)),
        })
}

fn names_of<'a>(names: impl Iterator<Item = &'a str>) -> String {
    names.collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::{IdealPdCfg, RemotizedPdCfg};

    fn runs_of(groups: Vec<GroupCfg>) -> usize {
        let robot = Robot::from_joints(["a", "b", "c", "d"]);
        Plan::new(&robot, groups, 2, PlanOptions::default())
            .unwrap()
            .runs()
            .len()
    }

    #[test]
    fn adjacent_groups_of_one_law_form_one_run() {
        // Parameters live in tables, so two PD groups are one loop.
        let pd =
            |name: &str, re: &str, kp: f32| GroupCfg::new(name, [re], IdealPdCfg::new(kp, 0.0));
        assert_eq!(runs_of(vec![pd("ab", "a|b", 1.0), pd("cd", "c|d", 2.0)]), 1);
        // Group data (a lookup table) is per group: equal tables share a
        // run, different ones do not.
        let remotized = |name: &str, re: &str, torque: f32| {
            GroupCfg::new(
                name,
                [re],
                RemotizedPdCfg::new(1.0, 0.0, [[0.0, 0.0, torque]]),
            )
        };
        assert_eq!(
            runs_of(vec![
                remotized("ab", "a|b", 5.0),
                remotized("cd", "c|d", 5.0)
            ]),
            1
        );
        assert_eq!(
            runs_of(vec![
                remotized("ab", "a|b", 5.0),
                remotized("cd", "c|d", 6.0)
            ]),
            2
        );
    }
}
