//! The MuJoCo stage of a plan: MuJoCo-law columns compiled into
//! [`MjActuator`]s with their transmission paths and force ranges.

use super::mj_lanes::{in_lanes, segments, tile_passes, MjLanes, MjSegment};
use super::*;
use std::borrow::Cow;
use std::ops::Range;

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

/// [`MjMember::actuator`] of a column whose own law computes its force.
pub const MJ_FROM_LAW: u32 = u32::MAX;

/// One ctrl column the MuJoCo stage couples (WGSL: four words of the words
/// table): an [`MjStage::actuators`] entry, whose force the stage computes,
/// or a column of a kind that declares [`RAW_FORCE`](crate::RAW_FORCE),
/// whose law computed it (its ctrl holds the effort `gear·f` along its
/// target, and the law reports its raw force through
/// [`LawIo::saturate`](crate::LawIo::saturate)).
#[derive(Debug, Clone, Copy, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct MjMember {
    /// The column.
    pub ctrl_column: u32,
    /// Its transmission path's first entry in [`MjStage::path`].
    pub path_offset: u32,
    /// Its path's length.
    pub path_len: u32,
    /// Its index in [`MjStage::actuators`], or [`MJ_FROM_LAW`].
    pub actuator: u32,
}

/// What the MuJoCo stage needs from the driver: the activations of its
/// actuators (each column's [`MJ_ACT`](crate::MJ_ACT) slot) and, for the
/// columns whose own law computes their force ([`MJ_FROM_LAW`] members),
/// their raw forces and a second evaluation.
pub trait MjDriver {
    /// The column's activation before this step.
    fn act(&self, column: usize) -> f32;
    /// Stores the column's `act_dot` (its [`ACT_DOT`](crate::ACT_DOT)
    /// output) and its next activation, committed with the rest of the
    /// env's state only when the env's outputs are finite.
    fn set_act(&mut self, column: usize, act_dot: f32, act_next: f32);
    /// The activations of `columns` before this step, and where their next
    /// activations and `act_dot`s go (as [`MjDriver::set_act`] stores
    /// them).
    fn act_rows(&mut self, columns: Range<usize>) -> (&[f32], &mut [f32], &mut [f32]);
    /// The raw force the column's law recorded this step.
    fn raw_force(&self, column: usize) -> f32;
    /// Evaluates the column's law again with its raw force scaled by
    /// `scale` (its state and outputs are rewritten with the same values,
    /// its force with the scaled one); returns the column's new value.
    fn rescale(&mut self, column: usize, scale: f32) -> f32;
}

/// A tendon whose `actuatorfrcrange` scales the forces of its actuators.
#[derive(Debug, Clone, PartialEq)]
pub struct MjTendonLimit {
    /// Lower end of the summed force.
    pub lo: f32,
    /// Upper end.
    pub hi: f32,
    /// Indices (in [`MjStage::members`]) of the columns on the tendon.
    pub members: Vec<u32>,
}

/// The plan's force coupling, the one per-env hook that couples columns:
/// every column in [`Stage::MuJoCo`], compiled, and every column of a kind
/// that declares [`RAW_FORCE`](crate::RAW_FORCE) (MuJoCo 4's `pid` and
/// `dcmotor`).
///
/// Per env, after the laws ran: clamp the controls of the
/// [`Stage::MuJoCo`] actuators, apply MuJoCo's bad-control guard to them,
/// [`mj_force`](crate::mj_force) for each; scale by tendon ranges (the sum
/// of the raw forces of every member on the tendon; a law member is
/// evaluated again with the scale); clamp by force ranges; sum
/// `moment·force` into joint efforts in ctrl order and clamp those by joint
/// ranges.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MjStage {
    /// One per MuJoCo-law ctrl column, in ctrl-column order.
    pub actuators: Vec<MjActuator>,
    /// Every coupled column, in ctrl-column order.
    pub members: Vec<MjMember>,
    /// Every member's transmission path, at its `path_offset`.
    pub path: Vec<MjPathEntry>,
    /// The output plane of [`RAW_FORCE`](crate::RAW_FORCE) in the plan
    /// (0 when no kind declares it).
    pub raw_plane: u32,
    /// The output plane [`ACT_DOT`](crate::ACT_DOT) in the plan (0 without
    /// actuators).
    pub act_dot_plane: u32,
    /// Tendons with an `actuatorfrcrange` and at least one actuator.
    pub tendon_limits: Vec<MjTendonLimit>,
    /// `(joint, [lo, hi])` of joints with an `actuatorfrcrange`.
    pub joint_limits: Vec<(u32, [f32; 2])>,
    /// Joints of the robot: the width of the joint-effort output.
    pub num_joints: usize,
    /// True when some actuator reads its gain and bias from the parameter
    /// table ([`MJ_TABLE_PARAMS`](crate::MJ_TABLE_PARAMS)).
    pub table_params: bool,
    /// True when no tendon range couples the members and no other
    /// member's path reaches a law member's joints: each actuator's force
    /// then depends on its own column (and its path's joints) alone, each
    /// law member's joint effort on its own value, and
    /// [`MjStage::env_forces`] takes a single pass over the actuators.
    pub plain: bool,
    /// A [`MjStage::plain`] stage's actuators, in stretches computed a
    /// vector lane each or one at a time (empty when not plain).
    segments: Vec<MjSegment>,
    /// A [`MjStage::plain`] stage's law members (MuJoCo 4's `dcmotor` and
    /// `pid`), whose values reach their joints after the actuators'.
    law_members: Vec<MjMember>,
    /// The passes of [`MjStage::tile_forces`] over [`MJ_TILE_ENVS`] envs'
    /// rows, one per law ([`tile_passes`]; empty when it does not tile).
    tiled: Vec<MjLanes>,
    /// The actuators [`MjStage::tile_forces`] computes one at a time after
    /// its passes (those of a law the lanes do not compute), by index in
    /// [`MjStage::actuators`]; no other member's path reaches their joints
    /// (nor those of the lanes' actuators on tendons of several joints or
    /// on sites).
    tile_each: Vec<usize>,
    /// The width of the ctrl rows [`MjStage::tile_forces`] reads (the
    /// joint rows are [`MjStage::num_joints`] wide, as wide or wider).
    num_ctrl: usize,
    /// The width of the command's rows: the robot's targets.
    num_targets: usize,
    /// Where the tiled stage's actuators lie among the ctrl columns when
    /// those in lanes are not all of them (the other columns' laws are not
    /// MuJoCo's, or are law members, or the actuators are outside lanes):
    /// MuJoCo's bad-control guard reads and zeroes these alone (the
    /// actuators outside lanes among them), and each pass clamps its own.
    tiled_actuators: Option<Vec<bool>>,
}

/// Envs whose rows [`MjStage::tile_forces`] computes in one loop.
const MJ_TILE_ENVS: usize = 16;

/// The rows the MuJoCo stage's vector lanes read and write: for
/// [`MjStage::tile_forces`], consecutive envs' rows back to back,
/// `num_ctrl` values per env (the joint efforts, and the positions and
/// velocities unless in ctrl order, `num_joints`).
pub struct MjTileRows<'r> {
    /// The forwarded controls on entry, the actuator forces on exit.
    pub ctrl: &'r mut [f32],
    /// The joint efforts.
    pub effort: &'r mut [f32],
    /// The positions.
    pub pos: &'r [f32],
    /// The velocities.
    pub vel: &'r [f32],
    /// True when `pos` and `vel` hold each ctrl column's own joint's values
    /// in that column (the command gathered into ctrl order) rather than
    /// rows in joint order: only where [`MjStage::tiles_in_ctrl_order`].
    pub ctrl_order: bool,
    /// The activations before the step.
    pub act: &'r [f32],
    /// The next activations.
    pub act_next: &'r mut [f32],
    /// The `act_dot`s.
    pub act_dot: &'r mut [f32],
}

impl MjStage {
    /// True when the plan couples no column.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// The transmission path of one of [`MjStage::actuators`].
    pub fn path_of(&self, a: &MjActuator) -> &[MjPathEntry] {
        self.path_at(a.path_offset, a.path_len)
    }

    fn path_at(&self, offset: u32, len: u32) -> &[MjPathEntry] {
        &self.path[offset as usize..][..len as usize]
    }

    /// The env's rows of the [`MjGeneralCfg`](crate::MjGeneralCfg)
    /// parameter slots a step reads, when an actuator reads them (slots of
    /// other kinds hold other parameters): every slot when `WIDE`, else the
    /// gain and bias terms only.
    fn table<'p, const WIDE: bool>(
        &self,
        param: impl Fn(usize) -> &'p [f32],
    ) -> Option<MjTable<'p>> {
        use crate::kinds::{MJ_SLOT_BIAS, MJ_SLOT_GAIN};
        self.table_params.then(|| MjTable {
            gain: std::array::from_fn(|q| param(MJ_SLOT_GAIN + q)),
            bias: std::array::from_fn(|q| param(MJ_SLOT_BIAS + q)),
            all: WIDE.then(|| std::array::from_fn(&param)),
        })
    }

    /// An actuator's length `gear·Σ coef·pos` and velocity along its path.
    #[inline]
    fn length_velocity(&self, a: &MjActuator, pos: &[f32], vel: &[f32]) -> (f32, f32) {
        let (mut length, mut velocity) = (0.0f32, 0.0f32);
        for e in self.path_of(a) {
            length += e.coef * pos[e.column as usize];
            velocity += e.coef * vel[e.column as usize];
        }
        (a.gear * length, a.gear * velocity)
    }

    /// Drops the lanes and tiles: every actuator computed in the general
    /// loop ([`Plan::without_mj_lanes`]).
    pub(super) fn one_at_a_time(&mut self) {
        self.plain = false;
        self.segments.clear();
        self.law_members.clear();
        self.tiled.clear();
        self.tile_each.clear();
        self.tiled_actuators = None;
    }

    /// True when a step must run the stage: it computes forces, or a
    /// range couples its columns. Otherwise the joint efforts are a sum of
    /// ctrl values, which [`MjStage::law_efforts`] gives when asked.
    pub fn runs_per_step(&self) -> bool {
        !(self.actuators.is_empty()
            && self.tendon_limits.is_empty()
            && self.joint_limits.is_empty())
    }

    /// One env's joint efforts from its ctrl row when every member is a law
    /// member and no range couples them (`!`[`MjStage::runs_per_step`]):
    /// what [`MjStage::env_forces`] would have written.
    pub fn law_efforts(&self, ctrl: &[f32], effort: &mut [f32]) {
        effort.fill(0.0);
        for m in &self.members {
            self.add_effort(m, 1.0, ctrl[m.ctrl_column as usize], effort);
        }
    }

    /// Adds a member's `factor·coef·value` to each joint on its path.
    #[inline]
    fn add_effort(&self, m: &MjMember, factor: f32, value: f32, effort: &mut [f32]) {
        for e in self.member_path(m) {
            if (e.column as usize) < self.num_joints {
                effort[e.column as usize] += factor * e.coef * value;
            }
        }
    }

    /// The transmission path of one of [`MjStage::members`].
    pub fn member_path(&self, m: &MjMember) -> &[MjPathEntry] {
        self.path_at(m.path_offset, m.path_len)
    }

    /// Width of the joint-effort rows: the robot's joints, or 0 without a
    /// coupled column.
    pub fn effort_width(&self) -> usize {
        if self.is_empty() {
            0
        } else {
            self.num_joints
        }
    }

    /// One env's MuJoCo stage (WGSL `mj_env_stage`): `ctrl` holds each
    /// actuator's forwarded control on entry and its `actuator_force` on
    /// exit; `pos`/`vel` are the env's command rows; `effort` its
    /// joint-effort row; `param(slot)` is the env's row of
    /// parameter slot `slot`, indexed by ctrl column (an [`MjGeneralCfg`](crate::MjGeneralCfg)
    /// actuator's parameters), `wide` true once any of them but
    /// `gainprm[0..3]` and `biasprm[0..3]` may differ from the compiled
    /// values (a cheaper step until then); `env` reads the activations,
    /// stores the `act_dot`s and next activations, and reads and
    /// re-evaluates the law members. Returns false when some next
    /// activation is not finite.
    #[allow(clippy::too_many_arguments, reason = "one env's rows of every table")]
    pub fn env_forces<'p>(
        &self,
        pos: &[f32],
        vel: &[f32],
        ctrl: &mut [f32],
        effort: &mut [f32],
        param: impl Fn(usize) -> &'p [f32],
        wide: bool,
        env: &mut impl MjDriver,
    ) -> bool {
        match (self.plain, wide) {
            (true, true) => self.plain_forces::<true>(pos, vel, ctrl, effort, param, env),
            (true, false) => self.plain_forces::<false>(pos, vel, ctrl, effort, param, env),
            (false, true) => self.forces::<true>(pos, vel, ctrl, effort, param, env),
            (false, false) => self.forces::<false>(pos, vel, ctrl, effort, param, env),
        }
    }

    /// True when [`MjStage::tile_forces`] computes the stage: a
    /// [`MjStage::plain`] stage with actuators of laws the vector lanes
    /// compute, at most four, each on one joint in any order, and at least
    /// as many joints as ctrl columns; its other actuators (on tendons of
    /// several joints or on sites, which are lanes of their paths where
    /// their law has a pass or room for one, and those of other laws)
    /// reach joints no other member's path reaches; where the robot has
    /// tendons or sites, each actuator in lanes is on its ctrl column's
    /// target. The other columns' laws are not MuJoCo's, or are law
    /// members.
    pub fn tiles(&self) -> bool {
        !self.tiled.is_empty()
    }

    /// True when [`MjStage::tiles`] and each actuator in vector lanes of
    /// ctrl column `c` is on joint `index[c]`: the command's positions and
    /// velocities gathered into ctrl order by `index` then hold each one's
    /// own in its column ([`MjTileRows::ctrl_order`]), and the tiles need
    /// not gather them. Always so where the robot has tendons or sites
    /// (`index` being the ctrl columns' targets).
    pub fn tiles_in_ctrl_order(&self, index: &[u32]) -> bool {
        self.tiles()
            && (self.actuators.iter()).all(|a| {
                !in_lanes(self, a)
                    || index.get(a.ctrl_column as usize)
                        == Some(&self.path[a.path_offset as usize].column)
            })
    }

    /// [`MjStage::env_forces`] for consecutive envs at once when
    /// [`MjStage::tiles`]: `rows` are their rows, `cmd` their command rows
    /// of positions and velocities (every target's; `rows.pos` and
    /// `rows.vel` are these unless in ctrl order, which they must be where
    /// the robot has tendons or sites), `param(slot)` their rows of
    /// parameter slot `slot`. Writes what `env_forces` writes for each
    /// env, in the same bits; where `env_forces` would return false, some
    /// value of the env's row of `rows.act_next` is not finite.
    ///
    /// # Panics
    /// When the stage does not tile, or the rows are not as above.
    pub fn tile_forces<'p>(
        &self,
        rows: MjTileRows<'_>,
        cmd: [&[f32]; 2],
        param: impl Fn(usize) -> &'p [f32],
        wide: bool,
    ) {
        if wide {
            self.tile_forces_as::<true>(rows, cmd, param);
        } else {
            self.tile_forces_as::<false>(rows, cmd, param);
        }
    }

    /// [`MjStage::tile_forces`] for `wide == WIDE`.
    fn tile_forces_as<'p, const WIDE: bool>(
        &self,
        rows: MjTileRows<'_>,
        cmd: [&[f32]; 2],
        param: impl Fn(usize) -> &'p [f32],
    ) {
        use crate::kinds::{mj_ctrl, MJ_MAX_CTRL};
        let passes = &self.tiled[..];
        assert!(!passes.is_empty(), "a stage that tiles");
        let table = self.table::<WIDE>(param);
        let (nc, nj, nt) = (self.num_ctrl, self.num_joints, self.num_targets);
        let MjTileRows {
            ctrl,
            effort,
            pos,
            vel,
            ctrl_order,
            act,
            act_next,
            act_dot,
        } = rows;
        let len = ctrl.len();
        let envs = len / nc;
        assert!(cmd.iter().all(|rows| rows.len() == envs * nt));
        assert!(
            ctrl_order || nt == nj,
            "rows of joints alone, or in ctrl order"
        );
        // An actuator outside the lanes in the env of ctrl row `at`: its
        // table columns and activation slots are the env's.
        let each = |k: usize, at: usize| MjActuator {
            ctrl_column: (at + self.actuators[k].ctrl_column as usize) as u32,
            ..self.actuators[k]
        };
        let own = self.tiled_actuators.as_deref();
        for start in (0..len).step_by(MJ_TILE_ENVS * nc) {
            let r = start..len.min(start + MJ_TILE_ENVS * nc);
            // The same envs' joint rows, and rows of positions and
            // velocities (in ctrl order, or of every joint).
            let rj = r.start / nc * nj..r.end / nc * nj;
            let rp = if ctrl_order { r.clone() } else { rj.clone() };
            let mut wild = MjLanes::clamp_tile(
                passes,
                own.is_none(),
                &mut ctrl[r.clone()],
                table.as_ref(),
                r.start,
            );
            // (Without the test, the empty loop took 10 instructions an env.)
            if !self.tile_each.is_empty() {
                for at in r.clone().step_by(nc) {
                    for &k in &self.tile_each {
                        let a = each(k, at);
                        let a = env_actuator::<WIDE>(&a, &table, false);
                        let c = a.ctrl_column as usize;
                        ctrl[c] = mj_ctrl(&a, ctrl[c]);
                        wild |= u32::from(ctrl[c].abs() > MJ_MAX_CTRL);
                    }
                }
            }
            if wild != 0 {
                // MuJoCo's guard: such an env's every control enters its
                // law as 0 (its actuators' controls: the other columns'
                // values are not MuJoCo's).
                for row in ctrl[r.clone()].chunks_exact_mut(nc) {
                    match own {
                        None if row.iter().any(|u| u.abs() > MJ_MAX_CTRL) => row.fill(0.0),
                        Some(own)
                            if (row.iter().zip(own)).any(|(u, &a)| a && u.abs() > MJ_MAX_CTRL) =>
                        {
                            for (u, _) in row.iter_mut().zip(own).filter(|(_, &a)| a) {
                                *u = 0.0;
                            }
                        }
                        _ => {}
                    }
                }
            }
            effort[rj.clone()].fill(0.0);
            let rows = MjTileRows {
                ctrl: &mut ctrl[r.clone()],
                effort: &mut effort[rj],
                pos: &pos[rp.clone()],
                vel: &vel[rp],
                ctrl_order,
                act: &act[r.clone()],
                act_next: &mut act_next[r.clone()],
                act_dot: &mut act_dot[r.clone()],
            };
            let re = r.start / nc * nt..r.end / nc * nt;
            let targets = [&cmd[0][re.clone()], &cmd[1][re]];
            MjLanes::passes(passes, false, rows, table.as_ref(), r.start, targets);
            if self.tile_each.is_empty() {
                continue;
            }
            for at in r.step_by(nc) {
                let e = at / nc;
                let (pos, vel) = (&cmd[0][e * nt..][..nt], &cmd[1][e * nt..][..nt]);
                let effort = &mut effort[e * nj..][..nj];
                for &k in &self.tile_each {
                    let a = each(k, at);
                    let a = env_actuator::<WIDE>(&a, &table, false);
                    let c = a.ctrl_column as usize;
                    // (A wild env's controls are 0 already.)
                    let (dot, next) =
                        self.plain_force(&a, false, pos, vel, ctrl, effort, &table, act[c]);
                    (act_dot[c], act_next[c]) = (dot, next);
                }
            }
        }
        if !self.law_members.is_empty() {
            for (ctrl, effort) in ctrl.chunks_exact(nc).zip(effort.chunks_exact_mut(nj)) {
                self.law_member_efforts(ctrl, effort);
            }
        }
        if !self.joint_limits.is_empty() {
            for row in effort.chunks_exact_mut(nj) {
                for &(j, [lo, hi]) in &self.joint_limits {
                    row[j as usize] = crate::kinds::clip(row[j as usize], lo, hi);
                }
            }
        }
    }

    /// Clamps the control of each of `actuators` by its range, then
    /// MuJoCo's guard: true when one control is beyond 1e10, which zeroes
    /// every control of the env.
    #[inline(always)]
    fn clamp_controls<const WIDE: bool>(
        actuators: &[MjActuator],
        table: &Option<MjTable<'_>>,
        ctrl: &mut [f32],
    ) -> bool {
        use crate::kinds::{mj_ctrl, MJ_MAX_CTRL};
        let mut wild = false;
        for a in actuators {
            let c = a.ctrl_column as usize;
            let u = mj_ctrl(&env_actuator::<WIDE>(a, table, false), ctrl[c]);
            ctrl[c] = u;
            wild |= u.abs() > MJ_MAX_CTRL;
        }
        wild
    }

    /// [`MjStage::forces`] of a [`MjStage::plain`] stage: the same
    /// operations in the same order per actuator (so the same bits), each
    /// actuator's force, clamp and joint effort in one pass, a vector lane
    /// each where [`MjStage::segments`] has lanes that run when
    /// `wide == WIDE`.
    #[inline(always)]
    fn plain_forces<'p, const WIDE: bool>(
        &self,
        pos: &[f32],
        vel: &[f32],
        ctrl: &mut [f32],
        effort: &mut [f32],
        param: impl Fn(usize) -> &'p [f32],
        env: &mut impl MjDriver,
    ) -> bool {
        let table = self.table::<WIDE>(param);
        let wild = (self.segments.iter()).fold(false, |wild, segment| {
            wild | match segment.lanes() {
                Ok(lanes) => {
                    let at = lanes.columns().start;
                    lanes.clamp_controls(&mut ctrl[lanes.columns()], table.as_ref(), at, false) != 0
                }
                Err(k) => Self::clamp_controls::<WIDE>(&self.actuators[k], &table, ctrl),
            }
        });
        effort.fill(0.0);
        let mut next_finite = true;
        for segment in &self.segments {
            match segment.lanes() {
                Ok(lanes) => {
                    let (act, act_next, act_dot) = env.act_rows(lanes.columns());
                    let rows = MjTileRows {
                        ctrl: &mut ctrl[lanes.columns()],
                        effort: &mut effort[lanes.joint_rows()],
                        pos: &pos[lanes.joint_rows()],
                        vel: &vel[lanes.joint_rows()],
                        ctrl_order: false,
                        act,
                        act_next,
                        act_dot,
                    };
                    let at = lanes.columns().start;
                    next_finite &= lanes.forces(wild, rows, table.as_ref(), at) == 0;
                }
                Err(k) => {
                    for a in &self.actuators[k] {
                        let a = env_actuator::<WIDE>(a, &table, false);
                        let c = a.ctrl_column as usize;
                        let (act_dot, act_next) =
                            self.plain_force(&a, wild, pos, vel, ctrl, effort, &table, env.act(c));
                        env.set_act(c, act_dot, act_next);
                        next_finite &= act_next.is_finite();
                    }
                }
            }
        }
        self.law_member_efforts(ctrl, effort);
        for &(j, [lo, hi]) in &self.joint_limits {
            effort[j as usize] = crate::kinds::clip(effort[j as usize], lo, hi);
        }
        next_finite
    }

    /// A [`MjStage::plain`] stage's law members' `moment·value` added to
    /// one env's joint efforts `effort` from its ctrl row `ctrl`, as
    /// [`MjStage::forces`] adds them: each drives a joint no other member
    /// drives, so the order of the sums is theirs.
    #[inline(always)]
    fn law_member_efforts(&self, ctrl: &[f32], effort: &mut [f32]) {
        for m in &self.law_members {
            // A law member's ctrl is its effort already.
            self.add_effort(m, 1.0, ctrl[m.ctrl_column as usize], effort);
        }
    }

    /// One actuator of [`MjStage::plain_forces`] (`a` with the env's
    /// parameters when wide; `ctrl[c]` its clamped control on entry, its
    /// force on exit; `act` its activation), its `moment·force` added to
    /// `effort`. Returns its `act_dot` and next activation.
    #[inline(always)]
    #[allow(clippy::too_many_arguments, reason = "one env's rows of every table")]
    fn plain_force(
        &self,
        a: &MjActuator,
        wild: bool,
        pos: &[f32],
        vel: &[f32],
        ctrl: &mut [f32],
        effort: &mut [f32],
        table: &Option<MjTable<'_>>,
        act: f32,
    ) -> (f32, f32) {
        use crate::kinds::{mj_force_after, mj_force_limit, mj_force_with};
        let c = a.ctrl_column as usize;
        let u = if wild { 0.0 } else { ctrl[c] };
        let (length, velocity) = self.length_velocity(a, pos, vel);
        let (gain3, bias3) = gain_bias(a, table);
        let out = mj_force_with(a, gain3, bias3, u, act, length, velocity);
        let mut force = mj_force_limit(a, out.force);
        if a.bias_type == crate::BiasType::DcMotor as u32 {
            let mut own = *a;
            own.biasprm[..3].copy_from_slice(&bias3);
            force = mj_force_after(&own, force, length);
        }
        ctrl[c] = force;
        for e in self.path_of(a) {
            if (e.column as usize) < self.num_joints {
                effort[e.column as usize] += a.gear * e.coef * force;
            }
        }
        (out.act_dot, out.act_next)
    }

    /// [`MjStage::env_forces`] for `wide == WIDE`.
    #[inline(always)]
    #[allow(clippy::too_many_arguments, reason = "one env's rows of every table")]
    fn forces<'p, const WIDE: bool>(
        &self,
        pos: &[f32],
        vel: &[f32],
        ctrl: &mut [f32],
        effort: &mut [f32],
        param: impl Fn(usize) -> &'p [f32],
        laws: &mut impl MjDriver,
    ) -> bool {
        use crate::kinds::{mj_force_after, mj_force_limit, mj_force_with, mj_tendon_scale};
        let table = self.table::<WIDE>(param);
        let wild = Self::clamp_controls::<WIDE>(&self.actuators, &table, ctrl);
        let mut next_finite = true;
        for a in &self.actuators {
            // The gain and bias terms from the table without a copy of the
            // actuator, unless every parameter may differ.
            let a = env_actuator::<WIDE>(a, &table, false);
            let c = a.ctrl_column as usize;
            let u = if wild { 0.0 } else { ctrl[c] };
            let (length, velocity) = self.length_velocity(&a, pos, vel);
            let (gain3, bias3) = gain_bias(&a, &table);
            let out = mj_force_with(&a, gain3, bias3, u, laws.act(c), length, velocity);
            ctrl[c] = out.force;
            laws.set_act(c, out.act_dot, out.act_next);
            next_finite &= out.act_next.is_finite();
        }
        for limit in &self.tendon_limits {
            let force = |m: &MjMember| match m.actuator {
                MJ_FROM_LAW => laws.raw_force(m.ctrl_column as usize),
                _ => ctrl[m.ctrl_column as usize],
            };
            let total: f32 = (limit.members.iter())
                .map(|&i| force(&self.members[i as usize]))
                .sum();
            let scale = mj_tendon_scale(total, limit.lo, limit.hi);
            for &i in &limit.members {
                let m = &self.members[i as usize];
                let c = m.ctrl_column as usize;
                match m.actuator {
                    MJ_FROM_LAW if scale != 1.0 => ctrl[c] = laws.rescale(c, scale),
                    MJ_FROM_LAW => {}
                    _ => ctrl[c] *= scale,
                }
            }
        }
        // In ctrl order: each actuator's force clamped (and its cogging
        // added), then every member's `moment·force` summed.
        effort.fill(0.0);
        for m in &self.members {
            let c = m.ctrl_column as usize;
            let factor = match m.actuator {
                // A law member's ctrl is its effort already.
                MJ_FROM_LAW => 1.0,
                k => {
                    let a = &self.actuators[k as usize];
                    let dc_bias = a.bias_type == crate::BiasType::DcMotor as u32;
                    let a = env_actuator::<WIDE>(a, &table, dc_bias);
                    let force = mj_force_limit(&a, ctrl[c]);
                    ctrl[c] = if dc_bias {
                        mj_force_after(&a, force, self.length_velocity(&a, pos, vel).0)
                    } else {
                        force
                    };
                    a.gear
                }
            };
            self.add_effort(m, factor, ctrl[c], effort);
        }
        for &(j, [lo, hi]) in &self.joint_limits {
            effort[j as usize] = crate::kinds::clip(effort[j as usize], lo, hi);
        }
        next_finite
    }
}

/// The MuJoCo configuration of a MuJoCo-law group's target `t`.
pub(super) fn mj_cfg_of(robot: &Robot, info: &GroupInfo, t: usize) -> Result<MjGeneralCfg, Error> {
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

/// True when a kind joins the force coupling through its own law.
pub(super) fn couples_by_law(kind: KindId) -> bool {
    (kind.spec().outputs.iter()).any(|p| p.name == crate::kinds::RAW_FORCE.name)
}

/// One env's rows of the [`MjGeneralCfg`](crate::MjGeneralCfg) parameter
/// slots: the gain and bias terms, and every slot when the step is wide.
pub(super) struct MjTable<'p> {
    gain: [&'p [f32]; 3],
    bias: [&'p [f32]; 3],
    all: Option<[&'p [f32]; crate::kinds::MJ_GENERAL_SLOTS]>,
}

impl<'p> MjTable<'p> {
    /// The row of parameter slot `slot`, where the step reads it.
    #[inline(always)]
    pub(super) fn row(&self, slot: usize) -> Option<&'p [f32]> {
        use crate::kinds::{MJ_SLOT_BIAS, MJ_SLOT_GAIN};
        match (&self.all, slot) {
            (Some(all), _) => Some(all[slot]),
            (None, k) if (MJ_SLOT_GAIN..MJ_SLOT_GAIN + 3).contains(&k) => Some(self.gain[k]),
            (None, k) if (MJ_SLOT_BIAS..MJ_SLOT_BIAS + 3).contains(&k) => {
                Some(self.bias[k - MJ_SLOT_BIAS])
            }
            _ => None,
        }
    }
}

/// Actuator `a` with the env's parameters where it reads them from the
/// table: all of them when `WIDE`, else its gain and bias terms (`prm`: the
/// caller reads them) or none (the compiled actuator itself).
#[inline(always)]
fn env_actuator<'a, const WIDE: bool>(
    a: &'a MjActuator,
    table: &Option<MjTable<'_>>,
    prm: bool,
) -> Cow<'a, MjActuator> {
    use crate::kinds::MJ_TABLE_PARAMS;
    if !WIDE && !prm {
        return Cow::Borrowed(a);
    }
    let c = a.ctrl_column as usize;
    match table {
        Some(t) if a.flags & MJ_TABLE_PARAMS != 0 => match &t.all {
            Some(all) => Cow::Owned(a.with_params(|slot| all[slot][c])),
            None => {
                let mut own = *a;
                for k in 0..3 {
                    own.gainprm[k] = t.gain[k][c];
                    own.biasprm[k] = t.bias[k][c];
                }
                Cow::Owned(own)
            }
        },
        _ => Cow::Borrowed(a),
    }
}

/// Compiles every MuJoCo-law column and collects every coupled column, in
/// ctrl order.
/// An actuator's `gainprm[0..3]` and `biasprm[0..3]` for this env: from
/// the table where it reads them there, else its compiled ones.
#[inline(always)]
fn gain_bias(a: &MjActuator, table: &Option<MjTable<'_>>) -> ([f32; 3], [f32; 3]) {
    let c = a.ctrl_column as usize;
    match table {
        Some(t) if a.flags & crate::kinds::MJ_TABLE_PARAMS != 0 => (
            std::array::from_fn(|q| t.gain[q][c]),
            std::array::from_fn(|q| t.bias[q][c]),
        ),
        _ => (
            [a.gainprm[0], a.gainprm[1], a.gainprm[2]],
            [a.biasprm[0], a.biasprm[1], a.biasprm[2]],
        ),
    }
}

pub(super) fn mj_stage(
    robot: &Robot,
    infos: &[GroupInfo],
    ctrl: &[CtrlColumn],
    timestep: f32,
) -> Result<MjStage, Error> {
    let mut stage = MjStage {
        num_joints: robot.joints.len(),
        num_ctrl: ctrl.len(),
        num_targets: robot.num_targets(),
        ..MjStage::default()
    };
    let mut on_tendon: Vec<(String, u32)> = Vec::new();
    for (c, column) in ctrl.iter().enumerate() {
        let info = &infos[column.group];
        let mujoco = info.stage == Stage::MuJoCo;
        if !mujoco && !couples_by_law(info.kind()) {
            continue;
        }
        let path_offset = stage.path.len() as u32;
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
                        on_tendon.push((tendon.name.clone(), stage.members.len() as u32));
                    }
                    None => stage.path.push(MjPathEntry {
                        column: column.cmd_column as u32,
                        coef: 1.0,
                    }),
                }
            }
            Transmission::Site => {}
        }
        let path_len = stage.path.len() as u32 - path_offset;
        let mut member = MjMember {
            ctrl_column: c as u32,
            path_offset,
            path_len,
            actuator: MJ_FROM_LAW,
        };
        if mujoco {
            // Its one state slot is the activation (`GroupInfo::state`).
            assert!(
                info.cfg.actuator.state().is_empty(),
                "only kinds without state forward their command to the MuJoCo stage"
            );
            let t = info
                .ctrl_columns
                .iter()
                .position(|&x| x == c)
                .expect("every ctrl column is in its group");
            let cfg = mj_cfg_of(robot, info, t)?;
            let k = stage.actuators.len();
            let mut actuator = cfg.compile(timestep);
            actuator.ctrl_column = c as u32;
            if info.kind() == KindId::MjGeneral {
                actuator.flags |= crate::kinds::MJ_TABLE_PARAMS;
                stage.table_params = true;
            }
            (actuator.path_offset, actuator.path_len) = (path_offset, path_len);
            stage.actuators.push(actuator);
            member.actuator = k as u32;
        }
        stage.members.push(member);
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
    if !stage.members.is_empty() {
        for (joint, range) in &robot.joint_actuator_force_ranges {
            let j = robot.joint_index(joint).expect("validated robot");
            stage.joint_limits.push((j as u32, *range));
        }
    }
    // How many members' paths reach each joint.
    let mut reach = vec![0u32; stage.num_joints];
    for m in &stage.members {
        for e in stage.member_path(m) {
            if let Some(r) = reach.get_mut(e.column as usize) {
                *r += 1;
            }
        }
    }
    // True when no other member's path reaches the joints of `path`.
    let apart = |path: &[MjPathEntry]| {
        (path.iter()).all(|e| reach.get(e.column as usize).is_none_or(|&r| r == 1))
    };
    stage.plain = stage.tendon_limits.is_empty()
        && (stage.members.iter()).all(|m| m.actuator != MJ_FROM_LAW || apart(stage.member_path(m)));
    if stage.plain {
        stage.segments = segments(&stage);
        stage.law_members = (stage.members.iter())
            .filter(|m| m.actuator == MJ_FROM_LAW)
            .copied()
            .collect();
        // The tile computes the actuators outside lanes one at a time after
        // its passes, or as lanes of their paths (whose forces reach their
        // joints after the passes): so no other member may reach their
        // joints. Its lanes read the command's rows of positions and
        // velocities where they write their rows of joint efforts, unless
        // in ctrl order: so where the robot has tendons or sites, they must
        // be on their columns' targets (which the CPU step then gathers
        // into ctrl order).
        let (lanes, each): (Vec<usize>, Vec<usize>) =
            (0..stage.actuators.len()).partition(|&k| in_lanes(&stage, &stage.actuators[k]));
        let on_target = |k: &usize| {
            let a = &stage.actuators[*k];
            ctrl[a.ctrl_column as usize].cmd_column == stage.path_of(a)[0].column as usize
        };
        if (each.iter()).all(|&k| apart(stage.path_of(&stage.actuators[k])))
            && (robot.num_targets() == stage.num_joints || lanes.iter().all(on_target))
        {
            stage.tiled = tile_passes(&stage, ctrl.len(), MJ_TILE_ENVS);
        }
        if !stage.tiled.is_empty() {
            // (Less those the lanes compute from their paths.)
            let paths: Vec<usize> = stage.tiled.iter().flat_map(MjLanes::path_lanes).collect();
            stage.tile_each = (each.into_iter())
                .filter(|&k| !paths.contains(&(stage.actuators[k].ctrl_column as usize)))
                .collect();
        }
        if !stage.tiled.is_empty() && lanes.len() < ctrl.len() {
            let mut own = vec![false; ctrl.len()];
            for a in &stage.actuators {
                own[a.ctrl_column as usize] = true;
            }
            stage.tiled_actuators = Some(own);
        }
    }
    Ok(stage)
}

impl Plan {
    /// True when a write of parameter slot `slot` of group `g` may make an
    /// [`MjGeneralCfg`] actuator differ from its
    /// compiled self beyond `gainprm[0..3]` and `biasprm[0..3]` (the
    /// `wide` of [`MjStage::env_forces`]).
    pub fn widens_mj(&self, g: usize, slot: usize) -> bool {
        use crate::kinds::{MJ_SLOT_BIAS, MJ_SLOT_GAIN};
        let narrow = (MJ_SLOT_GAIN..MJ_SLOT_GAIN + 3).contains(&slot)
            || (MJ_SLOT_BIAS..MJ_SLOT_BIAS + 3).contains(&slot);
        self.groups[g].kind() == KindId::MjGeneral && !narrow
    }

    /// Checks a `(num_envs, num_joints)` joint-effort buffer's length.
    pub fn check_joint_effort_len(&self, got: usize) -> Result<(), Error> {
        Self::check_len(
            "the joint-effort buffer",
            got,
            self.num_envs * self.mj.num_joints,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DynType, FixedTendon, MjGeneralCfg, PlanOptions, Transmission};

    /// Arm joints `a0..a3`, two fingers coupled by the tendon `split`, a
    /// site `tip`.
    fn gripper_arm() -> Robot {
        let mut robot = Robot::from_joints(["a0", "a1", "a2", "a3", "f1", "f2"]);
        robot.tendons.push("split".into());
        robot.fixed_tendons.push(FixedTendon {
            name: "split".into(),
            joints: vec![("f1".into(), 0.5), ("f2".into(), -0.5)],
            actuator_force_range: None,
        });
        robot.sites.push("tip".into());
        robot
    }

    /// A motor with `dyn` dynamics: a law of its own in lanes.
    fn motor_with(dyn_type: DynType) -> MjGeneralCfg {
        let mut dynprm = [0.0; 10];
        dynprm[0] = 0.05;
        MjGeneralCfg {
            dyn_type,
            dynprm,
            ..MjGeneralCfg::motor()
        }
    }

    /// The ctrl columns of the tile's lanes that read their paths' sums,
    /// and the actuators it computes one at a time after its passes.
    fn tiled(robot: &Robot, groups: Vec<GroupCfg>) -> (Vec<usize>, Vec<usize>) {
        let plan = Plan::new(robot, groups, 32, PlanOptions::default()).expect("a plan");
        let mj = plan.mj();
        assert!(mj.tiles());
        let paths = mj.tiled.iter().flat_map(MjLanes::path_lanes).collect();
        (paths, mj.tile_each.clone())
    }

    #[test]
    fn actuators_on_tendons_and_sites_are_lanes_of_their_laws_where_a_pass_has_room() {
        let robot = gripper_arm();
        let arm = GroupCfg::new("arm", ["a0", "a1"], MjGeneralCfg::velocity(3.0));
        let grip = GroupCfg::new("grip", ["split"], MjGeneralCfg::velocity(2.0))
            .with_transmission(Transmission::Tendon);
        let thrust = GroupCfg::new("thrust", ["tip"], MjGeneralCfg::motor())
            .with_transmission(Transmission::Site);
        // The grip joins the arm's pass; the thrust's law gets one.
        let groups = vec![arm, grip.clone(), thrust.clone()];
        assert_eq!(tiled(&robot, groups), (vec![2, 3], vec![]));
        // Four laws on joints leave no room for the thrust's: the grip
        // still joins the arm's pass, but not once it is a motor too.
        let four = [
            GroupCfg::new("arm", ["a0"], MjGeneralCfg::velocity(3.0)),
            GroupCfg::new("damper", ["a1"], MjGeneralCfg::damper(2.0, [0.0, 1.0])),
            GroupCfg::new("filter", ["a2"], motor_with(DynType::Filter)),
            GroupCfg::new("integrator", ["a3"], motor_with(DynType::Integrator)),
        ];
        let groups = [&four[..], &[grip, thrust.clone()]].concat();
        assert_eq!(tiled(&robot, groups), (vec![4], vec![5]));
        let grip = GroupCfg::new("grip", ["split"], MjGeneralCfg::motor())
            .with_transmission(Transmission::Tendon);
        let groups = [&four[..], &[grip, thrust]].concat();
        assert_eq!(tiled(&robot, groups), (vec![], vec![4, 5]));
    }
}
