//! A plain MuJoCo stage's actuators a vector lane each: stretches of
//! actuators of one kind of law, on consecutive columns, computed by one
//! loop the compiler vectorizes, with the same operations in the same order
//! as the one-actuator loop (so the same bits). Their joints need not be
//! consecutive: mjlab orders a robot's actuators by group (the G1's
//! shoulder, hip and wrist motors each a group), and then a stretch
//! gathers its positions and velocities and scatters its joint efforts.
//! A tile of envs runs one pass per law over its whole rows
//! ([`tile_passes`]).

use super::mujoco::{MjPathEntry, MjStage, MjTable, MjTileRows};
use crate::kinds::{
    clip, filter_exact_step, mj_force_after, mj_force_limit, mj_force_with, MjActuator,
    MJ_ACT_EARLY, MJ_ACT_LIMITED, MJ_CTRL_LIMITED, MJ_FORCE_LIMITED, MJ_GENERAL_SLOTS, MJ_MAX_CTRL,
    MJ_SLOT_BIAS, MJ_SLOT_DYN, MJ_SLOT_GAIN, MJ_SLOT_GEAR, MJ_SLOT_RANGES, MJ_TABLE_PARAMS,
};
use crate::robot::{BiasType, DynType, GainType};
use std::ops::Range;

/// One stretch of a [`MjStage::plain`] stage's actuators, in ctrl order.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum MjSegment {
    /// Actuators computed a lane each.
    Lanes(Box<MjLanes>),
    /// Actuators computed one at a time (`user` dynamics, muscle and
    /// `dcmotor` terms mixed with other types, and actuators on columns
    /// that are not consecutive).
    Each(Range<usize>),
}

/// Consecutive actuators with the same dynamics (`filter` and
/// `filterexact` differ in [`MjActuator::act_step`] only, so they share a
/// stretch unless it reads the parameter table), gain and bias types, the
/// same `actearly` and parameter source, on consecutive ctrl
/// columns, each on one joint: their compiled values as one array per
/// [`MjGeneralCfg`](crate::MjGeneralCfg) parameter slot (the layout of the
/// parameter table, whose rows a step may read in their place), each range
/// as bounds (±inf where unlimited, which clamps nothing:
/// `clip(x, −inf, inf)` is `x`, NaN included), and the values no slot
/// holds.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct MjLanes {
    /// Their first ctrl column.
    ctrl_column: usize,
    /// The joints their rows of positions, velocities and joint efforts
    /// are cut to: theirs when consecutive, else every joint.
    joint_rows: Range<usize>,
    /// Each lane's joint in those rows, unless they are consecutive.
    gather: Option<Vec<u32>>,
    /// The first actuator with every range marked limited and `dyn_type`
    /// [`DynType::Filter`] for `filterexact`: what the lanes share.
    proto: MjActuator,
    /// One array per parameter slot.
    slots: [Vec<f32>; MJ_GENERAL_SLOTS],
    act_step: Vec<f32>,
    /// The transmission coefficients.
    coef: Vec<f32>,
    /// `length_lo`, `length_hi` and `acc0` (a muscle's curves read them).
    curve: [Vec<f32>; 3],
    /// True when the lanes are `filterexact` and read the parameter
    /// table: once the step reads `dynprm[0]` there, each lane's step
    /// follows its env's time constant ([`MjActuator::with_params`]).
    exact: bool,
    /// Where lanes of other laws, or of columns without an actuator, lie
    /// among them ([`tile_passes`]): non-zero for each lane of the
    /// prototype's law. The others are computed as if theirs, and nothing
    /// of theirs is written.
    mask: Option<Vec<u32>>,
    /// The lanes of the prototype's law whose actuators' paths are not one
    /// joint ([`on_path_lane`]; only in [`tile_passes`]), in one env's row.
    paths: Vec<MjLanePath>,
    /// Where [`MjLanes::repeated`], each of their lanes in the rows and its
    /// env's index among them, env by env.
    path_lanes: Vec<(u32, u32)>,
    /// Where [`MjLanes::repeated`], each entry of their paths, after its
    /// lane and env's index as in `path_lanes` (in path order, env by env).
    path_entries: Vec<PathEntryAt>,
    /// The lanes of one env's row: all of them but where
    /// [`MjLanes::repeated`].
    row: usize,
}

/// An entry of a [`MjLanePath`] in [`MjLanes::repeated`] rows: its lane
/// there, its env's index among them, the entry.
type PathEntryAt = (u32, u32, MjPathEntry);

/// A lane of [`tile_passes`] whose actuator's path is not one joint (a
/// fixed tendon of several joints, a site's empty path): the lane reads
/// its path's sums of positions and velocities in place of one joint's,
/// with a coefficient of 1 (`gear·(0 + 1·Σ)` is `gear·Σ`: a sum from +0
/// is never −0), and its `moment·force` reaches its path's joints after
/// the lanes', as [`MjStage`]'s one-actuator loop adds it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct MjLanePath {
    /// Its lane in an env's row (its ctrl column).
    lane: usize,
    /// Its path.
    entries: Vec<MjPathEntry>,
}

/// Actuator `a`'s compiled value of each parameter slot (ranges ±inf where
/// unlimited): what [`MjActuator::with_params`] reads back.
fn slot_values(a: &MjActuator) -> [f32; MJ_GENERAL_SLOTS] {
    let inf = f32::INFINITY;
    let bound = |bit: u32, lo: f32, hi: f32| {
        if a.flags & bit != 0 {
            [lo, hi]
        } else {
            [-inf, inf]
        }
    };
    let mut v = [0.0; MJ_GENERAL_SLOTS];
    v[MJ_SLOT_GAIN..][..9].copy_from_slice(&a.gainprm);
    v[MJ_SLOT_BIAS..][..9].copy_from_slice(&a.biasprm);
    v[MJ_SLOT_DYN..][..3].copy_from_slice(&a.dynprm);
    v[MJ_SLOT_GEAR] = a.gear;
    let ranges = [
        bound(MJ_CTRL_LIMITED, a.ctrl_lo, a.ctrl_hi),
        bound(MJ_FORCE_LIMITED, a.force_lo, a.force_hi),
        bound(MJ_ACT_LIMITED, a.act_lo, a.act_hi),
    ];
    v[MJ_SLOT_RANGES..].copy_from_slice(ranges.as_flattened());
    v
}

/// The lane loop's dynamics: [`DynType::FilterExact`] runs as `filter`.
fn lane_dyn(a: &MjActuator) -> Option<u32> {
    match a.dyn_type {
        x if x == DynType::None as u32 || x == DynType::Integrator as u32 => Some(x),
        x if x == DynType::Filter as u32 || x == DynType::FilterExact as u32 => {
            Some(DynType::Filter as u32)
        }
        x if x == DynType::Muscle as u32 => Some(x),
        _ => None,
    }
}

/// What lanes must share: the dynamics of the loop, the gain and bias
/// types, the flags of [`SHARED_FLAGS`], and `filterexact` where they read
/// the parameter table (once the step reads the time constants there,
/// each lane's step follows its env's, which `filter`'s does not).
fn lane_law(a: &MjActuator) -> (Option<u32>, u32, u32, u32, bool) {
    let exact = a.flags & MJ_TABLE_PARAMS != 0 && is_exact(a);
    (
        lane_dyn(a),
        a.gain_type,
        a.bias_type,
        a.flags & SHARED_FLAGS,
        exact,
    )
}

/// True when actuator `a` has these dynamics, gain and bias types.
fn has_types(a: &MjActuator, d: DynType, g: GainType, b: BiasType) -> bool {
    (a.dyn_type, a.gain_type, a.bias_type) == (d as u32, g as u32, b as u32)
}

/// True for `filterexact` dynamics.
fn is_exact(a: &MjActuator) -> bool {
    a.dyn_type == DynType::FilterExact as u32
}

/// True for a muscle: muscle dynamics, gain and bias.
fn is_muscle(a: &MjActuator) -> bool {
    has_types(a, DynType::Muscle, GainType::Muscle, BiasType::Muscle)
}

/// True for a `dcmotor` without dynamics: `dcmotor` gain and bias.
fn is_dc_motor(a: &MjActuator) -> bool {
    has_types(a, DynType::None, GainType::DcMotor, BiasType::DcMotor)
}

/// True when the lane loop computes this actuator's law: a muscle, a
/// `dcmotor` without dynamics, or of `none`, `integrator` or `filter`
/// dynamics with a fixed or affine gain and no or an affine bias.
fn lane_computes(a: &MjActuator) -> bool {
    is_muscle(a)
        || is_dc_motor(a)
        || (lane_dyn(a).is_some_and(|d| d != DynType::Muscle as u32)
            && [GainType::Fixed as u32, GainType::Affine as u32].contains(&a.gain_type)
            && [BiasType::None as u32, BiasType::Affine as u32].contains(&a.bias_type))
}

/// True when actuator `a` of `stage` is on one joint (a path of one entry,
/// a joint's).
fn on_joint(stage: &MjStage, a: &MjActuator) -> bool {
    a.path_len == 1 && (stage.path[a.path_offset as usize].column as usize) < stage.num_joints
}

/// True when the lane loop computes this actuator of `stage`: on one
/// joint, of a law it computes ([`lane_computes`]).
pub(super) fn in_lanes(stage: &MjStage, a: &MjActuator) -> bool {
    on_joint(stage, a) && lane_computes(a)
}

/// True when a tile's lanes compute this actuator of `stage` from its
/// path's sums ([`MjLanePath`]): of a law the lane loop computes, on a
/// path that is not one joint (a fixed tendon of several joints, a site).
pub(super) fn on_path_lane(stage: &MjStage, a: &MjActuator) -> bool {
    !on_joint(stage, a) && lane_computes(a)
}

/// The flags lanes must share.
const SHARED_FLAGS: u32 = MJ_ACT_EARLY | MJ_TABLE_PARAMS;

/// The most lanes of a stretch (and of a tile of one): what those on
/// joints that are not consecutive gather into arrays on the stack.
const MJ_GATHER_LANES: usize = 512;

/// A [`MjStage::plain`] stage's actuators as segments.
pub(super) fn segments(stage: &MjStage) -> Vec<MjSegment> {
    let acts = &stage.actuators;
    // The next actuator joins the stretch `first..k` when it computes the
    // same law on the next ctrl column (on any joint).
    let joins = |first: usize, k: usize| {
        let (a, b) = (&acts[first], &acts[k]);
        let d = k - first;
        in_lanes(stage, b)
            && lane_law(a) == lane_law(b)
            && b.ctrl_column as usize == a.ctrl_column as usize + d
            && d < MJ_GATHER_LANES
    };
    let mut out = Vec::new();
    let mut k = 0;
    while k < acts.len() {
        let first = k;
        if in_lanes(stage, &acts[k]) {
            k += 1;
            while k < acts.len() && joins(first, k) {
                k += 1;
            }
            let lanes = MjLanes::new(stage, first..k, &acts[first]);
            out.push(MjSegment::Lanes(Box::new(lanes)));
        } else {
            k += 1;
            match out.last_mut() {
                Some(MjSegment::Each(r)) if r.end == first => r.end = k,
                _ => out.push(MjSegment::Each(first..k)),
            }
        }
    }
    out
}

impl MjSegment {
    /// The segment's lanes, else its actuators, computed one at a time.
    pub(super) fn lanes(&self) -> Result<&MjLanes, Range<usize>> {
        match self {
            MjSegment::Lanes(lanes) => Ok(lanes),
            MjSegment::Each(k) => Err(k.clone()),
        }
    }
}

/// The most laws a tile of envs runs a pass of each over its whole rows.
const MJ_TILE_LAWS: usize = 4;

/// Actuator `a` as a lane of [`MjLanes::from_lanes`]: itself, its joint
/// and its transmission coefficient.
fn lane(stage: &MjStage, a: &MjActuator) -> (MjActuator, u32, f32) {
    let e = stage.path[a.path_offset as usize];
    (*a, e.column, e.coef)
}

/// The passes of [`MjStage::tile_forces`] over the rows of `envs`
/// consecutive envs of a [`MjStage::plain`] stage whose ctrl rows are
/// `num_ctrl` wide: one [`MjLanes::repeated`] over every column per law
/// (at most [`MJ_TILE_LAWS`]), each writing its own law's lanes only
/// ([`MjLanes::mask`]), and clamping its own controls (from the parameter
/// table or the compiled ranges, as its law's actuators read them). A
/// column without an actuator (a law not MuJoCo's, or a law member) is a
/// lane of no law's, computed with the law's values and written by none
/// (even one actuator among 29 columns takes fewer instructions so than env
/// by env); so is the column of an actuator the lanes do not compute (the
/// caller computes those one at a time). An actuator of a law the lanes
/// compute on a path that is not one joint is a lane of its law from its
/// path's sums ([`MjLanePath`]; then the lanes gather) where its law has a
/// pass, or room is left for one: else the caller computes it too. None
/// (empty) without an actuator the lanes compute, with more than
/// [`MJ_TILE_LAWS`] laws of actuators on joints or more ctrl columns than
/// joints, or unless the lanes gather within [`MJ_GATHER_LANES`].
pub(super) fn tile_passes(stage: &MjStage, num_ctrl: usize, envs: usize) -> Vec<MjLanes> {
    let mut acts: Vec<&MjActuator> = (stage.actuators.iter())
        .filter(|a| in_lanes(stage, a))
        .collect();
    // Adds `a`'s law to `laws` unless there already, or (with `room`) no
    // room is left; false when not added for want of room.
    fn join<'a>(laws: &mut Vec<&'a MjActuator>, a: &'a MjActuator, room: bool) -> bool {
        let new = !laws.iter().any(|l| lane_law(l) == lane_law(a));
        if new && room && laws.len() == MJ_TILE_LAWS {
            return false;
        }
        if new {
            laws.push(a);
        }
        true
    }
    let mut laws: Vec<&MjActuator> = Vec::new();
    for &a in &acts {
        join(&mut laws, a, false);
    }
    for a in stage.actuators.iter().filter(|a| on_path_lane(stage, a)) {
        if join(&mut laws, a, true) {
            acts.push(a);
        }
    }
    let tiles = !acts.is_empty() && stage.num_joints >= num_ctrl && laws.len() <= MJ_TILE_LAWS;
    if !tiles {
        return Vec::new();
    }
    // Each column's actuator in lanes, if it has one.
    let mut by_column: Vec<Option<&MjActuator>> = vec![None; num_ctrl];
    for &a in &acts {
        by_column[a.ctrl_column as usize] = Some(a);
    }
    let whole = acts.len() == num_ctrl;
    let paths: Vec<(&MjActuator, MjLanePath)> = (acts.iter())
        .filter(|a| !in_lanes(stage, a))
        .map(|&a| {
            let lane = a.ctrl_column as usize;
            let entries = stage.path_of(a).to_vec();
            (a, MjLanePath { lane, entries })
        })
        .collect();
    // Rows of joints wider than the ctrl rows (joints no column drives)
    // are reached through the gather, and so are the sums of paths.
    let gather = stage.num_joints > num_ctrl || !paths.is_empty();
    let passes: Vec<MjLanes> = (laws.iter())
        .map(|&law| {
            // A column without an actuator: the law's, on joint `c` (any
            // joint would do: it writes nothing, and adds 0 to its effort);
            // a path's lane too is on joint `c`, whose value it replaces
            // and whose effort it does not write.
            let lanes: Vec<(MjActuator, u32, f32)> = (by_column.iter().enumerate())
                .map(|(c, a)| match a {
                    Some(a) if in_lanes(stage, a) => lane(stage, a),
                    Some(a) => (**a, c as u32, 1.0),
                    None => (
                        MjActuator {
                            ctrl_column: c as u32,
                            ..*law
                        },
                        c as u32,
                        1.0,
                    ),
                })
                .collect();
            let mut lanes = MjLanes::from_lanes(&lanes, stage.num_joints, law, gather);
            lanes.paths = (paths.iter())
                .filter(|(a, _)| lane_law(a) == lane_law(law))
                .map(|(_, path)| path.clone())
                .collect();
            if laws.len() > 1 || !whole {
                let own = (by_column.iter())
                    .map(|a| u32::from(a.is_some_and(|a| lane_law(a) == lane_law(law))));
                lanes.mask = Some(own.collect());
            }
            lanes
        })
        .collect();
    // (The passes share their joints, and so whether they repeat.)
    if !passes[0].repeats(envs) {
        return Vec::new();
    }
    passes.iter().map(|lanes| lanes.repeated(envs)).collect()
}

impl MjLanes {
    /// The lanes of the actuators `range`, of the law of `law` (one of
    /// them): [`lane_law`]'s values and its other shared ones are `law`'s.
    fn new(stage: &MjStage, range: Range<usize>, law: &MjActuator) -> MjLanes {
        let lanes: Vec<(MjActuator, u32, f32)> = (stage.actuators[range].iter())
            .map(|a| lane(stage, a))
            .collect();
        MjLanes::from_lanes(&lanes, stage.num_joints, law, false)
    }

    /// The lanes of `lanes` (each the actuator of one of consecutive ctrl
    /// columns, or a stand-in for a column without one, its joint among
    /// `num_joints` and its transmission coefficient), of
    /// the law of `law`: [`lane_law`]'s values and its other shared ones
    /// are `law`'s. Their joints are gathered unless consecutive (always
    /// with `gather`).
    fn from_lanes(
        lanes: &[(MjActuator, u32, f32)],
        num_joints: usize,
        law: &MjActuator,
        gather: bool,
    ) -> MjLanes {
        let a = *law;
        let column =
            |value: &dyn Fn(&MjActuator) -> f32| lanes.iter().map(|(a, ..)| value(a)).collect();
        let joints: Vec<u32> = lanes.iter().map(|&(_, j, _)| j).collect();
        let first = joints[0] as usize;
        let consecutive =
            !gather && (joints.iter().enumerate()).all(|(i, &j)| j as usize == first + i);
        MjLanes {
            ctrl_column: lanes[0].0.ctrl_column as usize,
            joint_rows: if consecutive {
                first..first + joints.len()
            } else {
                0..num_joints
            },
            gather: (!consecutive).then_some(joints),
            proto: MjActuator {
                dyn_type: lane_dyn(&a).expect("a lane actuator"),
                flags: a.flags | MJ_CTRL_LIMITED | MJ_FORCE_LIMITED | MJ_ACT_LIMITED,
                ..a
            },
            slots: std::array::from_fn(|k| column(&|a| slot_values(a)[k])),
            act_step: column(&|a| a.act_step),
            coef: lanes.iter().map(|&(.., coef)| coef).collect(),
            curve: [
                column(&|a| a.length_lo),
                column(&|a| a.length_hi),
                column(&|a| a.acc0),
            ],
            exact: a.flags & MJ_TABLE_PARAMS != 0 && is_exact(&a),
            mask: None,
            paths: Vec::new(),
            path_lanes: Vec::new(),
            path_entries: Vec::new(),
            row: lanes.len(),
        }
    }

    /// The lanes of their [`MjLanePath`]s in an env's row: their actuators'
    /// ctrl columns.
    pub(super) fn path_lanes(&self) -> impl Iterator<Item = usize> + '_ {
        self.paths.iter().map(|path| path.lane)
    }

    /// Their ctrl columns.
    pub(super) fn columns(&self) -> Range<usize> {
        self.ctrl_column..self.ctrl_column + self.coef.len()
    }

    /// The joints [`MjLanes::forces`] reads and writes the rows of.
    pub(super) fn joint_rows(&self) -> Range<usize> {
        self.joint_rows.clone()
    }

    /// True when [`MjLanes::repeated`] may repeat these lanes `times`
    /// over: on consecutive joints, or within [`MJ_GATHER_LANES`].
    pub(super) fn repeats(&self, times: usize) -> bool {
        self.gather.is_none() || times * self.coef.len() <= MJ_GATHER_LANES
    }

    /// These lanes `times` over, back to back: the lanes of `times`
    /// consecutive envs' rows of a stage whose stretch covers each ctrl
    /// row; consecutive lanes cover each joint row too, and gathered ones
    /// reach into each env's row of every joint ([`MjLanes::joint_rows`]).
    pub(super) fn repeated(&self, times: usize) -> MjLanes {
        let rep = |v: &Vec<f32>| v.repeat(times);
        // (Gathered lanes' rows are every joint.)
        let width = self.joint_rows.len() as u32;
        // Each path's lane and env's index, env by env.
        let row = self.row;
        let paths = (0..times).flat_map(|e| {
            (self.paths.iter()).map(move |p| ((e * row + p.lane) as u32, e as u32, p))
        });
        MjLanes {
            slots: self.slots.each_ref().map(rep),
            act_step: rep(&self.act_step),
            coef: rep(&self.coef),
            curve: self.curve.each_ref().map(rep),
            mask: self.mask.as_ref().map(|mask| mask.repeat(times)),
            paths: self.paths.clone(),
            path_lanes: paths.clone().map(|(k, e, _)| (k, e)).collect(),
            path_entries: (paths.flat_map(|(k, e, p)| p.entries.iter().map(move |&x| (k, e, x))))
                .collect(),
            gather: (self.gather.as_ref()).map(|joints| {
                (0..times as u32)
                    .flat_map(|e| joints.iter().map(move |&j| e * width + j))
                    .collect()
            }),
            joint_rows: 0..self.joint_rows.len() * times,
            ..*self
        }
    }

    /// The values of parameter slot `slot` for the lanes of table columns
    /// `at` (the stretch's, or a whole number of [`MjLanes::repeated`]
    /// stretches): the compiled ones, or where the stretch reads the
    /// parameter table and the step reads the slot there, `table`'s row.
    #[inline(always)]
    fn slot<'t>(&'t self, table: Option<&MjTable<'t>>, slot: usize, at: Range<usize>) -> &'t [f32] {
        match table.and_then(|t| t.row(slot)) {
            Some(row) if self.proto.flags & MJ_TABLE_PARAMS != 0 => &row[at],
            _ => &self.slots[slot][..at.len()],
        }
    }

    /// Clamps the controls `ctrl` (of table columns `at..`) by their ranges
    /// ([`MjLanes::slot`]), every one (`own` false) or those of the
    /// prototype's law alone ([`MjLanes::mask`]); non-zero when one so
    /// clamped is beyond MuJoCo's bad-control bound.
    #[inline(always)]
    pub(super) fn clamp_controls(
        &self,
        ctrl: &mut [f32],
        table: Option<&MjTable<'_>>,
        at: usize,
        own: bool,
    ) -> u32 {
        let at = at..at + ctrl.len();
        let lo = self.slot(table, MJ_SLOT_RANGES, at.clone());
        let hi = self.slot(table, MJ_SLOT_RANGES + 1, at);
        let mut wild = 0;
        let mask = match &self.mask {
            Some(mask) if own => mask,
            _ => {
                for ((u, &lo), &hi) in ctrl.iter_mut().zip(lo).zip(hi) {
                    *u = clip(*u, lo, hi);
                    wild |= u32::from(u.abs() > MJ_MAX_CTRL);
                }
                return wild;
            }
        };
        for (((u, &lo), &hi), &mine) in ctrl.iter_mut().zip(lo).zip(hi).zip(mask) {
            let clamped = clip(*u, lo, hi);
            *u = if mine != 0 { clamped } else { *u };
            // (No `&&`: its branch keeps the loop out of vector lanes.)
            wild |= u32::from(mine != 0) & u32::from(clamped.abs() > MJ_MAX_CTRL);
        }
        wild
    }

    /// Clamps the controls of consecutive envs' rows `ctrl` (of table
    /// columns `at..`) for [`tile_passes`]' `passes`: each pass has every
    /// actuator's own ranges, so where every column is an actuator's
    /// (`whole`) and all read them from one source (the table, or the
    /// compiled values) the first clamps them all; else each clamps its own
    /// law's. Non-zero when a control is beyond MuJoCo's bad-control bound.
    /// In the widest vectors the CPU has.
    #[inline(always)]
    pub(super) fn clamp_tile(
        passes: &[MjLanes],
        whole: bool,
        ctrl: &mut [f32],
        table: Option<&MjTable<'_>>,
        at: usize,
    ) -> u32 {
        let source = |lanes: &MjLanes| lanes.proto.flags & MJ_TABLE_PARAMS;
        let one = whole && (passes.iter()).all(|lanes| source(lanes) == source(&passes[0]));
        crate::simd::widest(
            #[inline(always)]
            || match one {
                true => passes[0].clamp_controls(ctrl, table, at, false),
                false => {
                    // (A loop, not a `fold`, whose closure the compiler
                    // leaves outside this vector form.)
                    let mut wild = 0;
                    for lanes in passes {
                        wild |= lanes.clamp_controls(ctrl, table, at, true);
                    }
                    wild
                }
            },
        )
    }

    /// Their forces, as [`MjStage`]'s one-actuator loop computes them, for
    /// `rows` (one env's, or consecutive envs' for [`MjLanes::repeated`]
    /// lanes, of table columns `at..`; the ctrl and activation rows cut to
    /// the stretch, the others to [`MjLanes::joint_rows`], but the
    /// positions and velocities to the stretch too when
    /// [`MjTileRows::ctrl_order`]): `rows.ctrl`
    /// holds the clamped controls on entry and the forces after the force
    /// ranges on exit (as if 0 when `wild`), and their `moment·force` is
    /// added to `rows.effort`. Their parameters are [`MjLanes::slot`]'s.
    /// Returns non-zero when some next activation is not finite.
    #[inline(always)]
    pub(super) fn forces<'t>(
        &'t self,
        wild: bool,
        rows: MjTileRows<'_>,
        table: Option<&MjTable<'t>>,
        at: usize,
    ) -> u32 {
        debug_assert!(self.paths.is_empty(), "a stretch's lanes are on joints");
        Self::passes(std::slice::from_ref(self), wild, rows, table, at, [&[]; 2])
    }

    /// [`MjLanes::forces`] of each of `passes` in turn: lanes on the same
    /// columns and joints, each law's written where its
    /// [`MjLanes::mask`] says (those of [`tile_passes`]). Their
    /// `moment·force`s reach the joint efforts in lane order, then those
    /// of their [`MjLanePath`]s, whose sums read `targets`: the envs'
    /// command rows of positions and velocities (every target's).
    #[inline(always)]
    pub(super) fn passes<'t>(
        passes: &'t [MjLanes],
        wild: bool,
        mut rows: MjTileRows<'_>,
        table: Option<&MjTable<'t>>,
        at: usize,
        targets: [&[f32]; 2],
    ) -> u32 {
        let Some(joints) = &passes[0].gather else {
            // (Lanes of paths gather.)
            let mut bad = 0;
            for lanes in passes {
                let reads = LaneReads {
                    lanes,
                    wild,
                    pos: rows.pos,
                    vel: rows.vel,
                    act: rows.act,
                    table,
                    at,
                };
                bad |= reads.by_dyn(rows.writes());
            }
            return bad;
        };
        // (The last tile of envs may be short.)
        let joints = &joints[..rows.ctrl.len()];
        // Arrays no longer than needed: zeroing them is part of the cost.
        let reads = (wild, table, at, targets);
        match joints.len() {
            0..=32 => Self::gathered::<32>(passes, joints, rows, reads),
            33..=128 => Self::gathered::<128>(passes, joints, rows, reads),
            _ => Self::gathered::<MJ_GATHER_LANES>(passes, joints, rows, reads),
        }
    }

    /// [`MjLanes::passes`] of lanes on `joints` (at most `B`): their
    /// positions and velocities gathered into arrays (unless the rows are
    /// in ctrl order already and no lane is a path's), a path's lane's
    /// replaced by its sums, and their `moment·force`s scattered from
    /// one, in lane order, a path's lane's 0 (its path's then added to its
    /// joints). A lane adds its `moment·force` to 0 first: the same value
    /// (0 + −0 is +0, which adds to a joint's sum as −0 does, the sum
    /// starting at +0 and never −0); so a path's lane's 0 leaves its joint's
    /// sum as it was.
    #[inline(always)]
    fn gathered<'t, const B: usize>(
        passes: &'t [MjLanes],
        joints: &[u32],
        mut rows: MjTileRows<'_>,
        (wild, table, at, targets): (bool, Option<&MjTable<'t>>, usize, [&[f32]; 2]),
    ) -> u32 {
        let n = joints.len();
        assert!(n <= B, "gathered lanes are cut to blocks");
        // The joint-effort rows, taken out of `rows` (whose lanes write the
        // array below). Each index is within them; `min` tells the compiler
        // so, which leaves the gather without bounds checks. The scatter
        // writes through a pointer: indexed, it kept its check (and
        // reloaded the rows from the stack) once the joint rows were cut
        // apart from the ctrl rows, 11 instructions a lane against 7.5.
        let rows_effort = std::mem::take(&mut rows.effort);
        assert!(
            !rows_effort.is_empty(),
            "lanes reach the rows of their joints"
        );
        let last = rows_effort.len() - 1;
        let mut effort = [0.0f32; B];
        let paths = passes.iter().any(|lanes| !lanes.paths.is_empty());
        // Filled (and zeroed first) only where the rows need a gather.
        let mut gathered: [[f32; B]; 2];
        let (pos, vel): (&[f32], &[f32]) = if rows.ctrl_order && !paths {
            (rows.pos, rows.vel)
        } else {
            gathered = [[0.0f32; B]; 2];
            let [pos, vel] = &mut gathered;
            if rows.ctrl_order {
                pos[..n].copy_from_slice(&rows.pos[..n]);
                vel[..n].copy_from_slice(&rows.vel[..n]);
            } else {
                let last = last.min(rows.pos.len() - 1).min(rows.vel.len() - 1);
                for k in 0..n {
                    let j = (joints[k] as usize).min(last);
                    pos[k] = rows.pos[j];
                    vel[k] = rows.vel[j];
                }
            }
            for lanes in passes {
                lanes.path_sums(targets, &mut pos[..n], &mut vel[..n]);
            }
            (&gathered[0][..n], &gathered[1][..n])
        };
        let mut bad = 0;
        for lanes in passes {
            let reads = LaneReads {
                lanes,
                wild,
                pos,
                vel,
                act: rows.act,
                table,
                at,
            };
            bad |= reads.by_dyn(LaneWrites {
                effort: &mut effort[..n],
                ..rows.writes()
            });
        }
        if paths {
            for lanes in passes {
                for &(k, _) in lanes.cut_paths(n).0 {
                    effort[k as usize] = 0.0;
                }
            }
        }
        let base = rows_effort.as_mut_ptr();
        for k in 0..n {
            let j = (joints[k] as usize).min(last);
            // SAFETY: `j ≤ last`, within the non-empty rows (asserted).
            unsafe { *base.add(j) += effort[k] };
        }
        if paths {
            for lanes in passes {
                lanes.path_efforts(rows.ctrl, rows_effort, table, at);
            }
        }
        bad
    }

    /// Of [`MjLanes::path_lanes`] and [`MjLanes::path_entries`], those of
    /// the envs of `n` lanes (whole env rows).
    #[inline(always)]
    fn cut_paths(&self, n: usize) -> (&[(u32, u32)], &[PathEntryAt]) {
        let envs = (n / self.row) as u32;
        let lanes = self.path_lanes.partition_point(|&(_, e)| e < envs);
        let entries = self.path_entries.partition_point(|&(_, e, _)| e < envs);
        (&self.path_lanes[..lanes], &self.path_entries[..entries])
    }

    /// Writes each [`MjLanePath`]'s sums along its path of its env's
    /// positions and velocities of `targets` (its command rows, every
    /// target's) into its lane of `pos` and `vel` (whole env rows), summed
    /// as [`MjStage`]'s one-actuator loop sums them, from 0.
    #[inline(always)]
    fn path_sums(&self, targets: [&[f32]; 2], pos: &mut [f32], vel: &mut [f32]) {
        let (lanes, entries) = self.cut_paths(pos.len());
        let nt = targets[0].len() / (pos.len() / self.row).max(1);
        for &(k, _) in lanes {
            (pos[k as usize], vel[k as usize]) = (0.0, 0.0);
        }
        for &(k, e, entry) in entries {
            let t = e as usize * nt + entry.column as usize;
            pos[k as usize] += entry.coef * targets[0][t];
            vel[k as usize] += entry.coef * targets[1][t];
        }
    }

    /// Adds each [`MjLanePath`]'s `gear·coef·force` to each joint of its
    /// path in `effort` (whole env rows of every joint), its force its
    /// lane's of `ctrl` and its gear [`MjLanes::slot`]'s, as [`MjStage`]'s
    /// one-actuator loop adds them.
    #[inline(always)]
    fn path_efforts(
        &self,
        ctrl: &[f32],
        effort: &mut [f32],
        table: Option<&MjTable<'_>>,
        at: usize,
    ) {
        let n = ctrl.len();
        let gear = self.slot(table, MJ_SLOT_GEAR, at..at + n);
        let nj = effort.len() / (n / self.row).max(1);
        for &(k, e, entry) in self.cut_paths(n).1 {
            let (k, j) = (k as usize, entry.column as usize);
            if j < nj {
                effort[e as usize * nj + j] += gear[k] * entry.coef * ctrl[k];
            }
        }
    }
}

impl MjTileRows<'_> {
    /// What the lanes write, borrowed from the rows.
    fn writes(&mut self) -> LaneWrites<'_> {
        LaneWrites {
            ctrl: self.ctrl,
            act_next: self.act_next,
            act_dot: self.act_dot,
            effort: self.effort,
        }
    }
}

/// What a stretch's loop reads for one env, its rows cut to the stretch.
struct LaneReads<'l> {
    lanes: &'l MjLanes,
    wild: bool,
    pos: &'l [f32],
    vel: &'l [f32],
    act: &'l [f32],
    /// The table's rows, where the step reads it.
    table: Option<&'l MjTable<'l>>,
    /// The first lane's table column.
    at: usize,
}

/// What it writes: [`LaneReads::run`] takes each as a parameter of its
/// own, which tells the compiler that they overlap nothing else the loop
/// touches (so it vectorizes without checking).
struct LaneWrites<'l> {
    ctrl: &'l mut [f32],
    act_next: &'l mut [f32],
    act_dot: &'l mut [f32],
    effort: &'l mut [f32],
}

impl LaneReads<'_> {
    /// The `n` lanes' values of parameter slot `slot` ([`MjLanes::slot`]).
    #[inline(always)]
    fn slot(&self, slot: usize, n: usize) -> &[f32] {
        self.lanes.slot(self.table, slot, self.at..self.at + n)
    }

    /// On the way to the loop's form for the stretch's law, masked or not
    /// ([`MjLanes::mask`]).
    #[inline(always)]
    fn by_dyn(self, w: LaneWrites<'_>) -> u32 {
        match self.lanes.mask {
            Some(_) => self.by_dyn_as::<true>(w),
            None => self.by_dyn_as::<false>(w),
        }
    }

    #[inline(always)]
    fn by_dyn_as<const M: bool>(self, w: LaneWrites<'_>) -> u32 {
        const NONE: u32 = DynType::None as u32;
        const INTEGRATOR: u32 = DynType::Integrator as u32;
        const MUSCLE: u32 = DynType::Muscle as u32;
        let proto = &self.lanes.proto;
        if is_muscle(proto) {
            const G: u32 = GainType::Muscle as u32;
            const B: u32 = BiasType::Muscle as u32;
            return self.run::<M, MUSCLE, G, B>(w.ctrl, w.act_next, w.act_dot, w.effort);
        }
        if is_dc_motor(proto) {
            const G: u32 = GainType::DcMotor as u32;
            const B: u32 = BiasType::DcMotor as u32;
            return self.run::<M, NONE, G, B>(w.ctrl, w.act_next, w.act_dot, w.effort);
        }
        // `filterexact` lanes whose time constants are the table's take
        // their steps from them.
        let exact = self.lanes.exact && self.table.is_some_and(|t| t.row(MJ_SLOT_DYN).is_some());
        match proto.dyn_type {
            NONE => self.by_gain::<M, NONE>(w),
            INTEGRATOR => self.by_gain::<M, INTEGRATOR>(w),
            _ if exact => self.by_gain::<M, { DynType::FilterExact as u32 }>(w),
            _ => self.by_gain::<M, { DynType::Filter as u32 }>(w),
        }
    }

    #[inline(always)]
    fn by_gain<const M: bool, const D: u32>(self, w: LaneWrites<'_>) -> u32 {
        if self.lanes.proto.gain_type == GainType::Affine as u32 {
            self.by_bias::<M, D, { GainType::Affine as u32 }>(w)
        } else {
            self.by_bias::<M, D, { GainType::Fixed as u32 }>(w)
        }
    }

    #[inline(always)]
    fn by_bias<const M: bool, const D: u32, const G: u32>(self, w: LaneWrites<'_>) -> u32 {
        let LaneWrites {
            ctrl,
            act_next,
            act_dot,
            effort,
        } = w;
        if self.lanes.proto.bias_type == BiasType::Affine as u32 {
            self.run::<M, D, G, { BiasType::Affine as u32 }>(ctrl, act_next, act_dot, effort)
        } else {
            self.run::<M, D, G, { BiasType::None as u32 }>(ctrl, act_next, act_dot, effort)
        }
    }

    /// The loop for dynamics `D`, gain `G` and bias `B`, compiled for AVX2
    /// where the CPU has it ([`crate::simd::up_to_avx2`]: the Panda stepped
    /// slower with this loop in the AVX-512 form, BENCHMARKS.md): each
    /// lane's actuator is the prototype with its own values, so the law's
    /// type tests fold away. With `D` `filterexact` each lane's step is
    /// computed from its time constant (as [`MjActuator::with_params`]
    /// does; the compiled step is that of the compiled time constant);
    /// otherwise it is the compiled one. A muscle's curves branch on
    /// values; every branch is computed and one kept, as selects, which
    /// gives the same bits. A `dcmotor` bias adds its cogging after the
    /// force range, as the one-actuator loop does. With `M`
    /// ([`MjLanes::mask`]) a lane of another law writes nothing: its values
    /// are selected back in place of its results.
    #[inline(never)]
    fn run<const M: bool, const D: u32, const G: u32, const B: u32>(
        self,
        ctrl: &mut [f32],
        act_next: &mut [f32],
        act_dot: &mut [f32],
        effort: &mut [f32],
    ) -> u32 {
        crate::simd::up_to_avx2(
            #[inline(always)]
            || self.lanes::<M, D, G, B>(ctrl, act_next, act_dot, effort),
        )
    }

    /// [`LaneReads::run`]'s loop. A function of its own, inlined into the
    /// form's, so that the rows it writes are its arguments there: the
    /// compiler then knows they alias nothing else. (Captured by the
    /// closure they were plain pointers, and each call first compared the
    /// rows pairwise for overlap: 27 of the Panda's 527 instructions per
    /// env in the AVX2 form.)
    #[inline(always)]
    fn lanes<const M: bool, const D: u32, const G: u32, const B: u32>(
        self,
        ctrl: &mut [f32],
        act_next: &mut [f32],
        act_dot: &mut [f32],
        effort: &mut [f32],
    ) -> u32 {
        const EXP: u32 = 0x7f80_0000;
        const MUSCLE: u32 = DynType::Muscle as u32;
        let l = self.lanes;
        let n = ctrl.len();
        let gear = self.slot(MJ_SLOT_GEAR, n);
        let r = MJ_SLOT_RANGES;
        let (force_lo, force_hi) = (self.slot(r + 2, n), self.slot(r + 3, n));
        let (act_lo, act_hi) = (self.slot(r + 4, n), self.slot(r + 5, n));
        let tau = self.slot(MJ_SLOT_DYN, n);
        let (g, b) = (MJ_SLOT_GAIN, MJ_SLOT_BIAS);
        let gain = [self.slot(g, n), self.slot(g + 1, n), self.slot(g + 2, n)];
        let bias = [self.slot(b, n), self.slot(b + 1, n), self.slot(b + 2, n)];
        // What a muscle reads beside: `gainprm[3..9]`, `biasprm[3..9]`,
        // `dynprm[1..3]`, `length_lo`, `length_hi` and `acc0`.
        let mut muscle = [&[][..]; 17];
        if D == MUSCLE {
            for k in 0..6 {
                muscle[k] = self.slot(MJ_SLOT_GAIN + 3 + k, n);
                muscle[6 + k] = self.slot(MJ_SLOT_BIAS + 3 + k, n);
            }
            muscle[12] = self.slot(MJ_SLOT_DYN + 1, n);
            muscle[13] = self.slot(MJ_SLOT_DYN + 2, n);
            for (k, curve) in l.curve.iter().enumerate() {
                muscle[14 + k] = &curve[..n];
            }
        }
        let (pos, vel, act) = (&self.pos[..n], &self.vel[..n], &self.act[..n]);
        let (act_next, act_dot, effort) = (&mut act_next[..n], &mut act_dot[..n], &mut effort[..n]);
        let (coef, act_step) = (&l.coef[..n], &l.act_step[..n]);
        let mask = match &l.mask {
            Some(mask) if M => &mask[..n],
            _ => &[],
        };
        let (proto, wild) = (l.proto, self.wild);
        let mut bad = 0;
        for i in 0..n {
            let mut a = MjActuator {
                dyn_type: D,
                gain_type: G,
                bias_type: B,
                gear: gear[i],
                act_step: if D == DynType::FilterExact as u32 {
                    filter_exact_step(tau[i], proto.timestep)
                } else {
                    act_step[i]
                },
                force_lo: force_lo[i],
                force_hi: force_hi[i],
                act_lo: act_lo[i],
                act_hi: act_hi[i],
                ..proto
            };
            a.dynprm[0] = tau[i];
            if D == MUSCLE {
                for k in 0..6 {
                    a.gainprm[3 + k] = muscle[k][i];
                    a.biasprm[3 + k] = muscle[6 + k][i];
                }
                [a.dynprm[1], a.dynprm[2]] = [muscle[12][i], muscle[13][i]];
                [a.length_lo, a.length_hi, a.acc0] = [muscle[14][i], muscle[15][i], muscle[16][i]];
            }
            let u = if wild { 0.0 } else { ctrl[i] };
            // As `MjStage::length_velocity` sums them, from 0.
            let length = a.gear * (0.0 + coef[i] * pos[i]);
            let velocity = a.gear * (0.0 + coef[i] * vel[i]);
            let gain3 = [gain[0][i], gain[1][i], gain[2][i]];
            let bias3 = [bias[0][i], bias[1][i], bias[2][i]];
            let out = mj_force_with(&a, gain3, bias3, u, act[i], length, velocity);
            let own = !M || mask[i] != 0;
            act_dot[i] = if own { out.act_dot } else { act_dot[i] };
            act_next[i] = if own { out.act_next } else { act_next[i] };
            bad |= u32::from(own && out.act_next.to_bits() & EXP == EXP);
            let mut force = mj_force_limit(&a, out.force);
            if B == BiasType::DcMotor as u32 {
                // The cogging reads the lane's own bias terms.
                a.biasprm[..3].copy_from_slice(&bias3);
                force = mj_force_after(&a, force, length);
            }
            let effort_after = effort[i] + a.gear * coef[i] * force;
            ctrl[i] = if own { force } else { ctrl[i] };
            effort[i] = if own { effort_after } else { effort[i] };
        }
        bad
    }
}
