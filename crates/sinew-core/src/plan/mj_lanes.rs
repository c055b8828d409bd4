//! A plain MuJoCo stage's actuators a vector lane each: stretches of
//! actuators of one kind of law, on consecutive columns, computed by one
//! loop the compiler vectorizes, with the same operations in the same order
//! as the one-actuator loop (so the same bits).

use super::mujoco::{MjStage, MjTable, MjTileRows};
use crate::kinds::{
    clip, mj_force_after, mj_force_limit, mj_force_with, MjActuator, MJ_ACT_EARLY, MJ_ACT_LIMITED,
    MJ_CTRL_LIMITED, MJ_FORCE_LIMITED, MJ_MAX_CTRL, MJ_TABLE_PARAMS,
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
/// `filterexact` differ in [`MjActuator::act_step`] only), gain and bias
/// types, the same `actearly` and parameter source, on consecutive ctrl
/// columns and consecutive joints: their compiled values as one array per
/// value, each range as bounds (±inf where unlimited, which clamps
/// nothing: `clip(x, −inf, inf)` is `x`, NaN included). Muscles (muscle
/// dynamics, gain and bias together) also carry the values only their
/// curves read, in `muscle`.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct MjLanes {
    /// Their first ctrl column.
    ctrl_column: usize,
    /// Their first joint.
    joint: usize,
    /// The first actuator with every range marked limited and `dyn_type`
    /// [`DynType::Filter`] for `filterexact`: what the lanes share.
    proto: MjActuator,
    ctrl_lo: Vec<f32>,
    ctrl_hi: Vec<f32>,
    force_lo: Vec<f32>,
    force_hi: Vec<f32>,
    act_lo: Vec<f32>,
    act_hi: Vec<f32>,
    act_step: Vec<f32>,
    /// `dynprm[0]`.
    tau: Vec<f32>,
    gear: Vec<f32>,
    /// The transmission coefficients.
    coef: Vec<f32>,
    /// The compiled `gainprm[0..3]`, one array per term.
    gain: [Vec<f32>; 3],
    /// The compiled `biasprm[0..3]`.
    bias: [Vec<f32>; 3],
    /// A muscle stretch's further values ([`muscle_values`]), one array
    /// per value.
    muscle: Option<Box<[Vec<f32>; MUSCLE_VALUES]>>,
}

/// The values a muscle's curves read beyond those every stretch has.
const MUSCLE_VALUES: usize = 17;

/// Those values of actuator `a`: `dynprm[1..3]` (the deactivation time
/// constant, the smoothing width), `gainprm[3..9]`, `biasprm[3..9]`,
/// `length_lo`, `length_hi` and `acc0`.
fn muscle_values(a: &MjActuator) -> [f32; MUSCLE_VALUES] {
    let mut v = [0.0; MUSCLE_VALUES];
    v[..2].copy_from_slice(&a.dynprm[1..3]);
    v[2..8].copy_from_slice(&a.gainprm[3..9]);
    v[8..14].copy_from_slice(&a.biasprm[3..9]);
    v[14..].copy_from_slice(&[a.length_lo, a.length_hi, a.acc0]);
    v
}

/// Lane `i` of the arrays of [`muscle_values`] written into `a` (no
/// closure: one would compile apart from the vector loop that calls this).
#[inline(always)]
fn set_muscle_values(a: &mut MjActuator, arrays: &[&[f32]; MUSCLE_VALUES], i: usize) {
    let mut v = [0.0; MUSCLE_VALUES];
    for k in 0..MUSCLE_VALUES {
        v[k] = arrays[k][i];
    }
    a.dynprm[1..3].copy_from_slice(&v[..2]);
    a.gainprm[3..9].copy_from_slice(&v[2..8]);
    a.biasprm[3..9].copy_from_slice(&v[8..14]);
    [a.length_lo, a.length_hi, a.acc0] = [v[14], v[15], v[16]];
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

/// True for a muscle: muscle dynamics, gain and bias.
fn is_muscle(a: &MjActuator) -> bool {
    (a.dyn_type, a.gain_type, a.bias_type)
        == (
            DynType::Muscle as u32,
            GainType::Muscle as u32,
            BiasType::Muscle as u32,
        )
}

/// True for a `dcmotor` without dynamics: `dcmotor` gain and bias.
fn is_dc_motor(a: &MjActuator) -> bool {
    (a.dyn_type, a.gain_type, a.bias_type)
        == (
            DynType::None as u32,
            GainType::DcMotor as u32,
            BiasType::DcMotor as u32,
        )
}

/// True when the lane loop computes this actuator's law: a muscle, a
/// `dcmotor` without dynamics, or `none`, `integrator` or `filter`
/// dynamics with a fixed or affine gain and no or an affine bias.
fn in_lanes(a: &MjActuator) -> bool {
    is_muscle(a)
        || is_dc_motor(a)
        || (lane_dyn(a).is_some_and(|d| d != DynType::Muscle as u32)
            && [GainType::Fixed as u32, GainType::Affine as u32].contains(&a.gain_type)
            && [BiasType::None as u32, BiasType::Affine as u32].contains(&a.bias_type))
}

/// The flags lanes must share.
const SHARED_FLAGS: u32 = MJ_ACT_EARLY | MJ_TABLE_PARAMS;

/// A [`MjStage::plain`] stage's actuators as segments.
pub(super) fn segments(stage: &MjStage) -> Vec<MjSegment> {
    let acts = &stage.actuators;
    let joint = |k: usize| stage.path[acts[k].path_offset as usize].column as usize;
    // The next actuator joins the stretch `first..k` when it computes the
    // same law on the next ctrl column and the next joint.
    let joins = |first: usize, k: usize| {
        let (a, b) = (&acts[first], &acts[k]);
        let d = k - first;
        in_lanes(b)
            && (lane_dyn(a), a.gain_type, a.bias_type) == (lane_dyn(b), b.gain_type, b.bias_type)
            && a.flags & SHARED_FLAGS == b.flags & SHARED_FLAGS
            && b.ctrl_column as usize == a.ctrl_column as usize + d
            && joint(k) == joint(first) + d
            && joint(k) < stage.num_joints
    };
    let mut out = Vec::new();
    let mut k = 0;
    while k < acts.len() {
        let first = k;
        if in_lanes(&acts[k]) && joint(k) < stage.num_joints {
            k += 1;
            while k < acts.len() && joins(first, k) {
                k += 1;
            }
            out.push(MjSegment::Lanes(Box::new(MjLanes::new(stage, first..k))));
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

impl MjLanes {
    fn new(stage: &MjStage, range: Range<usize>) -> MjLanes {
        let acts = &stage.actuators[range.clone()];
        let a = acts[0];
        let column = |value: &dyn Fn(&MjActuator) -> f32| acts.iter().map(value).collect();
        let bound = |bit: u32, end: &dyn Fn(&MjActuator) -> f32, inf: f32| {
            column(&|a: &MjActuator| if a.flags & bit != 0 { end(a) } else { inf })
        };
        let inf = f32::INFINITY;
        MjLanes {
            ctrl_column: a.ctrl_column as usize,
            joint: stage.path[a.path_offset as usize].column as usize,
            proto: MjActuator {
                dyn_type: lane_dyn(&a).expect("a lane actuator"),
                flags: a.flags | MJ_CTRL_LIMITED | MJ_FORCE_LIMITED | MJ_ACT_LIMITED,
                ..a
            },
            ctrl_lo: bound(MJ_CTRL_LIMITED, &|a| a.ctrl_lo, -inf),
            ctrl_hi: bound(MJ_CTRL_LIMITED, &|a| a.ctrl_hi, inf),
            force_lo: bound(MJ_FORCE_LIMITED, &|a| a.force_lo, -inf),
            force_hi: bound(MJ_FORCE_LIMITED, &|a| a.force_hi, inf),
            act_lo: bound(MJ_ACT_LIMITED, &|a| a.act_lo, -inf),
            act_hi: bound(MJ_ACT_LIMITED, &|a| a.act_hi, inf),
            act_step: column(&|a| a.act_step),
            tau: column(&|a| a.dynprm[0]),
            gear: column(&|a| a.gear),
            coef: (acts.iter())
                .map(|a| stage.path[a.path_offset as usize].coef)
                .collect(),
            gain: std::array::from_fn(|q| column(&|a| a.gainprm[q])),
            bias: std::array::from_fn(|q| column(&|a| a.biasprm[q])),
            muscle: is_muscle(&a)
                .then(|| Box::new(std::array::from_fn(|k| column(&|a| muscle_values(a)[k])))),
        }
    }

    /// Their ctrl columns.
    pub(super) fn columns(&self) -> Range<usize> {
        self.ctrl_column..self.ctrl_column + self.gear.len()
    }

    /// Their joints.
    pub(super) fn joints(&self) -> Range<usize> {
        self.joint..self.joint + self.gear.len()
    }

    /// These lanes `times` over, back to back: the lanes of `times`
    /// consecutive envs' rows of a stage whose stretch covers each row.
    pub(super) fn repeated(&self, times: usize) -> MjLanes {
        let rep = |v: &Vec<f32>| v.repeat(times);
        MjLanes {
            ctrl_lo: rep(&self.ctrl_lo),
            ctrl_hi: rep(&self.ctrl_hi),
            force_lo: rep(&self.force_lo),
            force_hi: rep(&self.force_hi),
            act_lo: rep(&self.act_lo),
            act_hi: rep(&self.act_hi),
            act_step: rep(&self.act_step),
            tau: rep(&self.tau),
            gear: rep(&self.gear),
            coef: rep(&self.coef),
            gain: self.gain.each_ref().map(rep),
            bias: self.bias.each_ref().map(rep),
            muscle: (self.muscle.as_deref()).map(|m| Box::new(m.each_ref().map(rep))),
            ..*self
        }
    }

    /// Clamps the controls `ctrl` (the stretch's, or a whole number of
    /// [`MjLanes::repeated`] stretches) by their ranges; non-zero when one
    /// is beyond MuJoCo's bad-control bound.
    #[inline(always)]
    pub(super) fn clamp_controls(&self, ctrl: &mut [f32]) -> u32 {
        let mut wild = 0;
        for ((u, &lo), &hi) in ctrl.iter_mut().zip(&self.ctrl_lo).zip(&self.ctrl_hi) {
            *u = clip(*u, lo, hi);
            wild |= u32::from(u.abs() > MJ_MAX_CTRL);
        }
        wild
    }

    /// Their forces, as [`MjStage`]'s one-actuator loop computes them, for
    /// `rows` (one env's cut to the stretch, or consecutive envs' for
    /// [`MjLanes::repeated`] lanes): `rows.ctrl` holds the clamped controls
    /// on entry and the forces after the force ranges on exit (as if 0
    /// when `wild`), and their `moment·force` is added to `rows.effort`.
    /// `table` holds the rows of the parameter table where the stage reads
    /// it, this stretch's values from `at` on. Returns non-zero when some
    /// next activation is not finite.
    #[inline(always)]
    pub(super) fn forces<'t>(
        &self,
        wild: bool,
        rows: MjTileRows<'_>,
        table: Option<&MjTable<'t>>,
        at: usize,
    ) -> u32 {
        let n = rows.ctrl.len();
        let cut = |rows: [&'t [f32]; 3]| rows.map(|row| &row[at..at + n]);
        let (gain, bias) = match table {
            Some(t) if self.proto.flags & MJ_TABLE_PARAMS != 0 => (cut(t.gain), cut(t.bias)),
            _ => (
                self.gain.each_ref().map(|v| &v[..]),
                self.bias.each_ref().map(|v| &v[..]),
            ),
        };
        let reads = LaneReads {
            lanes: self,
            wild,
            pos: rows.pos,
            vel: rows.vel,
            act: rows.act,
            gain,
            bias,
        };
        let writes = LaneWrites {
            ctrl: rows.ctrl,
            act_next: rows.act_next,
            act_dot: rows.act_dot,
            effort: rows.effort,
        };
        reads.by_dyn(writes)
    }
}

/// What a stretch's loop reads for one env, its rows cut to the stretch.
struct LaneReads<'l> {
    lanes: &'l MjLanes,
    wild: bool,
    pos: &'l [f32],
    vel: &'l [f32],
    act: &'l [f32],
    gain: [&'l [f32]; 3],
    bias: [&'l [f32]; 3],
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
    /// On the way to the loop's form for the stretch's law.
    #[inline(always)]
    fn by_dyn(self, w: LaneWrites<'_>) -> u32 {
        const NONE: u32 = DynType::None as u32;
        const INTEGRATOR: u32 = DynType::Integrator as u32;
        const MUSCLE: u32 = DynType::Muscle as u32;
        let proto = &self.lanes.proto;
        if is_muscle(proto) {
            const G: u32 = GainType::Muscle as u32;
            const B: u32 = BiasType::Muscle as u32;
            return self.run::<MUSCLE, G, B>(w.ctrl, w.act_next, w.act_dot, w.effort);
        }
        if is_dc_motor(proto) {
            const G: u32 = GainType::DcMotor as u32;
            const B: u32 = BiasType::DcMotor as u32;
            return self.run::<NONE, G, B>(w.ctrl, w.act_next, w.act_dot, w.effort);
        }
        match proto.dyn_type {
            NONE => self.by_gain::<NONE>(w),
            INTEGRATOR => self.by_gain::<INTEGRATOR>(w),
            _ => self.by_gain::<{ DynType::Filter as u32 }>(w),
        }
    }

    #[inline(always)]
    fn by_gain<const D: u32>(self, w: LaneWrites<'_>) -> u32 {
        if self.lanes.proto.gain_type == GainType::Affine as u32 {
            self.by_bias::<D, { GainType::Affine as u32 }>(w)
        } else {
            self.by_bias::<D, { GainType::Fixed as u32 }>(w)
        }
    }

    #[inline(always)]
    fn by_bias<const D: u32, const G: u32>(self, w: LaneWrites<'_>) -> u32 {
        let LaneWrites {
            ctrl,
            act_next,
            act_dot,
            effort,
        } = w;
        if self.lanes.proto.bias_type == BiasType::Affine as u32 {
            self.run::<D, G, { BiasType::Affine as u32 }>(ctrl, act_next, act_dot, effort)
        } else {
            self.run::<D, G, { BiasType::None as u32 }>(ctrl, act_next, act_dot, effort)
        }
    }

    /// The loop for dynamics `D`, gain `G` and bias `B`, compiled for the
    /// widest vectors the CPU has: each lane's actuator is the prototype
    /// with its own values, so the law's type tests fold away. A muscle's
    /// curves branch on values; every branch is computed and one kept, as
    /// selects, which gives the same bits. A `dcmotor` bias adds its
    /// cogging after the force range, as the one-actuator loop does.
    #[inline(never)]
    fn run<const D: u32, const G: u32, const B: u32>(
        self,
        ctrl: &mut [f32],
        act_next: &mut [f32],
        act_dot: &mut [f32],
        effort: &mut [f32],
    ) -> u32 {
        crate::simd::widest(
            #[inline(always)]
            || {
                const EXP: u32 = 0x7f80_0000;
                let l = self.lanes;
                let n = ctrl.len();
                let (gain, bias) = (self.gain.map(|v| &v[..n]), self.bias.map(|v| &v[..n]));
                let (pos, vel, act) = (&self.pos[..n], &self.vel[..n], &self.act[..n]);
                let (act_next, act_dot, effort) =
                    (&mut act_next[..n], &mut act_dot[..n], &mut effort[..n]);
                let (gear, coef, act_step, tau) =
                    (&l.gear[..n], &l.coef[..n], &l.act_step[..n], &l.tau[..n]);
                let (force_lo, force_hi) = (&l.force_lo[..n], &l.force_hi[..n]);
                let (act_lo, act_hi) = (&l.act_lo[..n], &l.act_hi[..n]);
                let (proto, wild) = (l.proto, self.wild);
                const MUSCLE: u32 = DynType::Muscle as u32;
                let muscle = match &l.muscle {
                    Some(m) if D == MUSCLE => m.each_ref().map(|v| &v[..n]),
                    _ => [&[][..]; MUSCLE_VALUES],
                };
                let mut bad = 0;
                for i in 0..n {
                    let mut a = MjActuator {
                        dyn_type: D,
                        gain_type: G,
                        bias_type: B,
                        gear: gear[i],
                        act_step: act_step[i],
                        force_lo: force_lo[i],
                        force_hi: force_hi[i],
                        act_lo: act_lo[i],
                        act_hi: act_hi[i],
                        dynprm: [tau[i], proto.dynprm[1], proto.dynprm[2]],
                        ..proto
                    };
                    if D == MUSCLE {
                        set_muscle_values(&mut a, &muscle, i);
                    }
                    let u = if wild { 0.0 } else { ctrl[i] };
                    // As `MjStage::length_velocity` sums them, from 0.
                    let length = a.gear * (0.0 + coef[i] * pos[i]);
                    let velocity = a.gear * (0.0 + coef[i] * vel[i]);
                    let gain3 = [gain[0][i], gain[1][i], gain[2][i]];
                    let bias3 = [bias[0][i], bias[1][i], bias[2][i]];
                    let out = mj_force_with(&a, gain3, bias3, u, act[i], length, velocity);
                    act_dot[i] = out.act_dot;
                    act_next[i] = out.act_next;
                    bad |= u32::from(out.act_next.to_bits() & EXP == EXP);
                    let mut force = mj_force_limit(&a, out.force);
                    if B == BiasType::DcMotor as u32 {
                        a.biasprm[..3].copy_from_slice(&bias3);
                        force = mj_force_after(&a, force, length);
                    }
                    ctrl[i] = force;
                    effort[i] += a.gear * coef[i] * force;
                }
                bad
            },
        )
    }
}
