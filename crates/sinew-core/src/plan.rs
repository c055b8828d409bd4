//! The compiled actuator set: ctrl column order, per-group column ranges,
//! delay buffers, parameter defaults, and the contiguous runs a backend
//! evaluates. Backends share it and the setter logic below.

use crate::cmd::CMD_FIELDS;
use crate::delay::{DelayCfg, DelayParams, DelayShare, DelayState};
use crate::error::Error;
use crate::group::GroupCfg;
use crate::kinds::{
    detect_command_field, ActuatorCfg, CommandField, CtrlMeaning, KindId, MjActuator, MjGeneralCfg,
    ParamSpec, Stage, StateSpec, MJ_DEFAULT_TIMESTEP,
};
use crate::net::LearnedStage;
use crate::robot::{NameIndex, Robot, TargetRegex, Transmission};
use std::collections::{HashMap, HashSet};

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

/// One entry of a MuJoCo actuator's transmission path (WGSL: two words of
/// the words table).
#[derive(Debug, Clone, Copy, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct MjPathEntry {
    /// The command column whose `pos`/`vel` enter the length and velocity;
    /// a joint's column (`< num_joints`) also receives `gear·coef·force`.
    pub column: u32,
    /// The coefficient.
    pub coef: f32,
}

/// A tendon whose `actuatorfrcrange` scales the forces of its actuators.
#[derive(Debug, Clone, PartialEq)]
pub struct MjTendonLimit {
    /// Lower end of the summed force.
    pub lo: f32,
    /// Upper end.
    pub hi: f32,
    /// Indices (in [`MjStage::actuators`]) of the actuators on the tendon.
    pub members: Vec<u32>,
}

/// The MuJoCo stage of a plan: every column in [`Stage::MuJoCo`], compiled, with what couples them per env.
///
/// Per env, after the laws forward each actuator's control: clamp the
/// controls, apply MuJoCo's bad-control guard, [`mj_force`](crate::mj_force)
/// for each actuator, scale by tendon ranges, clamp by force ranges, sum
/// `moment·force` into joint efforts and clamp those by joint ranges.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MjStage {
    /// One per MuJoCo-law ctrl column, in ctrl-column order; the index is
    /// the actuator's column in the activation state.
    pub actuators: Vec<MjActuator>,
    /// Every actuator's transmission path, at its `path_offset`.
    pub path: Vec<MjPathEntry>,
    /// Tendons with an `actuatorfrcrange` and at least one actuator.
    pub tendon_limits: Vec<MjTendonLimit>,
    /// `(joint, [lo, hi])` of joints with an `actuatorfrcrange`.
    pub joint_limits: Vec<(u32, [f32; 2])>,
    /// Joints of the robot: the width of the joint-effort output.
    pub num_joints: usize,
}

impl MjStage {
    /// True when the plan has no MuJoCo-law column.
    pub fn is_empty(&self) -> bool {
        self.actuators.is_empty()
    }

    /// Floats of MuJoCo state per env: the activations, then the `act_dot`s.
    pub fn state_stride(&self) -> usize {
        2 * self.actuators.len()
    }

    /// The transmission path of one of [`MjStage::actuators`].
    pub fn path_of(&self, a: &MjActuator) -> &[MjPathEntry] {
        &self.path[a.path_offset as usize..][..a.path_len as usize]
    }

    /// Width of the joint-effort rows: the robot's joints, or 0 without a
    /// MuJoCo-law column.
    pub fn effort_width(&self) -> usize {
        if self.is_empty() {
            0
        } else {
            self.num_joints
        }
    }

    /// One env's MuJoCo stage (WGSL `mj_env_stage`): `ctrl` holds each
    /// actuator's forwarded control on entry and its `actuator_force` on
    /// exit; `pos`/`vel` are the env's command rows; `state` is its
    /// `[act.., act_dot..]` row, of which only the `act_dot`s are written;
    /// `effort` its joint-effort row. Returns false when some next
    /// activation is not finite. The activations advance in
    /// [`MjStage::commit`], once the env is known to be finite.
    pub fn env_forces(
        &self,
        pos: &[f32],
        vel: &[f32],
        ctrl: &mut [f32],
        state: &mut [f32],
        effort: &mut [f32],
    ) -> bool {
        use crate::kinds::{mj_ctrl, mj_force, mj_force_limit, mj_tendon_scale, MJ_MAX_CTRL};
        let m = self.actuators.len();
        let (act, act_dot) = state.split_at_mut(m);
        // Clamp the controls, then MuJoCo's guard: one control beyond 1e10
        // zeroes every control (of this env).
        let mut wild = false;
        for a in &self.actuators {
            let u = mj_ctrl(a, ctrl[a.ctrl_column as usize]);
            ctrl[a.ctrl_column as usize] = u;
            wild |= u.abs() > MJ_MAX_CTRL;
        }
        let mut next_finite = true;
        for (k, a) in self.actuators.iter().enumerate() {
            let c = a.ctrl_column as usize;
            let u = if wild { 0.0 } else { ctrl[c] };
            let path = self.path_of(a);
            let (mut length, mut velocity) = (0.0f32, 0.0f32);
            for e in path {
                length += e.coef * pos[e.column as usize];
                velocity += e.coef * vel[e.column as usize];
            }
            let out = mj_force(a, u, act[k], a.gear * length, a.gear * velocity);
            ctrl[c] = out.force;
            act_dot[k] = out.act_dot;
            next_finite &= out.act_next.is_finite();
        }
        for limit in &self.tendon_limits {
            let total: f32 = limit
                .members
                .iter()
                .map(|&k| ctrl[self.actuators[k as usize].ctrl_column as usize])
                .sum();
            let scale = mj_tendon_scale(total, limit.lo, limit.hi);
            for &k in &limit.members {
                ctrl[self.actuators[k as usize].ctrl_column as usize] *= scale;
            }
        }
        effort.fill(0.0);
        for a in &self.actuators {
            let c = a.ctrl_column as usize;
            let force = mj_force_limit(a, ctrl[c]);
            ctrl[c] = force;
            for e in self.path_of(a) {
                if (e.column as usize) < self.num_joints {
                    effort[e.column as usize] += a.gear * e.coef * force;
                }
            }
        }
        for &(j, [lo, hi]) in &self.joint_limits {
            effort[j as usize] = crate::kinds::clip(effort[j as usize], lo, hi);
        }
        next_finite
    }

    /// Advances one env's activations by the `act_dot`s
    /// [`MjStage::env_forces`] stored (WGSL `mj_commit`).
    pub fn commit(&self, state: &mut [f32]) {
        let (act, act_dot) = state.split_at_mut(self.actuators.len());
        for (k, a) in self.actuators.iter().enumerate() {
            act[k] = crate::kinds::mj_next_act(a, act[k], act_dot[k]);
        }
    }
}

/// A parameter of one group of a plan, resolved by [`Plan::param_ref`].
#[derive(Debug, Clone, Copy)]
pub struct ParamRef {
    group: usize,
    slot: usize,
    spec: &'static ParamSpec,
}

impl ParamRef {
    /// The parameter's spec (name, unit, domain).
    pub fn spec(&self) -> &'static ParamSpec {
        self.spec
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
    /// For a MuJoCo-law group, each target's index in [`MjStage::actuators`]
    /// (its activation column); empty otherwise.
    pub mj_indices: Vec<usize>,
}

impl GroupInfo {
    /// Its kind.
    pub fn kind(&self) -> KindId {
        self.cfg.actuator.kind_id()
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

/// Which envs a setter or reset touches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnvIds<'a> {
    /// Every env.
    All,
    /// These envs, in this order (values follow it).
    List(&'a [u32]),
}

impl<'a> From<&'a [u32]> for EnvIds<'a> {
    fn from(ids: &'a [u32]) -> Self {
        EnvIds::List(ids)
    }
}

impl<'a, const N: usize> From<&'a [u32; N]> for EnvIds<'a> {
    fn from(ids: &'a [u32; N]) -> Self {
        EnvIds::List(ids)
    }
}

/// Values for a parameter setter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Values<'a> {
    /// One value for every selected (env, target).
    Scalar(f32),
    /// One value per selected env, broadcast over the group's targets.
    PerEnv(&'a [f32]),
    /// One value per (selected env, group target), row-major.
    PerEnvTarget(&'a [f32]),
}

impl Values<'_> {
    /// Checks that the values fit `num_envs` selected envs × `num_targets`
    /// targets and returns them as given (one for a scalar).
    fn checked(
        &self,
        group: &str,
        field: &str,
        num_envs: usize,
        num_targets: usize,
    ) -> Result<&[f32], Error> {
        let (given, expected) = match self {
            Values::Scalar(v) => (std::slice::from_ref(v), 1),
            Values::PerEnv(v) => (*v, num_envs),
            Values::PerEnvTarget(v) => (*v, num_envs * num_targets),
        };
        if given.len() != expected {
            return Err(Error::ValuesShape {
                group: group.to_owned(),
                field: field.to_owned(),
                got: given.len(),
                num_envs,
                num_targets,
            });
        }
        Ok(given)
    }

    /// The value of the `i`-th selected env's target `t` (of `num_targets`).
    #[inline]
    fn at(&self, i: usize, t: usize, num_targets: usize) -> f32 {
        match self {
            Values::Scalar(v) => *v,
            Values::PerEnv(v) => v[i],
            Values::PerEnvTarget(v) => v[i * num_targets + t],
        }
    }
}

impl From<f32> for Values<'_> {
    fn from(v: f32) -> Self {
        Values::Scalar(v)
    }
}

/// Lags for `set_lags`, in physics steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lags<'a> {
    /// One lag for every selected env.
    Scalar(u32),
    /// One lag per selected env.
    PerEnv(&'a [u32]),
}

impl From<u32> for Lags<'_> {
    fn from(v: u32) -> Self {
        Lags::Scalar(v)
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
    ring_stride: usize,
    claimed: Vec<(usize, usize)>,
    param_defaults: Vec<f32>,
    state_resets: Vec<f32>,
    group_data: Vec<f32>,
    warnings: Vec<String>,
    mj: MjStage,
    learned: LearnedStage,
    timestep: f32,
}

impl Plan {
    /// Resolves `groups` against `robot` for `num_envs` envs.
    ///
    /// Every error is typed and names the group, field and value: a
    /// config out of its domain, a regex that does not parse or resolve,
    /// a target claimed twice, and [`Error::TooLarge`] when the backend
    /// tables for `num_envs` envs ([`Plan::memory_bytes`]) would not fit in
    /// the memory the machine has available.
    ///
    /// ```
    /// use sinew_core::{GroupCfg, IdealPdCfg, Plan, PlanOptions, Robot};
    /// let robot = Robot::from_joints(["hip", "knee"]);
    /// let plan = Plan::new(&robot, vec![GroupCfg::new("leg", [".*"], IdealPdCfg::new(20.0, 0.5))], 8, PlanOptions::default())?;
    /// assert_eq!(plan.num_ctrl(), 2);
    /// assert_eq!(plan.ctrl_columns()[1].target, "knee");
    /// # Ok::<(), sinew_core::Error>(())
    /// ```
    pub fn new(
        robot: &Robot,
        groups: Vec<GroupCfg>,
        num_envs: usize,
        options: PlanOptions,
    ) -> Result<Plan, Error> {
        if num_envs == 0 {
            return Err(Error::NoEnvs);
        }
        if !(options.timestep.is_finite() && options.timestep > 0.0) {
            return Err(Error::InvalidParam {
                group: "(plan options)".into(),
                field: "timestep".into(),
                value: options.timestep.to_string(),
                reason: "the physics step must be finite and > 0",
            });
        }
        robot.validate()?;
        let mut infos: Vec<GroupInfo> = Vec::with_capacity(groups.len());
        let mut warnings = Vec::new();
        let mut group_data = Vec::new();
        // (transmission, index) -> the first group that claimed it (all
        // claimants of a target are MuJoCo-law groups, or there is one).
        let mut claims: HashMap<(Transmission, usize), usize> = HashMap::new();
        let mut group_names = HashSet::new();
        let mut name_index = NameIndex::default();
        for cfg in groups {
            if !group_names.insert(cfg.name.clone()) {
                return Err(Error::DuplicateGroup { name: cfg.name });
            }
            cfg.validate()?;
            let mut ids =
                robot.resolve_in(&mut name_index, &cfg.name, &cfg.targets, cfg.transmission)?;
            let names = robot.names(cfg.transmission);
            let field = match &cfg.actuator {
                ActuatorCfg::Wrapped(w) => {
                    let (kept, field) = resolve_wrapped(robot, &cfg, w.command_field, &ids)?;
                    ids = kept;
                    field
                }
                other => other
                    .command_field()
                    .expect("only wrapped groups detect their command field"),
            };
            let stage = if cfg.compute_force {
                Stage::MuJoCo
            } else {
                cfg.actuator.stage()
            };
            let mujoco = stage == Stage::MuJoCo;
            for &id in &ids {
                // Several MuJoCo-law groups may share a target, as MuJoCo
                // actuators share a joint: their efforts add up.
                let first = *claims.entry((cfg.transmission, id)).or_insert(infos.len());
                if first != infos.len() && !(mujoco && infos[first].stage == Stage::MuJoCo) {
                    let regex = cfg
                        .targets
                        .iter()
                        .find(|re| {
                            TargetRegex::new(&cfg.name, re).is_ok_and(|r| r.is_match(&names[id]))
                        })
                        .cloned()
                        .unwrap_or_default();
                    return Err(Error::TargetClaimed {
                        transmission: cfg.transmission,
                        name: names[id].clone(),
                        first: infos[first].cfg.name.clone(),
                        second: cfg.name,
                        regex,
                    });
                }
            }
            warnings.extend(cfg.actuator.warnings(&cfg.name));
            let data = cfg.actuator.group_data();
            infos.push(GroupInfo {
                targets: ids.iter().map(|&i| names[i].clone()).collect(),
                cmd_columns: ids
                    .iter()
                    .map(|&i| robot.column(cfg.transmission, i))
                    .collect(),
                ctrl_columns: Vec::new(),
                delay_buffer: None,
                mj_indices: Vec::new(),
                field,
                stage,
                data_offset: group_data.len(),
                data_len: data.len(),
                cfg,
            });
            group_data.extend(data);
        }

        // Ctrl order: declaration order, then target order; or mjlab's sort.
        let mut order: Vec<(usize, usize)> = infos
            .iter()
            .enumerate()
            .flat_map(|(g, info)| (0..info.targets.len()).map(move |t| (g, t)))
            .collect();
        if options.sort_actuators {
            let wrapped = |g: usize| matches!(infos[g].cfg.actuator, ActuatorCfg::Wrapped(_));
            order.sort_by_key(|&(g, t)| {
                if wrapped(g) {
                    (0, 0, 0, g, t)
                } else {
                    (
                        1,
                        infos[g].cfg.transmission as usize,
                        infos[g].cmd_columns[t],
                        0,
                        0,
                    )
                }
            });
        }
        let mut ctrl = Vec::with_capacity(order.len());
        for (column, &(g, t)) in order.iter().enumerate() {
            let info = &mut infos[g];
            info.ctrl_columns.push(column);
            let (ctrl_range, force_range) = info.cfg.actuator.ranges();
            ctrl.push(CtrlColumn {
                group: g,
                target: info.targets[t].clone(),
                transmission: info.cfg.transmission,
                cmd_column: info.cmd_columns[t],
                meaning: match info.stage {
                    Stage::MuJoCo => CtrlMeaning::ActuatorForce,
                    Stage::Law | Stage::Learned => info.cfg.actuator.meaning(info.field),
                },
                ctrl_range,
                force_range,
            });
        }
        // With sorting, a group's ctrl columns were pushed in sorted order,
        // which is its target order too (targets are in definition order).

        let buffers = assign_buffers(&mut infos)?;
        let mj = mj_stage(robot, &mut infos, &ctrl, options.timestep)?;
        let learned = LearnedStage::compile(&infos, &ctrl);
        let mut plan = Plan {
            num_envs,
            num_targets: robot.num_targets(),
            seed: options.seed,
            groups: infos,
            ctrl,
            buffers,
            runs: Vec::new(),
            ring_stride: 0,
            claimed: Vec::new(),
            param_defaults: Vec::new(),
            state_resets: Vec::new(),
            group_data,
            warnings,
            mj,
            learned,
            timestep: options.timestep,
        };
        plan.layout();
        crate::memory::check_bytes("(plan)", "num_envs", num_envs, plan.memory_bytes())?;
        Ok(plan)
    }

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
            self.ring_stride,
            self.mj.state_stride(),
            self.mj.effort_width(),
            self.learned.state_stride,
        ]
        .iter()
        .try_fold(0u64, |a, &b| a.checked_add(b as u64))?;
        let delay_states = (self.buffers.len() * std::mem::size_of::<DelayState>()) as u64;
        // Per-env flags and headers.
        let per_env = floats.checked_mul(4)?.checked_add(delay_states + 16)?;
        per_env.checked_mul(self.num_envs as u64)
    }

    /// Ring columns, runs, claimed command ranges and parameter defaults.
    fn layout(&mut self) {
        // Ring columns in ctrl order, so delayed runs stay contiguous.
        let mut ring_column = vec![usize::MAX; self.ctrl.len()];
        for (c, column) in self.ctrl.iter().enumerate() {
            if let Some(b) = self.groups[column.group].delay_buffer {
                ring_column[c] = self.buffers[b].cmd_columns.len();
                self.buffers[b].cmd_columns.push(column.cmd_column);
            }
        }
        let mut offset = 0;
        for buffer in &mut self.buffers {
            buffer.ring_offset = offset;
            offset += buffer.ring_len();
        }
        self.ring_stride = offset;

        let mut runs: Vec<Run> = Vec::new();
        for (c, column) in self.ctrl.iter().enumerate() {
            let group = &self.groups[column.group];
            let targets = match group.delay_buffer {
                Some(buffer) => TargetSource::Ring {
                    buffer,
                    column: ring_column[c],
                },
                None => TargetSource::Cmd,
            };
            if let Some(last) = runs.last_mut() {
                let contiguous_targets = match (last.targets, targets) {
                    (TargetSource::Cmd, TargetSource::Cmd) => true,
                    (
                        TargetSource::Ring {
                            buffer: a,
                            column: ca,
                        },
                        TargetSource::Ring {
                            buffer: b,
                            column: cb,
                        },
                    ) => a == b && cb == ca + last.len,
                    _ => false,
                };
                let first = &self.groups[last.group];
                let same_law = last.kind == group.kind()
                    && last.field == group.field
                    && first.stage == group.stage
                    && self.data_of(first) == self.data_of(group);
                if same_law && column.cmd_column == last.cmd_start + last.len && contiguous_targets
                {
                    last.len += 1;
                    continue;
                }
            }
            runs.push(Run {
                kind: group.kind(),
                field: group.field,
                group: column.group,
                ctrl_start: c,
                cmd_start: column.cmd_column,
                len: 1,
                targets,
            });
        }
        self.runs = runs;

        let mut cols: Vec<usize> = self.ctrl.iter().map(|c| c.cmd_column).collect();
        cols.sort_unstable();
        cols.dedup();
        let mut claimed: Vec<(usize, usize)> = Vec::new();
        for c in cols {
            match claimed.last_mut() {
                Some((start, len)) if *start + *len == c => *len += 1,
                _ => claimed.push((c, 1)),
            }
        }
        self.claimed = claimed;

        // Parameter and state slots: `[slot][ctrl]`, a kind's slot k at k.
        let slots = |of: fn(&ActuatorCfg) -> usize| {
            self.groups
                .iter()
                .map(|g| of(&g.cfg.actuator))
                .max()
                .unwrap_or(0)
        };
        let (num_params, num_state) = (slots(|a| a.params().len()), slots(|a| a.state().len()));
        let num_ctrl = self.ctrl.len();
        self.param_defaults = vec![0.0; num_params * num_ctrl];
        self.state_resets = vec![0.0; num_state * num_ctrl];
        for (c, column) in self.ctrl.iter().enumerate() {
            let actuator = &self.groups[column.group].cfg.actuator;
            for k in 0..actuator.params().len() {
                self.param_defaults[k * num_ctrl + c] = actuator.param_value(k);
            }
            for (k, state) in actuator.state().iter().enumerate() {
                self.state_resets[k * num_ctrl + c] = state.reset;
            }
        }
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
    /// The learned-network stage (empty when no group is learned).
    pub fn learned(&self) -> &LearnedStage {
        &self.learned
    }
    /// The physics step MuJoCo activations advance by.
    pub fn timestep(&self) -> f32 {
        self.timestep
    }

    /// The MuJoCo-state columns of a group, after checking it has them.
    pub fn mj_indices_of(&self, group: &str) -> Result<&[usize], Error> {
        let g = self.group_index(group)?;
        let indices = &self.groups[g].mj_indices;
        if indices.is_empty() {
            return Err(Error::NoActivation {
                group: group.to_owned(),
            });
        }
        Ok(indices)
    }

    /// Writes activations of a MuJoCo-law group into a `(num_envs,
    /// state_stride)` state table after checking everything (finite values,
    /// shape, env ids); nothing is written on error. Calls `touched(env)`
    /// for each env written.
    pub fn write_activation(
        &self,
        group: &str,
        env_ids: EnvIds<'_>,
        values: Values<'_>,
        state: &mut [f32],
        mut touched: impl FnMut(usize),
    ) -> Result<(), Error> {
        let indices = self.mj_indices_of(group)?;
        let n = self.check_env_ids(env_ids)?;
        let given = values.checked(group, "activation", n, indices.len())?;
        if let Some(&bad) = given.iter().find(|v| !v.is_finite()) {
            return Err(crate::kinds::invalid(
                group,
                "activation",
                bad,
                "an activation must be finite",
            ));
        }
        let stride = self.mj.state_stride();
        for i in 0..n {
            let env = Self::env_at(env_ids, i);
            for (t, &k) in indices.iter().enumerate() {
                state[env * stride + k] = values.at(i, t, indices.len());
            }
            touched(env);
        }
        Ok(())
    }

    /// Copies a MuJoCo-law group's activations (`act_dot == false`) or
    /// activation rates (`act_dot == true`) from a `(num_envs,
    /// state_stride)` state table into `out`, `(num_envs, group targets)`.
    pub fn read_mj_state(
        &self,
        group: &str,
        act_dot: bool,
        state: &[f32],
        out: &mut [f32],
    ) -> Result<(), Error> {
        let indices = self.mj_indices_of(group)?;
        let what = if act_dot {
            "the act_dot buffer"
        } else {
            "the activation buffer"
        };
        Self::check_len(what, out.len(), self.num_envs * indices.len())?;
        let stride = self.mj.state_stride();
        let shift = if act_dot { self.mj.actuators.len() } else { 0 };
        for (row, state_row) in out
            .chunks_exact_mut(indices.len())
            .zip(state.chunks_exact(stride))
        {
            for (o, &k) in row.iter_mut().zip(indices) {
                *o = state_row[shift + k];
            }
        }
        Ok(())
    }

    /// Checks a `(num_envs, num_joints)` joint-effort buffer's length.
    pub fn check_joint_effort_len(&self, got: usize) -> Result<(), Error> {
        Self::check_len(
            "the joint-effort buffer",
            got,
            self.num_envs * self.mj.num_joints,
        )
    }

    /// The index of a group by name.
    pub fn group_index(&self, name: &str) -> Result<usize, Error> {
        self.groups
            .iter()
            .position(|g| g.cfg.name == name)
            .ok_or_else(|| Error::UnknownGroup {
                name: name.to_owned(),
                known: self
                    .groups
                    .iter()
                    .map(|g| g.cfg.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }

    /// Looks up a parameter of a group by name (or mjlab alias): the
    /// group's index, the slot and the spec.
    pub fn group_param(
        &self,
        group: &str,
        name: &str,
    ) -> Result<(usize, usize, &'static ParamSpec), Error> {
        let g = self.group_index(group)?;
        let actuator = &self.groups[g].cfg.actuator;
        let params = actuator.params();
        match params.iter().position(|p| p.answers_to(name)) {
            Some(k) => Ok((g, k, &params[k])),
            None => Err(Error::UnknownParam {
                group: group.to_owned(),
                kind: actuator.kind_name(),
                name: name.to_owned(),
                known: names_of(params.iter().map(|p| p.name)),
            }),
        }
    }

    /// A group's parameter resolved once, for [`Backend::set_param_at`](crate::Backend::set_param_at):
    /// randomizing per reset then costs no name lookup.
    pub fn param_ref(&self, group: &str, name: &str) -> Result<ParamRef, Error> {
        let (group, slot, spec) = self.group_param(group, name)?;
        Ok(ParamRef { group, slot, spec })
    }

    /// Checks that `param` names a parameter of this plan.
    fn resolve_param(&self, param: ParamRef) -> Result<(usize, usize, &'static ParamSpec), Error> {
        let ParamRef { group, slot, spec } = param;
        let ours = self
            .groups
            .get(group)
            .and_then(|g| g.cfg.actuator.params().get(slot))
            .is_some_and(|s| std::ptr::eq(s, spec));
        if ours {
            Ok((group, slot, spec))
        } else {
            Err(Error::ForeignParam {
                name: spec.name,
                group,
            })
        }
    }

    /// Looks up a state slot of a group by name: the group's index, the
    /// slot and the spec.
    pub fn group_state(
        &self,
        group: &str,
        name: &str,
    ) -> Result<(usize, usize, &'static StateSpec), Error> {
        let g = self.group_index(group)?;
        let actuator = &self.groups[g].cfg.actuator;
        let state = actuator.state();
        match state.iter().position(|s| s.name == name) {
            Some(k) => Ok((g, k, &state[k])),
            None => Err(Error::UnknownState {
                group: group.to_owned(),
                kind: actuator.kind_name(),
                name: name.to_owned(),
                known: names_of(state.iter().map(|s| s.name)),
            }),
        }
    }

    /// Checks env ids and returns how many are selected.
    pub fn check_env_ids(&self, env_ids: EnvIds<'_>) -> Result<usize, Error> {
        match env_ids {
            EnvIds::All => Ok(self.num_envs),
            EnvIds::List(ids) => {
                if let Some(&env) = ids.iter().find(|&&e| e as usize >= self.num_envs) {
                    return Err(Error::EnvOutOfRange {
                        env: env as usize,
                        num_envs: self.num_envs,
                    });
                }
                Ok(ids.len())
            }
        }
    }

    /// Checks one env index.
    pub fn check_env(&self, env: usize) -> Result<(), Error> {
        if env < self.num_envs {
            Ok(())
        } else {
            Err(Error::EnvOutOfRange {
                env,
                num_envs: self.num_envs,
            })
        }
    }

    /// The env at position `i` of a checked selection.
    #[inline]
    pub fn env_at(env_ids: EnvIds<'_>, i: usize) -> usize {
        match env_ids {
            EnvIds::All => i,
            EnvIds::List(ids) => ids[i] as usize,
        }
    }

    /// Checks a parameter write without doing it: env ids, shape, and every
    /// value against the parameter's domain. Returns the group and the slot.
    pub fn check_param_write(
        &self,
        group: &str,
        name: &str,
        env_ids: EnvIds<'_>,
        values: Values<'_>,
    ) -> Result<(usize, usize), Error> {
        let (g, slot, spec) = self.group_param(group, name)?;
        self.check_write(g, spec.name, env_ids, values, |v| spec.domain.check(v))?;
        Ok((g, slot))
    }

    /// Checks env ids, the values' shape and each value.
    fn check_write(
        &self,
        g: usize,
        field: &str,
        env_ids: EnvIds<'_>,
        values: Values<'_>,
        check: impl Fn(f32) -> Result<(), &'static str>,
    ) -> Result<(), Error> {
        let group = self.groups[g].cfg.name.as_str();
        let num_envs = self.check_env_ids(env_ids)?;
        let num_targets = self.groups[g].targets.len();
        let given = values.checked(group, field, num_envs, num_targets)?;
        if let Some((bad, reason)) = given.iter().find_map(|&v| check(v).err().map(|r| (v, r))) {
            return Err(crate::kinds::invalid(group, field, bad, reason));
        }
        Ok(())
    }

    /// Writes a parameter into a `[slot][env][ctrl]` table (every slot)
    /// after checking env ids, shape and every value against the
    /// parameter's domain; nothing is written on error. Returns the group
    /// and the slot.
    pub fn write_param(
        &self,
        param: ParamRef,
        env_ids: EnvIds<'_>,
        values: Values<'_>,
        table: &mut [f32],
    ) -> Result<(usize, usize), Error> {
        let (g, slot, spec) = self.resolve_param(param)?;
        self.check_write(g, spec.name, env_ids, values, |v| spec.domain.check(v))?;
        self.scatter(g, slot, env_ids, values, table);
        Ok((g, slot))
    }

    /// Writes a state slot of a group into a `[slot][env][ctrl]` state table
    /// after checking everything (finite values, shape, env ids); nothing is
    /// written on error. Returns the group and the slot.
    pub fn write_state(
        &self,
        group: &str,
        name: &str,
        env_ids: EnvIds<'_>,
        values: Values<'_>,
        table: &mut [f32],
    ) -> Result<(usize, usize), Error> {
        let (g, slot, spec) = self.group_state(group, name)?;
        self.check_write(g, spec.name, env_ids, values, |v| {
            crate::kinds::Domain::Finite.check(v)
        })?;
        self.scatter(g, slot, env_ids, values, table);
        Ok((g, slot))
    }

    /// Writes checked values into slot `slot` of a `[slot][env][ctrl]` table.
    fn scatter(
        &self,
        g: usize,
        slot: usize,
        env_ids: EnvIds<'_>,
        values: Values<'_>,
        table: &mut [f32],
    ) {
        let columns = &self.groups[g].ctrl_columns;
        let num_ctrl = self.num_ctrl();
        let plane = &mut table[slot * self.num_envs * num_ctrl..][..self.num_envs * num_ctrl];
        for i in 0..self.selected(env_ids) {
            let env = Self::env_at(env_ids, i);
            for (t, &c) in columns.iter().enumerate() {
                plane[env * num_ctrl + c] = values.at(i, t, columns.len());
            }
        }
    }

    /// Copies a group's parameter from a `[slot][env][ctrl]` table into
    /// `out`, `(num_envs, group targets)` row-major.
    pub fn read_param(
        &self,
        group: &str,
        name: &str,
        table: &[f32],
        out: &mut [f32],
    ) -> Result<(), Error> {
        let (g, slot, _) = self.group_param(group, name)?;
        self.gather(g, slot, "the parameter buffer", table, out)
    }

    /// Copies a group's state slot from a `[slot][env][ctrl]` state table
    /// into `out`, `(num_envs, group targets)` row-major.
    pub fn read_state(
        &self,
        group: &str,
        name: &str,
        table: &[f32],
        out: &mut [f32],
    ) -> Result<(), Error> {
        let (g, slot, _) = self.group_state(group, name)?;
        self.gather(g, slot, "the state buffer", table, out)
    }

    fn gather(
        &self,
        g: usize,
        slot: usize,
        what: &'static str,
        table: &[f32],
        out: &mut [f32],
    ) -> Result<(), Error> {
        let columns = &self.groups[g].ctrl_columns;
        Self::check_len(what, out.len(), self.num_envs * columns.len())?;
        let num_ctrl = self.num_ctrl();
        let plane = &table[slot * self.num_envs * num_ctrl..][..self.num_envs * num_ctrl];
        for (row, table_row) in out
            .chunks_exact_mut(columns.len())
            .zip(plane.chunks_exact(num_ctrl))
        {
            for (o, &c) in row.iter_mut().zip(columns) {
                *o = table_row[c];
            }
        }
        Ok(())
    }

    /// Writes every state slot's reset value for the selected envs into a
    /// `[slot][env][ctrl]` state table (env ids already checked).
    pub fn reset_state(&self, env_ids: EnvIds<'_>, table: &mut [f32]) {
        let num_ctrl = self.num_ctrl();
        let plane = self.num_envs * num_ctrl;
        for (k, resets) in self.state_resets.chunks_exact(num_ctrl.max(1)).enumerate() {
            for i in 0..self.selected(env_ids) {
                let env = Self::env_at(env_ids, i);
                table[k * plane + env * num_ctrl..][..num_ctrl].copy_from_slice(resets);
            }
        }
    }

    /// How many envs a (checked) selection holds.
    fn selected(&self, env_ids: EnvIds<'_>) -> usize {
        match env_ids {
            EnvIds::All => self.num_envs,
            EnvIds::List(ids) => ids.len(),
        }
    }

    /// `set_lags` on the buffer of `group` (every group sharing it moves),
    /// clamped into `[min_lag, max_lag]`: checks everything, then calls
    /// `write(state_index, lag)` for each selected env, where `state_index`
    /// indexes a `(num_envs, num_buffers)` state table. Nothing is written on error.
    pub fn write_lags(
        &self,
        group: &str,
        env_ids: EnvIds<'_>,
        lags: Lags<'_>,
        mut write: impl FnMut(usize, u32),
    ) -> Result<(), Error> {
        let b = self.buffer_of(group)?;
        let n = self.check_env_ids(env_ids)?;
        if let Lags::PerEnv(values) = lags {
            if values.len() != n {
                let num_targets = self.groups[self.group_index(group)?].targets.len();
                return Err(Error::ValuesShape {
                    group: group.to_owned(),
                    field: "lags".into(),
                    got: values.len(),
                    num_envs: n,
                    num_targets,
                });
            }
        }
        let params = &self.buffers[b].params;
        for i in 0..n {
            let env = Self::env_at(env_ids, i);
            let lag = match lags {
                Lags::Scalar(l) => l,
                Lags::PerEnv(v) => v[i],
            };
            write(env * self.buffers.len() + b, params.clamp_lag(lag));
        }
        Ok(())
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

fn names_of<'a>(names: impl Iterator<Item = &'a str>) -> String {
    names.collect::<Vec<_>>().join(", ")
}

/// Keeps the targets that have a native actuator and decides the law.
fn resolve_wrapped(
    robot: &Robot,
    cfg: &GroupCfg,
    field: Option<crate::kinds::CommandField>,
    ids: &[usize],
) -> Result<(Vec<usize>, CommandField), Error> {
    let names = robot.names(cfg.transmission);
    let mut kept = Vec::new();
    let mut detected: Option<(String, crate::kinds::CommandField)> = None;
    for &id in ids {
        let Some(native) = robot
            .native_actuators
            .iter()
            .find(|a| a.transmission == cfg.transmission && a.target == names[id])
        else {
            continue;
        };
        kept.push(id);
        if field.is_some() {
            continue;
        }
        let this = detect_command_field(native).ok_or_else(|| Error::UndetectedCommandField {
            group: cfg.name.clone(),
            actuator: native.name.clone(),
            gain: native.gain,
            bias: native.bias,
        })?;
        match &detected {
            Some((first, f)) if *f != this => {
                return Err(Error::MixedCommandFields {
                    group: cfg.name.clone(),
                    first: first.clone(),
                    first_field: *f,
                    second: native.name.clone(),
                    second_field: this,
                })
            }
            Some(_) => {}
            None => detected = Some((native.name.clone(), this)),
        }
    }
    if kept.is_empty() {
        return Err(Error::NoNativeActuator {
            group: cfg.name.clone(),
            targets: ids
                .iter()
                .map(|&i| names[i].as_str())
                .collect::<Vec<_>>()
                .join(", "),
        });
    }
    let field = field
        .or(detected.map(|(_, f)| f))
        .expect("a kept target was detected");
    Ok((kept, field))
}

/// Gives every delayed group its buffer, by its `DelayShare` rule.
fn assign_buffers(infos: &mut [GroupInfo]) -> Result<Vec<DelayBuffer>, Error> {
    let mut buffers: Vec<DelayBuffer> = Vec::new();
    for g in 0..infos.len() {
        let Some(delay) = infos[g].cfg.delay.clone() else {
            continue;
        };
        let kind = infos[g].cfg.actuator.kind_id();
        let transmission = infos[g].cfg.transmission;
        let (auto_key, name) = match &delay.share {
            // mjlab gives wrapped and learned actuators a buffer of their own.
            DelayShare::Auto
                if !matches!(kind, KindId::Wrapped | KindId::LearnedMlp | KindId::LstmNet) =>
            {
                (Some((kind, transmission)), None)
            }
            DelayShare::Auto | DelayShare::Own => (None, None),
            DelayShare::Named(n) => (None, Some(n.clone())),
        };
        let existing = buffers.iter().position(|b| match (&name, &auto_key) {
            (Some(n), _) => b.name.as_ref() == Some(n),
            (None, Some(key)) => b.auto_key == Some(*key) && b.cfg.same_schedule(&delay),
            (None, None) => false,
        });
        let b = match existing {
            Some(b) => {
                if !buffers[b].cfg.same_schedule(&delay) {
                    return Err(Error::DelayShareMismatch {
                        buffer: name.unwrap_or_default(),
                        first: infos[buffers[b].groups[0]].cfg.name.clone(),
                        second: infos[g].cfg.name.clone(),
                    });
                }
                buffers[b].groups.push(g);
                b
            }
            None => {
                let index = buffers.len();
                buffers.push(DelayBuffer {
                    params: DelayParams::new(&delay, index as u32),
                    cfg: delay,
                    groups: vec![g],
                    cmd_columns: Vec::new(),
                    ring_offset: 0,
                    auto_key,
                    name,
                });
                index
            }
        };
        infos[g].delay_buffer = Some(b);
    }
    Ok(buffers)
}

/// The MuJoCo configuration of a MuJoCo-law group's target `t`.
fn mj_cfg_of(robot: &Robot, info: &GroupInfo, t: usize) -> Result<MjGeneralCfg, Error> {
    let group = info.cfg.name.as_str();
    let field = info.field;
    let cfg = match &info.cfg.actuator {
        ActuatorCfg::MjGeneral(c) => *c,
        ActuatorCfg::Wrapped(_) => {
            let native = robot
                .native_actuators
                .iter()
                .find(|a| a.transmission == info.cfg.transmission && a.target == info.targets[t])
                .expect("a wrapped group keeps only targets with a native actuator");
            let general = native.general.ok_or_else(|| Error::InvalidParam {
                group: group.to_owned(),
                field: "compute_force".into(),
                value: native.name.clone(),
                reason: "this native actuator has no `general` description to compute from",
            })?;
            general.validate(group)?;
            general
        }
        kind => kind
            .mujoco_equivalent(group)?
            .expect("compute_force is refused on kinds without a MuJoCo equivalent"),
    };
    Ok(MjGeneralCfg {
        command_field: field,
        ..cfg
    })
}

/// Compiles every MuJoCo-law column, in ctrl order.
fn mj_stage(
    robot: &Robot,
    infos: &mut [GroupInfo],
    ctrl: &[CtrlColumn],
    timestep: f32,
) -> Result<MjStage, Error> {
    let mut stage = MjStage {
        num_joints: robot.joints.len(),
        ..MjStage::default()
    };
    let mut on_tendon: Vec<(String, u32)> = Vec::new();
    for (c, column) in ctrl.iter().enumerate() {
        let info = &infos[column.group];
        if info.stage != Stage::MuJoCo {
            continue;
        }
        let t = info
            .ctrl_columns
            .iter()
            .position(|&x| x == c)
            .expect("every ctrl column is in its group");
        let cfg = mj_cfg_of(robot, info, t)?;
        let k = stage.actuators.len();
        let mut actuator = cfg.compile(timestep);
        actuator.ctrl_column = c as u32;
        actuator.path_offset = stage.path.len() as u32;
        match column.transmission {
            Transmission::Joint => stage.path.push(MjPathEntry {
                column: column.cmd_column as u32,
                coef: 1.0,
            }),
            Transmission::Tendon => {
                match robot.fixed_tendons.iter().find(|f| f.name == column.target) {
                    Some(tendon) => {
                        for (joint, coef) in &tendon.joints {
                            let j = robot.joint_index(joint).expect("validated robot");
                            stage.path.push(MjPathEntry {
                                column: j as u32,
                                coef: *coef,
                            });
                        }
                        on_tendon.push((tendon.name.clone(), k as u32));
                    }
                    None => stage.path.push(MjPathEntry {
                        column: column.cmd_column as u32,
                        coef: 1.0,
                    }),
                }
            }
            Transmission::Site => {}
        }
        actuator.path_len = stage.path.len() as u32 - actuator.path_offset;
        stage.actuators.push(actuator);
        infos[column.group].mj_indices.push(k);
    }
    // A group's ctrl columns ascend, so its mj indices follow target order.
    for tendon in &robot.fixed_tendons {
        let Some([lo, hi]) = tendon.actuator_force_range else {
            continue;
        };
        let members: Vec<u32> = on_tendon
            .iter()
            .filter(|(name, _)| *name == tendon.name)
            .map(|&(_, k)| k)
            .collect();
        if !members.is_empty() {
            stage.tendon_limits.push(MjTendonLimit { lo, hi, members });
        }
    }
    if !stage.actuators.is_empty() {
        for (joint, range) in &robot.joint_actuator_force_ranges {
            let j = robot.joint_index(joint).expect("validated robot");
            stage.joint_limits.push((j as u32, *range));
        }
    }
    Ok(stage)
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
