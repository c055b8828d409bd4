//! Sinew's CPU reference backend: rayon over env rows, the scalar laws of
//! `sinew-core` inlined into loops over contiguous runs, no allocation per step.
//!
//! ```
//! use sinew_core::{ActuatorCmd, Backend, GroupCfg, IdealPdCfg, Plan, PlanOptions, Robot};
//! use sinew_cpu::CpuBackend;
//!
//! let robot = Robot::from_joints(["hip", "knee"]);
//! let groups = vec![GroupCfg::new("leg", [".*"], IdealPdCfg::new(10.0, 0.0))];
//! let mut cpu = CpuBackend::new(Plan::new(&robot, groups, 2, PlanOptions::default())?);
//! let mut cmd = ActuatorCmd::zeros(2, 2);
//! cmd.position_target.copy_from_slice(&[0.1, 0.2, 0.3, 0.4]);
//! cpu.step(&cmd)?;
//! assert_eq!(cpu.ctrl(), &[1.0, 2.0, 3.0, 4.0]);
//! # Ok::<(), sinew_core::Error>(())
//! ```

mod choice;
mod io;
mod pool;
mod rows;
mod table;

use io::{any_nonfinite, zeroed_bits, Check, RunLaw, SlotRows};
use rayon::prelude::*;
use sinew_core::delay::{DelayParams, LagKeys};
use sinew_core::net::{LearnedRows, LearnedState};
use sinew_core::plan::{DelayBuffer, MjTileRows, Run, TargetSource};
// (Every arm but the baseline's is x86-64's.)
#[cfg_attr(not(target_arch = "x86_64"), allow(unused_imports))]
use sinew_core::simd::{form, Form};
use sinew_core::{
    AsCmd, Backend, ColumnOrder, DelayState, EnvIds, Error, Lags, MjDriver, ParamRef, Plan, Values,
    LEARNED_LIMIT_SLOTS, MJ_ACT_SLOT,
};
use std::ops::Range;
use table::Table;

/// The CPU backend: every table and history in host memory.
#[derive(Debug, Clone)]
pub struct CpuBackend {
    plan: Plan,
    /// `(num_envs, num_ctrl)`.
    ctrl: Table,
    /// `[slot][env][column]`: every kind's parameters, columns in ctrl
    /// order or, where the laws run in command order, in command order
    /// ([`Gather::param_order`]).
    params: Table,
    /// `[slot][env][ctrl]`: every kind's state.
    state: Table,
    /// `[slot][env][ctrl]`: the state a step computes, committed into
    /// `state` only for envs whose outputs are finite.
    state_next: Table,
    /// Per stretch of ctrl columns with state: `(state slots, ctrl start,
    /// len)`, what an env whose outputs are finite commits.
    commits: Vec<(usize, usize, usize)>,
    /// `[plane][env][ctrl]`: the input planes as last set, in ctrl order
    /// (each ctrl column's command column).
    inputs: Table,
    /// `[plane][env][ctrl]`: the output planes the last step wrote.
    outputs: Table,
    /// `(num_envs, ring_stride)`: every buffer's `[slot][field][column]` ring.
    ring: Table,
    /// `(num_envs, num_buffers)`.
    states: Vec<DelayState>,
    /// True once a MuJoCo-law parameter beyond the gain and bias terms was
    /// written ([`sinew_core::MjStage::env_forces`]'s `wide`).
    mj_wide: bool,
    /// `(num_envs, mj effort_width)`: joint efforts of the MuJoCo stage.
    effort: Table,
    /// True when `effort` holds the last step's joint efforts; else they
    /// are sums of `ctrl` ([`sinew_core::MjStage::runs_per_step`]).
    efforts_current: bool,
    /// Per env: 1 when the last step zeroed it.
    flags: Vec<u8>,
    nonfinite: Vec<u32>,
    step: u32,
    /// Per rayon chunk: its tile (`[field][env][ctrl]`, see
    /// [`StepInputs::tiles`]), sized on the first step.
    tile: Table,
    /// Per rayon chunk: its tile's lag candidates in one buffer
    /// ([`DelayParams::candidates`]),
    /// sized on the first step like `tile`.
    lags: Vec<u32>,
    /// How a tile is filled.
    gather: Gather,
    /// True for one undelayed law without state, planes or per-env stages
    /// over ctrl columns that are the command columns: a chunk whose
    /// values are all finite is then one run over the caller's rows
    /// ([`StepInputs::one_run`]); otherwise, and for every other plan, the
    /// chunk goes as tiles.
    one_run: bool,
    /// Whether a step is small enough for the caller's thread alone when
    /// the pool's other workers sleep ([`SERIAL_WORK`]).
    small: bool,
    /// Whether a step is too small to gain from more threads at all ([`FAN_WORK`]).
    tiny: bool,
    /// Whether a step's rows stay in the caches of the threads that run
    /// them ([`PLACED_WORK`]).
    placed: bool,
    /// For a small step that could run in parts: whether it runs faster on
    /// the calling thread alone, and when to try both again.
    split_choice: choice::SplitChoice,
    /// Env rows per tile: [`TILE`], or up to `4 × TILE` ([`STAGED`]).
    tile_envs: usize,
    /// How a tile runs laws of several kinds at once, where it can.
    law_passes: Option<LawPasses>,
}

/// The gathered runs of a plan of several laws: a tile runs each law
/// over its whole rows, as if every column were its own, and copies each
/// law's values at its own columns into the tile's (the first law's pass
/// writes every value). Env by env, one run at a time, each run's setup
/// and its remainder cost more than the law: a G1 with position actuators
/// and motor wrists took 1 572 instructions per env against one law's 173.
/// A costly law ([`Kind::COSTLY`](sinew_core::Kind::COSTLY)) runs over
/// its own columns alone instead, gathered into rows of their own
/// ([`OwnColumns`]): Isaac Lab's Spot ran its knees' table search over all
/// 12 columns for 4 knees. So does a law whose kind has state or planes,
/// which it must not write at other laws' columns: a BAM servo group
/// beside a PD group, stepped env by env, took 1 790 instructions per env
/// against 406 for servos alone.
#[derive(Debug, Clone)]
struct LawPasses {
    /// The laws over every column first, then the costly ones.
    laws: Vec<LawPass>,
    /// Floats of scratch per env of a tile: a row of values for the laws
    /// over every column, and a costly law's gathered rows.
    scratch: usize,
}

/// One law's pass in a tile of several laws ([`LawPasses`]).
#[derive(Debug, Clone)]
struct LawPass {
    /// Its first run, over a whole row (columns `0..num_ctrl`).
    run: Run,
    /// Each stretch `(column, column of its gathered rows, len)` of its
    /// columns that is contiguous in the rows' order (ctrl order, or
    /// command order under [`Gather::scatter`]; the form of
    /// [`Gather::pieces`], copied by a [`RowCopy`]).
    pieces: Vec<(usize, usize, usize)>,
    /// The columns a costly law runs over; `None` for every column.
    own: Option<OwnColumns>,
}

/// The columns of a costly law, or of one with state or planes, in a tile
/// of several laws ([`LawPasses`]): a tile's five fields and the law's
/// parameters, state and input planes at those columns are gathered into
/// rows of `width` values, the law runs over those rows, and its values,
/// next state and output planes go back to their columns.
#[derive(Debug, Clone)]
struct OwnColumns {
    /// The law's columns.
    width: usize,
    /// Its kind's parameters and state slots.
    params: usize,
    state: usize,
}

impl OwnColumns {
    /// Floats of scratch per env in a plan of `planes` input and output
    /// planes: five fields, the parameters, the state and the next state,
    /// the planes (the gathered tables hold each at its index in the plan,
    /// so that the law finds its own as in the step's) and the values.
    fn scratch(&self, planes: usize) -> usize {
        (6 + self.params + 2 * self.state + planes) * self.width
    }
}

impl LawPasses {
    /// The passes of `plan`'s gathered runs, when it has several laws,
    /// over rows in ctrl order or, with `cmd_order` (a plan whose ctrl
    /// columns permute the command's, [`Gather::scatter`]), in command
    /// order.
    fn new(plan: &Plan, cmd_order: bool) -> Option<LawPasses> {
        let runs = plan.gathered_runs();
        if runs.len() < 2 {
            return None;
        }
        // Whether a law runs over its own columns alone ([`OwnColumns`]).
        let apart = |run: &Run| {
            let spec = run.kind.spec();
            let planes = !spec.inputs.is_empty() || !spec.outputs.is_empty();
            spec.costly || !spec.state.is_empty() || planes
        };
        let law = |run: &Run| {
            let group = &plan.groups()[run.group];
            (run.kind, run.field, group.stage, plan.data_of(group))
        };
        // The laws in the order of their first columns: each its runs.
        let mut laws: Vec<Vec<&Run>> = Vec::new();
        for run in runs {
            match laws.iter_mut().find(|own| law(own[0]) == law(run)) {
                Some(own) => own.push(run),
                None => laws.push(vec![run]),
            }
        }
        // The laws over every column first: the first of them writes every
        // value. Without one, the laws' own columns must cover the row.
        laws.sort_by_key(|runs| apart(runs[0]));
        let nc = plan.num_ctrl();
        let claimed: usize = runs.iter().map(|run| run.len).sum();
        if apart(laws[0][0]) && claimed != nc {
            return None;
        }
        let laws: Vec<LawPass> = (laws.iter())
            .map(|runs| {
                // The law's columns in the rows' order, in stretches.
                let mut columns: Vec<usize> = (runs.iter())
                    .flat_map(|run| run.ctrl_start..run.ctrl_start + run.len)
                    .map(|c| match cmd_order {
                        true => plan.ctrl_columns()[c].cmd_column,
                        false => c,
                    })
                    .collect();
                columns.sort_unstable();
                let mut pieces: Vec<(usize, usize, usize)> = Vec::new();
                for (r, c) in columns.into_iter().enumerate() {
                    match pieces.last_mut() {
                        Some((start, _, len)) if *start + *len == c => *len += 1,
                        _ => pieces.push((c, r, 1)),
                    }
                }
                // `StepInputs::own_columns`' copies rely on this.
                assert!(pieces.iter().all(|&(c, _, len)| c + len <= nc));
                let spec = runs[0].kind.spec();
                LawPass {
                    run: Run {
                        ctrl_start: 0,
                        cmd_start: 0,
                        len: nc,
                        ..*runs[0]
                    },
                    own: apart(runs[0]).then(|| OwnColumns {
                        width: pieces.iter().map(|&(_, _, len)| len).sum(),
                        params: spec.params.len(),
                        state: spec.state.len(),
                    }),
                    pieces,
                }
            })
            .collect();
        let planes = plan.input_planes().len() + plan.output_planes().len();
        let scratch = (laws.iter().flat_map(|law| &law.own)).map(|own| own.scratch(planes));
        Some(LawPasses {
            scratch: scratch.fold(nc, usize::max),
            laws,
        })
    }
}

/// How [`StepInputs::tiles`] fills a tile.
#[derive(Debug, Clone)]
struct Gather {
    /// The command column of each ctrl column; `None` when ctrl column `c`
    /// is command column `c` for every `c` (tiles are copied whole), or
    /// when the laws run in command order (`scatter`).
    index: Option<Vec<u32>>,
    /// `index` as runs of consecutive command columns, `(ctrl column,
    /// command column, length)`, where each is at least [`RUN_COPY`]
    /// columns long: each run's rows are then copied whole.
    runs: Option<Vec<(usize, usize, usize)>>,
    /// The command column of each ctrl column, when laws without state,
    /// planes or per-env stages cover every command column in another
    /// order (mjlab's robots: their groups pick joints by pattern), either
    /// undelayed or behind one delay buffer over every column. The laws
    /// then run over the command's rows as they are (several laws one pass
    /// each, [`LawPasses`] in command order), with the parameters in
    /// command order ([`ColumnOrder::Cmd`]) and the ring's columns too (its
    /// single piece then reads `(tile column, ring column, len)` in command
    /// order), and only their output is put in ctrl order: one field
    /// permuted instead of five gathered.
    scatter: Option<Vec<u32>>,
    /// Per delay buffer: `(ctrl start, ring column, len)` of each stretch
    /// of its columns that is contiguous in ctrl order.
    pieces: Vec<Vec<(usize, usize, usize)>>,
    /// Per delay buffer: its lag draws' keys for the plan's seed.
    lag_keys: Vec<LagKeys>,
    /// Whether a tile needs its own copy of each command field. Where the
    /// tile's rows are the command's (`index` is `None`), the position and
    /// velocity are read from the command itself, and so are the targets
    /// unless some are delayed; where every column is delayed (by one
    /// buffer, or as Isaac Lab's Spot by one per group), the targets come
    /// from their delayed frames alone. (Delayed targets always fill the
    /// tile.)
    copied: [bool; 5],
    /// True when a tile's positions and velocities, in ctrl order
    /// (gathered by `index`, or the command's own rows), are the tiled
    /// MuJoCo stage's own
    /// ([`MjStage::tiles_in_ctrl_order`](sinew_core::plan::MjStage::tiles_in_ctrl_order)).
    mj_ctrl_order: bool,
}

impl Gather {
    /// `light`: the plan has no state, planes or per-env stages.
    fn new(plan: &Plan, light: bool) -> Gather {
        let columns = plan.ctrl_columns();
        let in_order = columns.len() == plan.num_targets()
            && columns
                .iter()
                .enumerate()
                .all(|(c, col)| col.cmd_column == c);
        // No delay, or one buffer over every column (its ring columns then
        // in command order too).
        let delays = match plan.buffers() {
            [] => true,
            [buffer] => buffer.cmd_columns.len() == columns.len(),
            _ => false,
        };
        // (Beside other laws, a costly law runs over its own columns,
        // gathered: in command order a robot's left and right joints split
        // them into pieces copied one by one. The G1 with remotized-PD knees
        // beside four light laws stepped 4096 envs on one AVX-512 core in
        // 432–548 µs that way, in 319–379 in ctrl order.)
        let runs = plan.gathered_runs();
        let costly = runs.len() > 1 && runs.iter().any(|run| run.kind.spec().costly);
        let scatter = !in_order && light && !costly && delays && plan.ctrl_permutes_cmd();
        // The tile's rows are the command's: in order, or in command order.
        let identity = in_order || scatter;
        let cmd_columns = || columns.iter().map(|c| c.cmd_column as u32).collect();
        let mut pieces = vec![Vec::<(usize, usize, usize)>::new(); plan.buffers().len()];
        let mut ring_column = vec![0; plan.buffers().len()];
        for (c, col) in columns.iter().enumerate() {
            if let Some(b) = plan.groups()[col.group].delay_buffer {
                let r = ring_column[b];
                ring_column[b] += 1;
                match pieces[b].last_mut() {
                    Some((start, ring, len)) if *start + *len == c && *ring + *len == r => {
                        *len += 1
                    }
                    _ => pieces[b].push((c, r, 1)),
                }
            }
        }
        // `StepInputs::gather_tile`'s and `delay_row`'s copies rely on these.
        assert!(columns.iter().all(|c| c.cmd_column < plan.num_targets()));
        for (buffer, pieces) in plan.buffers().iter().zip(&pieces) {
            let cols = buffer.cmd_columns.len();
            assert!((pieces.iter()).all(|&(c, r, len)| c + len <= columns.len() && r + len <= cols));
        }
        // A scattered plan's one buffer: its ring in command order.
        assert!(!scatter || pieces.iter().all(|p| p[..] == [(0, 0, columns.len())]));
        let delayed = !pieces.is_empty();
        // Every column delayed (a column is in one buffer at most). Copied
        // anyway, Spot's targets had 4 % of its profile's samples (in
        // `memmove`).
        let covered: usize = pieces.iter().flatten().map(|&(_, _, len)| len).sum();
        let full = identity && covered == columns.len();
        let index: Option<Vec<u32>> = (!identity).then(cmd_columns);
        let runs = index.as_deref().and_then(|index| {
            let mut runs: Vec<(usize, usize, usize)> = Vec::new();
            for (c, &j) in index.iter().enumerate() {
                match runs.last_mut() {
                    Some((_, start, len)) if *start + *len == j as usize => *len += 1,
                    _ => runs.push((c, j as usize, 1)),
                }
            }
            (!runs.is_empty() && runs.iter().all(|&(.., len)| len >= RUN_COPY)).then_some(runs)
        });
        Gather {
            runs,
            // (A scattered tile's rows are in command order.)
            mj_ctrl_order: !scatter && plan.mj().tiles_in_ctrl_order(&cmd_columns()),
            index,
            scatter: scatter.then(cmd_columns),
            pieces,
            lag_keys: (plan.buffers().iter())
                .map(|b| b.params.lag_keys(plan.seed()))
                .collect(),
            copied: std::array::from_fn(|f| !identity || (f < 3 && delayed && !full)),
        }
    }

    /// The column order of the parameter table.
    fn param_order(&self) -> ColumnOrder {
        match self.scatter {
            Some(_) => ColumnOrder::Cmd,
            None => ColumnOrder::Ctrl,
        }
    }
}

/// One rayon chunk's rows of the per-env tables, and its lag candidates.
struct EnvRows<'a> {
    ctrl: &'a mut [f32],
    ring: &'a mut [f32],
    states: &'a mut [DelayState],
    effort: &'a mut [f32],
    flags: &'a mut [u8],
    lags: &'a mut [u32],
}

/// One rayon chunk's rows of every table and its scratch, numbered (the
/// step's zip order).
type ChunkRows<'a> = (
    usize,
    (
        (
            (
                (
                    ((&'a mut [f32], &'a mut [f32]), &'a mut [DelayState]),
                    &'a mut [f32],
                ),
                &'a mut [u8],
            ),
            &'a mut [f32],
        ),
        &'a mut [u32],
    ),
);

/// How a step splits its envs ([`CpuBackend::parts`]).
enum Parts {
    /// All of them on the calling thread.
    Alone,
    /// Chunks of this many envs, chunk `i` on the pool's worker `i`
    /// ([`pool::fan_out`]).
    Placed(usize),
    /// Chunks of this many envs through rayon's join, on whichever thread
    /// takes them.
    Pooled(usize),
}

/// A mutable slice cut into chunks of `size` elements (the last shorter),
/// each taken by the thread that runs its part of a small step
/// ([`pool::fan_out`]), as `chunks_mut` would give them.
struct Cut<'a, T> {
    base: *mut T,
    len: usize,
    size: usize,
    _rows: std::marker::PhantomData<&'a mut [T]>,
}

// SAFETY: a `Cut` hands out disjoint chunks of a slice it borrows mutably,
// each at most once ([`Cut::chunk`]): as `&mut [T]` sent to other threads.
unsafe impl<T: Send> Sync for Cut<'_, T> {}

impl<'a, T> Cut<'a, T> {
    fn new(slice: &'a mut [T], size: usize) -> Self {
        Cut {
            base: slice.as_mut_ptr(),
            len: slice.len(),
            size: size.max(1),
            _rows: std::marker::PhantomData,
        }
    }

    /// How many chunks the slice holds.
    fn count(&self) -> usize {
        self.len.div_ceil(self.size)
    }

    /// Chunk `c`.
    ///
    /// # Safety
    /// `c < self.count()`, and no other `chunk(c)` of this cut is alive.
    unsafe fn chunk(&self, c: usize) -> &'a mut [T] {
        let at = c * self.size;
        debug_assert!(at < self.len);
        // SAFETY: in the borrowed slice, and disjoint from every other
        // chunk (the caller's guarantee).
        unsafe { std::slice::from_raw_parts_mut(self.base.add(at), self.size.min(self.len - at)) }
    }
}

/// A plan on the tile paths whose step weighs at most this much runs on the
/// caller's thread when the pool's other workers sleep: waking them after
/// the simulator's own step costs more (tens of µs) than such a step on one
/// thread. (When they are still spinning, it runs one chunk per thread;
/// when it comes within the spin wait of the step before, it wakes them
/// for the next.) The weight is `num_envs × (num_ctrl + 2 × delayed
/// columns)`: a delayed column's ring push and read make its step slower,
/// and its share of the work parallelizes well. Measured with `sinew bench
/// --scenario` (`after_idle`, `hot`) on 2 cores: since the checks ride in
/// the law's pass, PD and DC at 1024 × 29 are as fast or faster on one
/// thread hot and 1.6–2× faster after idling; delayed columns at 512 × 29
/// are not (BENCHMARKS.md). With the step in the caller's own pool ([`pool`]) the
/// bound still holds: PD at 1024 × 12 took 3.1 µs on one thread and 5.1 µs
/// with the bound at an eighth.
const SERIAL_WORK: usize = 32 * 1024;

/// A step lighter than this (in [`SERIAL_WORK`]'s weight) runs on the
/// caller's thread even while the pool's other workers spin: on 2 cores, PD
/// at 512 × 12 took 3.0–3.2 µs as one chunk per thread against 2.5 µs on
/// one thread; at 1024 × 12, 4.2–4.6 µs against 4.9–5.2 (BENCHMARKS.md).
const FAN_WORK: usize = 8 * 1024;

/// A step up to this weight ([`SERIAL_WORK`]'s) runs as one chunk per
/// thread, each on the same thread every step, while the pool's other
/// workers spin ([`pool::fan_out`]); a larger one goes through rayon in a
/// few chunks per thread, balanced by stealing. Up to here (PD at 4096 ×
/// 29, 4.3 MB of rows) a step's rows can stay in its cores' caches between
/// steps, so where they are matters; beyond it they come from memory, and
/// a thread slowed by the host is better balanced (PD at 8192 × 29 and
/// larger stepped as fast either way on 2 cores; BENCHMARKS.md).
const PLACED_WORK: usize = 128 * 1024;

/// The weight of a column of a kind with state or planes in [`SERIAL_WORK`]:
/// such laws (servos, muscles, MuJoCo 4's kinds) cost 30–80× PD's time per
/// element (`sinew bench`), so only tiny steps of them stay on one thread.
const HEAVY: usize = 64;

/// Env rows per tile: five fields of this many rows stay in L1/L2.
const TILE: usize = 32;

/// The shortest of [`Gather::runs`] with which a tile's fields are copied
/// run by run rather than value by value. (The Panda's seven arm joints
/// and its gripper's tendon, two runs of 7 and 1, took 287 instructions per
/// env more run by run.)
const RUN_COPY: usize = 8;

/// Values per tile where the laws run in command order without a delay
/// ([`Gather::scatter`]): the tile holds no command field, only the laws'
/// values, so it takes more envs (up to `4 × TILE`): Go1's 12 joints
/// stepped 17–20 % faster at 1024 and 4096 envs in tiles of 128 envs than
/// of 32, G1's 29 as fast (BENCHMARKS.md).
const STAGED: usize = 4096;

/// How many envs ahead of its ring copies an env's pushes and lag draws run
/// ([`StepInputs::tiles`]), so the prefetches of its ring frames are in
/// flight, a few at a time, when the copies reach them. Measured on 2 cores
/// with delay_dc (BENCHMARKS.md): 8 was as fast as 4 and faster than 16 at
/// 65536 × 29, where the rings live in memory; a whole tile (32) ahead was
/// 1.6× slower there.
const AHEAD: usize = 8;

impl CpuBackend {
    /// Allocates every table and history for the plan's `num_envs`.
    pub fn new(plan: Plan) -> Self {
        let num_envs = plan.num_envs();
        let num_ctrl = plan.num_ctrl();
        let state = per_env(plan.state_resets(), num_envs, num_ctrl);
        let num_buffers = plan.buffers().len();
        let mut states = vec![DelayState::default(); num_envs * num_buffers.max(1)];
        plan.reset_delay_states(EnvIds::All, &mut states, 0)
            .expect("all envs are in range");
        let t = plan.num_targets();
        // Kinds with state or planes (servos, muscles, MuJoCo 4's), a
        // MuJoCo stage, learned networks: tens of times PD's cost per element.
        let heavy = plan.num_state_slots() > 0
            || !plan.input_planes().is_empty()
            || !plan.output_planes().is_empty()
            || plan.mj().runs_per_step()
            || !plan.learned().is_empty();
        let one_run = !heavy
            && matches!(plan.runs(), [run] if plan.claimed_columns() == [(0, t)]
                && run.len == t
                && run.cmd_start == 0
                && run.targets == TargetSource::Cmd);
        let gather = Gather::new(&plan, !heavy);
        let defaults = plan.in_order(plan.param_defaults(), gather.param_order());
        let params = per_env(&defaults, num_envs, num_ctrl);
        let delayed: usize = plan.buffers().iter().map(|b| b.cmd_columns.len()).sum();
        let weight = num_ctrl * if heavy { HEAVY } else { 1 } + 2 * delayed;
        let small = num_envs.saturating_mul(weight) <= SERIAL_WORK;
        let tiny = num_envs.saturating_mul(weight) < FAN_WORK;
        let placed = num_envs.saturating_mul(weight) <= PLACED_WORK;
        // Per stretch of ctrl columns with as many slots (a run may join
        // groups of one kind whose settings give them different counts).
        let mut commits: Vec<(usize, usize, usize)> = Vec::new();
        for (c, column) in plan.ctrl_columns().iter().enumerate() {
            let slots = plan.groups()[column.group].state().len();
            match commits.last_mut() {
                Some((s, start, len)) if *s == slots && *start + *len == c => *len += 1,
                _ if slots > 0 => commits.push((slots, c, 1)),
                _ => {}
            }
        }
        let tile_envs = match gather.scatter {
            Some(_) if plan.buffers().is_empty() => {
                (STAGED / num_ctrl.max(1)).clamp(TILE, 4 * TILE)
            }
            _ => TILE,
        };
        CpuBackend {
            one_run,
            small,
            tiny,
            placed,
            split_choice: choice::SplitChoice::new(),
            tile_envs,
            law_passes: {
                let passes = LawPasses::new(&plan, gather.scatter.is_some());
                // Rows in command order have no path env by env.
                let whole = matches!(plan.gathered_runs(), [run] if run.len == num_ctrl);
                assert!(gather.scatter.is_none() || passes.is_some() || whole);
                passes
            },
            ctrl: Table::zeros(num_envs * num_ctrl),
            params,
            state_next: state.clone(),
            state,
            commits,
            inputs: {
                let mut inputs = Table::zeros(plan.input_planes().len() * num_envs * num_ctrl);
                to_ctrl_order(&plan, &plan.input_defaults(), &mut inputs);
                inputs
            },
            outputs: Table::zeros(num_envs * (plan.output_planes().len() * num_ctrl).max(1)),
            ring: Table::zeros(num_envs * plan.ring_stride().max(1)),
            states,
            mj_wide: false,
            efforts_current: true,
            effort: Table::zeros(num_envs * plan.mj().effort_width().max(1)),
            flags: vec![0; num_envs],
            tile: Table::default(),
            lags: Vec::new(),
            gather,
            nonfinite: Vec::with_capacity(num_envs),
            step: 0,
            plan,
        }
    }

    /// Runs `op` on the threads a step from this thread runs on (this
    /// thread and the other workers of its rayon pool), which then stay
    /// awake for the [spin wait](Self::set_spin_wait): rayon's parallel
    /// iterators inside `op` use that pool, and its workers are still
    /// running when the next step comes. Rayon's thieves take its parts in
    /// no fixed order, though, so rows written here may wait in the cache of
    /// a core that does not step them: write the next command with
    /// [`par_rows_mut`](Self::par_rows_mut), which hands each thread the
    /// rows it steps. Called from inside a rayon pool, `op` runs there.
    ///
    /// ```
    /// use rayon::prelude::*;
    /// use sinew_cpu::CpuBackend;
    ///
    /// let (num_envs, num_targets) = (4096, 12);
    /// let mut position_target = vec![0.0f32; num_envs * num_targets];
    /// CpuBackend::install(|| {
    ///     position_target
    ///         .par_chunks_mut(num_targets)
    ///         .enumerate()
    ///         .for_each(|(env, row)| row.fill(env as f32 * 1e-4));
    /// });
    /// assert_eq!(position_target[num_targets], 1e-4);
    /// ```
    pub fn install<R: Send>(op: impl FnOnce() -> R + Send) -> R {
        pool::install(op)
    }

    /// Runs `op` over the env rows of `tables` (each `(num_envs, width)`
    /// row-major, a width of its own), split as this backend's next step
    /// splits its envs, each part on the thread that will step those envs:
    /// `op(envs, rows)` gets the envs of its part and each table's rows of
    /// them. Write the next command here (the caller's own work between
    /// steps), and its rows wait in the caches of the cores that read them.
    /// On 2 cores, right after the peer scenario's command generation, PD at
    /// 1024 × 12 stepped in 1.11–1.12× its back-to-back time with the
    /// command written so, against 1.42–1.44× with it written through
    /// [`install`](Self::install)'s rayon split (whose thieves had taken 7 %
    /// of the other thread's rows); DC in 1.09–1.11× against 1.27–1.28×
    /// (BENCHMARKS.md).
    ///
    /// A step small enough for the calling thread alone has `op` run there
    /// over every env; a large one, whose rows come from memory anyway, in
    /// a few parts per thread through rayon, balanced by stealing. While
    /// the pool's workers sleep, `op` wakes them (as [`install`](Self::install)
    /// does) and runs through rayon, so that the next step finds them
    /// awake. A nested call (an `op` that calls `par_rows_mut` or steps a
    /// backend) runs its parts one after another on its thread. A panic in
    /// `op` resumes here.
    ///
    /// # Errors
    /// [`Error::RowsShape`] for a table whose length is not a multiple of
    /// `num_envs`; `op` then runs on none.
    ///
    /// ```
    /// use sinew_cpu::CpuBackend;
    /// use sinew_core::{ActuatorCmd, Backend, GroupCfg, IdealPdCfg, Plan, PlanOptions, Robot};
    ///
    /// let robot = Robot::from_joints(["hip", "knee"]);
    /// let pd = IdealPdCfg { stiffness: 20.0, damping: 0.5, effort_limit: 50.0 };
    /// let groups = vec![GroupCfg::new("leg", [".*"], pd)];
    /// let mut cpu = CpuBackend::new(Plan::new(&robot, groups, 4096, PlanOptions::default())?);
    /// let mut cmd = ActuatorCmd::zeros(4096, 2);
    /// for step in 0..3 {
    ///     cpu.par_rows_mut(cmd.fields_mut(), |envs, [target, _, _, pos, _]| {
    ///         for (env, (target, pos)) in envs.zip(target.chunks_mut(2).zip(pos.chunks_mut(2))) {
    ///             target.fill(0.1 * step as f32 + 1e-4 * env as f32);
    ///             pos.fill(0.0);
    ///         }
    ///     })?;
    ///     cpu.step(&cmd)?;
    /// }
    /// assert!((cpu.ctrl()[2 * 4095] - 20.0 * (0.2 + 0.4095)).abs() < 1e-4);
    /// # Ok::<(), sinew_core::Error>(())
    /// ```
    pub fn par_rows_mut<const N: usize>(
        &self,
        tables: [&mut [f32]; N],
        op: impl Fn(std::ops::Range<usize>, [&mut [f32]; N]) + Sync,
    ) -> Result<(), Error> {
        let num_envs = self.plan.num_envs();
        let placement = match self.parts() {
            _ if self.tiny => rows::Placement::Here,
            Parts::Placed(chunk) => rows::Placement::Workers(chunk),
            Parts::Pooled(chunk) => rows::Placement::Pool(chunk),
            // Workers asleep: woken, for the step after.
            Parts::Alone => rows::Placement::Pool(rows::split(num_envs, pool::threads())),
        };
        rows::run(tables, num_envs, placement, &op)
    }

    /// The spin wait a process starts with: 200 µs. On 2 cores, with the
    /// next command written through [`install`](Self::install) between
    /// steps (`sinew bench --scenario`, `after_work`), PD at 4096 × 29 took
    /// 52–58 µs with it against 79–87 µs with none (39–51 µs hot): until a
    /// sleeping worker wakes, the caller runs its rows from the other
    /// core's cache (BENCHMARKS.md). GNU OpenMP's threads spin longer: on
    /// the same host, 2 ms between two parallel loops cost nothing, 5 ms
    /// a wake.
    pub const DEFAULT_SPIN_WAIT: std::time::Duration = pool::DEFAULT_SPIN_WAIT;

    /// Sets how long, after a step run on several threads (or an
    /// [`install`](Self::install)), the other workers of the step's pool
    /// keep looking for work before they sleep, for every CPU backend in
    /// the process; [`DEFAULT_SPIN_WAIT`](Self::DEFAULT_SPIN_WAIT) to start
    /// with. A worker that has gone to sleep takes tens of µs to wake, so a step
    /// that comes within the spin wait of the last one starts on every
    /// thread at once; the cost is the other cores busy for that long after
    /// each step. A step small enough to run on the caller's thread alone
    /// while they sleep wakes them when it comes within the spin wait of
    /// the step before, so that steps back to back run on every thread
    /// (PD at 1024 × 29 on 2 cores went from 11 to 7.5 µs a step when this
    /// came in; BENCHMARKS.md).
    ///
    /// A caller that steps at a steady pace with longer gaps between its
    /// steps (a simulator's step, a policy's forward pass) finds the
    /// workers of a step run on several threads awake as well: once three
    /// gaps in a row agree within half the shortest, they sleep through the
    /// next gap on a timer, wake a little before the step is due, and spin
    /// until the spin wait after it (a step that has not come by then lets
    /// them sleep until a step wakes them). On Linux, a worker that finds
    /// itself on the caller's core then moves to another. On 2 cores, PD
    /// at 4096 × 29 with 1 ms of sleep between steps took 47–60 µs a step
    /// with this against 108–138 without (30–36 µs back to back), for
    /// 55–60 µs more of the other core's time a step (BENCHMARKS.md).
    /// [`install`](Self::install) wakes them at once, as do steps that come
    /// back to back again; a step that comes before they are awake runs as
    /// it would with them asleep.
    ///
    /// A spinning worker with nothing to do offers its core now and then to
    /// any other thread waiting for it, so the caller's own threads run
    /// there between steps: in mjlab's entity loop with torch on 2 threads
    /// on 2 cores, that took the loop from 1 039–1 408 µs a call to
    /// 940–1 044, as fast as with no spin wait (BENCHMARKS.md). Zero lets
    /// them sleep at once, with no timer.
    pub fn set_spin_wait(wait: std::time::Duration) {
        pool::set_spin_wait(wait);
    }

    /// The spin wait now in force ([`set_spin_wait`](Self::set_spin_wait)).
    pub fn spin_wait() -> std::time::Duration {
        pool::spin_wait()
    }

    /// The last step's `ctrl`, `(num_envs, num_ctrl)` row-major, without a copy.
    pub fn ctrl(&self) -> &[f32] {
        &self.ctrl
    }

    /// Steps taken since construction (the lag RNG's counter).
    pub fn steps_taken(&self) -> u32 {
        self.step
    }

    /// The delay state of one env for the buffer of `group` (for inspection).
    pub fn delay_state(&self, group: &str, env: usize) -> Result<DelayState, Error> {
        let b = self.plan.buffer_of(group)?;
        self.plan.check_env(env)?;
        Ok(self.states[env * self.plan.buffers().len() + b])
    }

    /// How a step run now splits its envs. While the pool's other workers
    /// spin (from the last step, or the caller's own work sent through
    /// [`CpuBackend::install`] or [`CpuBackend::par_rows_mut`]), a step
    /// neither tiny nor above [`PLACED_WORK`] runs as one even chunk per
    /// thread (a multiple of 16 envs, so each chunk's rows start on a
    /// cache line), chunk `i` handed to worker `i` directly
    /// ([`pool::fan_out`]): each thread steps the same rows every step, the
    /// rows [`CpuBackend::par_rows_mut`] hands the same thread. On 2 cores,
    /// PD at 2048 × 29 right after the scenario's command generation took a
    /// median 13.2 µs a step through rayon's join, whose thieves take chunks
    /// in no fixed order, and 10.9–11.5 so (9.5 hot); with the caller's
    /// chunk a sixteenth larger (once chosen for a worker that starts a few
    /// tenths of a µs after the caller), 12.4 (BENCHMARKS.md). Beyond
    /// [`pool::MAX_PARTS`] threads a step above [`SERIAL_WORK`] goes through
    /// rayon, so that it runs on all of them. Otherwise a small step runs on
    /// the caller's thread alone, and a larger one in a few chunks per
    /// thread through rayon: enough to balance, few enough to amortize. A
    /// tiny step always runs on the caller's thread. (The step itself runs
    /// a small step that could go in parts on the caller's thread alone
    /// where timing both ways found that faster: [`choice`].)
    fn parts(&self) -> Parts {
        let num_envs = self.plan.num_envs();
        let threads = pool::threads();
        if self.tiny {
            Parts::Alone
        } else if (self.small || self.placed && threads <= pool::MAX_PARTS) && pool::awake() {
            Parts::Placed(rows::split(num_envs, threads.min(pool::MAX_PARTS)))
        } else if !self.small {
            Parts::Pooled(rows::split(num_envs, 4 * threads))
        } else {
            Parts::Alone
        }
    }

    /// [`Backend::step_into`]: the step itself, writing into `out`.
    fn step_rows(&mut self, cmd: &dyn AsCmd, out: &mut [f32]) -> Result<(), Error> {
        let cmd = cmd.as_cmd();
        let plan = &self.plan;
        cmd.check_shape(plan.num_envs(), plan.num_targets())?;
        plan.check_ctrl_len(out.len())?;
        let (num_envs, nc) = (plan.num_envs(), plan.num_ctrl());
        let inputs = StepInputs {
            plan,
            cmd: cmd.fields(),
            params: &self.params,
            inputs: &self.inputs,
            state: SlotRows::new(&mut self.state, num_envs, nc),
            next: SlotRows::new(&mut self.state_next, num_envs, nc),
            outputs: SlotRows::new(&mut self.outputs, num_envs, nc),
            commits: &self.commits,
            step: self.step,
            gather: &self.gather,
            tile_envs: self.tile_envs,
            mj_wide: self.mj_wide,
            mj_tiled: plan.mj().tiles() && plan.learned().is_empty(),
            learned_tiled: plan.learned().runs_by_rows(nc, plan.num_targets()),
            law_passes: self.law_passes.as_ref(),
        };
        let num_ctrl = plan.num_ctrl().max(1);
        let ring_stride = plan.ring_stride().max(1);
        let num_buffers = plan.buffers().len().max(1);
        let effort_width = plan.mj().effort_width().max(1);
        let one_run = self.one_run;
        // The envs split as [`CpuBackend::parts`] says. A small step run
        // alone within the spin wait of the last step wakes the workers for
        // the next one ([`pool::step_ended`]), so small steps back to back
        // run on every thread. Every step but a tiny one notes its start and
        // end, from which the workers learn the caller's pace
        // ([`pool::step_starts`]).
        if !self.tiny {
            pool::step_starts();
        }
        // A small step that could go in parts runs alone where the last
        // trial found that faster ([`choice`]).
        let planned = self.parts();
        let either = self.small && matches!(planned, Parts::Placed(_));
        let (chunk, fanned) = match planned {
            _ if either && self.split_choice.alone() => (plan.num_envs(), false),
            Parts::Alone => (plan.num_envs(), false),
            Parts::Placed(chunk) => (chunk, true),
            Parts::Pooled(chunk) => (chunk, false),
        };
        let start = (either && self.split_choice.timing()).then(pool::now_ns);
        let serial = chunk >= plan.num_envs();
        // Per env, the fields, then the laws' values in command order
        // (`scatter`) or the passes' scratch ([`LawPasses`]).
        let scratch = match &self.gather.scatter {
            Some(_) => num_ctrl,
            None => 0,
        } + self.law_passes.as_ref().map_or(0, |passes| passes.scratch);
        let tile_stride = (5 * num_ctrl + scratch) * self.tile_envs.min(chunk);
        let lags_stride = self.tile_envs.min(chunk);
        let chunks = plan.num_envs().div_ceil(chunk);
        // Once (or when the thread count grows): a step allocates nothing.
        if self.tile.len() < chunks * tile_stride {
            self.tile.resize(chunks * tile_stride);
        }
        if self.lags.len() < chunks * lags_stride {
            self.lags.resize(chunks * lags_stride, 0);
        }
        // The step's inputs by value (`move`, here and in the parts' closure
        // below): what a worker reads to start its part then lies in one
        // stretch of this frame rather than behind a pointer per local, and
        // comes over from this core's cache in one round of loads, not one
        // per pointer (PD at 1024 × 12 on two threads: 3.0–3.3 µs a step
        // by reference, 2.8–3.2 so; BENCHMARKS.md).
        let body = move |rows: ChunkRows<'_>| -> usize {
            let (c, ((((((ctrl, ring), states), effort), flags), tile), lags)) = rows;
            let first = c * chunk;
            if one_run && inputs.one_run(first, ctrl, flags) {
                return 0;
            }
            let rows = EnvRows {
                ctrl,
                ring,
                states,
                effort,
                flags,
                lags,
            };
            inputs.tiles(first, rows, tile)
        };
        // The same chunks, on the pool or (a small step) on this thread alone.
        macro_rules! chunked {
            ($chunks:ident) => {
                out.$chunks(num_ctrl * chunk)
                    .zip(self.ring.$chunks(ring_stride * chunk))
                    .zip(self.states.$chunks(num_buffers * chunk))
                    .zip(self.effort.$chunks(effort_width * chunk))
                    .zip(self.flags.$chunks(chunk))
                    .zip(self.tile.$chunks(tile_stride))
                    .zip(self.lags.$chunks(lags_stride))
                    .enumerate()
            };
        }
        let zeroed: usize = if serial {
            chunked!(chunks_mut).map(&body).sum()
        } else if fanned {
            // One chunk per thread, each cut on the thread that runs it.
            let cuts = (
                Cut::new(out, num_ctrl * chunk),
                Cut::new(&mut self.ring, ring_stride * chunk),
                Cut::new(&mut self.states, num_buffers * chunk),
                Cut::new(&mut self.effort, effort_width * chunk),
                Cut::new(&mut self.flags, chunk),
                Cut::new(&mut self.tile, tile_stride),
                Cut::new(&mut self.lags, lags_stride),
            );
            let count = [
                cuts.0.count(),
                cuts.1.count(),
                cuts.2.count(),
                cuts.3.count(),
                cuts.4.count(),
                cuts.5.count(),
                cuts.6.count(),
            ]
            .into_iter()
            .min()
            .unwrap_or(0);
            // SAFETY: `fan_out` runs each part `c < count` once.
            pool::fan_out(count, &move |c| unsafe {
                let (ctrl, ring, states, effort) = (
                    cuts.0.chunk(c),
                    cuts.1.chunk(c),
                    cuts.2.chunk(c),
                    cuts.3.chunk(c),
                );
                let (flags, tile, lags) = (cuts.4.chunk(c), cuts.5.chunk(c), cuts.6.chunk(c));
                body((c, ((((((ctrl, ring), states), effort), flags), tile), lags)))
            })
        } else {
            pool::install(|| chunked!(par_chunks_mut).map(&body).sum())
        };
        if either {
            let ns = start.map(|start| pool::now_ns().saturating_sub(start));
            self.split_choice.note(ns);
        }
        if !self.tiny {
            pool::step_ended(serial);
        }
        self.nonfinite.clear();
        if zeroed > 0 {
            self.nonfinite.extend(
                self.flags
                    .iter()
                    .enumerate()
                    .filter(|(_, &f)| f != 0)
                    .map(|(e, _)| e as u32),
            );
        }
        self.step = self.step.wrapping_add(1);
        Ok(())
    }
}

/// Asks the CPU to bring the cache lines of the `len` values from `first`
/// into its caches (a hint: nothing on other architectures; a prefetch
/// for writing measured the same). A prefetch reads nothing and cannot
/// fault, so any address will do.
#[inline(always)]
fn prefetch(first: *const f32, len: usize) {
    // Every 64-byte line from the first value's to the last's: one per 16
    // values, then the last value's (an index loop: an iterator chain here
    // cost more than the prefetches).
    #[cfg(target_arch = "x86_64")]
    if let Some(last) = len.checked_sub(1) {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let mut k = 0;
        while k < last {
            // SAFETY: a prefetch reads nothing (any address is allowed).
            unsafe { _mm_prefetch::<_MM_HINT_T0>(first.wrapping_add(k).cast()) };
            k += 16;
        }
        // SAFETY: as above.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(first.wrapping_add(last).cast()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (first, len);
}

/// [`prefetch`] of a ring frame of `len` values, where a [`RowCopy`] of
/// `W > 0` makes it 3·`W` to 6·`W` values: then a fixed run of prefetches,
/// one per 16 values up to 6·`W` and the last value's, without the loop
/// (a prefetch past the frame is harmless).
#[inline(always)]
fn prefetch_frame<const W: usize>(first: *const f32, len: usize) {
    #[cfg(target_arch = "x86_64")]
    if W > 0 && len > 0 {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        for k in 0..(6 * W).div_ceil(16) {
            // SAFETY: a prefetch reads nothing (any address is allowed).
            unsafe { _mm_prefetch::<_MM_HINT_T0>(first.wrapping_add(16 * k).cast()) };
        }
        // SAFETY: as above.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(first.wrapping_add(len - 1).cast()) };
        return;
    }
    prefetch(first, len);
}

/// Where [`delay_row`] reads the targets it pushes and writes the
/// delayed ones, for the `n` envs of a tile.
#[derive(Clone, Copy)]
struct TileTargets {
    /// Per target field: the tile's first env's row of it, `n × nc`
    /// values (of the command, or of the tile where it holds a copy).
    pushed: [*const f32; 3],
    /// The tile, `[field][env][ctrl]`: its first three fields take each
    /// env's delayed frame.
    tile: *mut f32,
    n: usize,
    nc: usize,
}

/// One buffer's work on a tile of envs ([`StepInputs::delay_pass`]).
struct DelayPass<'p> {
    buffer: &'p DelayBuffer,
    /// The buffer's index in the plan.
    index: usize,
    keys: LagKeys,
    /// The buffer's [`Gather::pieces`].
    pieces: &'p [(usize, usize, usize)],
    /// The tile's first env, and its first row in the chunk's tables.
    e0: usize,
    local: usize,
    /// The tile's envs' flags: a flagged env neither pushes nor reads.
    flags: &'p [u8],
    /// Whether no env of the tile is flagged.
    clean: bool,
    /// Each env's lag candidate, then its ring slots ([`pack_slots`]).
    slots: &'p mut [u32],
    /// The chunk's rings and delay states, env by env.
    ring: &'p mut [f32],
    states: &'p mut [DelayState],
    targets: &'p TileTargets,
}

/// How [`delay_row`] copies a row's values between the tile or command
/// and a ring frame (and [`StepInputs::own_columns`] between a tile's rows
/// and a law's own): each piece `(c, r, len)` of [`Gather::pieces`]
/// (`len` values from row column `c` to frame column `r`), or with `W > 0`
/// the one piece `one`, of `W` to `2W` values, as one fixed-size copy where
/// it holds `W`, else two ([`ends`]): chosen once per tile, not per copy.
/// (Two copies of the same `W` values, a quadruped's group of 4 or 8
/// joints, took Spot 934 instructions per env, one 851.)
#[derive(Clone, Copy)]
struct RowCopy<'p, const W: usize> {
    pieces: &'p [(usize, usize, usize)],
    one: (usize, usize, usize),
}

impl<'p, const W: usize> RowCopy<'p, W> {
    /// The copies of `pieces`: piece by piece with `W = 0`, else of their
    /// one piece, which must hold `W` to `2W` values.
    fn new(pieces: &'p [(usize, usize, usize)]) -> Self {
        let one = match pieces {
            [one] => *one,
            _ => (0, 0, 0),
        };
        assert!(W == 0 || (pieces.len() == 1 && (W..=2 * W).contains(&one.2)));
        RowCopy { pieces, one }
    }

    /// With `push`, a row (`src`) into a frame field (`dst`); else a frame
    /// field into a row.
    ///
    /// # Safety
    /// Every piece's values lie in `src` and `dst`, which do not overlap.
    #[inline(always)]
    unsafe fn copy(self, src: *const f32, dst: *mut f32, push: bool) {
        if W == 0 {
            // SAFETY: the caller's.
            return unsafe { copy_pieces(self.pieces, src, dst, push) };
        }
        let (c, r, len) = self.one;
        let (from, to) = if push { (c, r) } else { (r, c) };
        // SAFETY: the caller's, with `W ≤ len ≤ 2W` ([`RowCopy::new`]).
        unsafe {
            if len == W {
                fixed::<W>(src.add(from), dst.add(to))
            } else {
                ends::<W>(src.add(from), dst.add(to), len)
            }
        };
    }

    /// The pieces' values from one row (`src`) into another (`dst`), each
    /// at its row column.
    ///
    /// # Safety
    /// Every piece's values lie in `src` and `dst`, which do not overlap.
    #[inline(always)]
    unsafe fn copy_row(self, src: *const f32, dst: *mut f32) {
        // SAFETY (both): the caller's, with `W ≤ len ≤ 2W` where `W > 0`.
        if W == 0 {
            for &(c, _, len) in self.pieces {
                unsafe { copy_floats(src.add(c), dst.add(c), len) };
            }
        } else {
            let (c, _, len) = self.one;
            unsafe { ends::<W>(src.add(c), dst.add(c), len) };
        }
    }
}

/// `$body` with `$rows` the [`RowCopy`] of `$pieces`: of two fixed-size
/// copies where they are one piece of 1 to 32 values, else piece by piece.
macro_rules! with_row_copy {
    ($pieces:expr, $rows:ident => $body:expr) => {{
        let pieces: &[(usize, usize, usize)] = $pieces;
        match pieces {
            [(_, _, 1)] => {
                let $rows = RowCopy::<1>::new(pieces);
                $body
            }
            [(_, _, 2..=3)] => {
                let $rows = RowCopy::<2>::new(pieces);
                $body
            }
            [(_, _, 4..=7)] => {
                let $rows = RowCopy::<4>::new(pieces);
                $body
            }
            [(_, _, 8..=16)] => {
                let $rows = RowCopy::<8>::new(pieces);
                $body
            }
            [(_, _, 17..=32)] => {
                let $rows = RowCopy::<16>::new(pieces);
                $body
            }
            _ => {
                let $rows = RowCopy::<0>::new(pieces);
                $body
            }
        }
    }};
}

/// An env's ring slots for a step of one buffer in one word: its head
/// after the push (the high half) and its delayed frame's slot. Both lie
/// below a buffer's length, at most [`sinew_core::delay::MAX_LAG`] + 1.
#[inline(always)]
fn pack_slots(head: u32, read: u32) -> u32 {
    const { assert!(sinew_core::delay::MAX_LAG < u16::MAX as u32) };
    head << 16 | read
}

/// The head and delayed frame's slot of [`pack_slots`].
#[inline(always)]
fn unpack_slots(slots: u32) -> (u32, u32) {
    (slots >> 16, slots & 0xffff)
}

/// Env row `i` of a tile (with `targets`) in one buffer of `frames` ring
/// slots over `cols` columns, after [`StepInputs::delay_state`] (its
/// `slots`, [`pack_slots`]): its targets pushed into its ring (at its head
/// after the push), its delayed frame read back into the tile, or
/// at a lag of 0 its pushed row. The copies go through pointers checked
/// once: slicing each of them took a seventh of the delayed step's
/// instructions (callgrind).
///
/// # Safety
/// `targets` points into live tables: three fields of `n × nc` values
/// from each `pushed` pointer, five from `tile`, which no other reference
/// overlaps but for the copies `pushed` may point to; `ring` points to
/// the env's ring in the buffer, [`DelayBuffer::ring_len`] values
/// (`frames × 3 × cols`) apart from the tile and the command, which no
/// reference overlaps; `rows`' pieces lie in a row of `nc` values and in a
/// field of `cols` ([`Gather::new`]).
#[inline(always)]
unsafe fn delay_row<const W: usize>(
    i: usize,
    targets: TileTargets,
    (frames, cols, rows): (u32, usize, RowCopy<'_, W>),
    ring: *mut f32,
    slots: u32,
) {
    let (head, read) = unpack_slots(slots);
    let TileTargets { n, nc, .. } = targets;
    let frame_len = 3 * cols;
    assert!(i < n && head < frames && read < frames);
    // SAFETY: a frame of `frame_len` values at a slot below the buffer's
    // length lies in the ring; each piece lies in row `i < n` of a field
    // (the caller's) and in a field of `cols`.
    unsafe {
        let frame = ring.add(head as usize * frame_len);
        for (f, src) in targets.pushed.iter().enumerate() {
            rows.copy(src.add(i * nc), frame.add(f * cols), true);
        }
        let frame = ring.add(read as usize * frame_len);
        for (f, src) in targets.pushed.iter().enumerate() {
            let dst = targets.tile.add((f * n + i) * nc);
            if read != head {
                rows.copy(frame.add(f * cols), dst, false);
            } else if src.add(i * nc) != dst.cast_const() {
                // A lag of 0 reads the frame just pushed: its values are
                // the row's (none to copy where the tile holds the row),
                // read from there rather than through the push's
                // overlapping stores, which the loads cannot forward.
                rows.copy_row(src.add(i * nc), dst);
            }
        }
    }
}

/// The values of `src`'s rows of `nc` at the columns of `pieces` (each
/// `(column, _, len)`, within a row) into the same columns of `dst`'s.
fn copy_columns(pieces: &[(usize, usize, usize)], src: &[f32], dst: &mut [f32], nc: usize) {
    assert!(pieces.iter().all(|&(c, _, len)| c + len <= nc));
    with_row_copy!(pieces, rows => {
        for (src, dst) in src.chunks_exact(nc).zip(dst.chunks_exact_mut(nc)) {
            // SAFETY: each piece lies in a row of `nc` values (asserted);
            // the rows are distinct borrows.
            unsafe { rows.copy_row(src.as_ptr(), dst.as_mut_ptr()) };
        }
    })
}

/// Copies each piece `(c, r, len)` of [`Gather::pieces`]: with `push`,
/// `len` values from `src + c` to `dst + r` (a row into a ring field),
/// else from `src + r` to `dst + c`.
///
/// # Safety
/// Every piece's values lie in `src` and `dst`, which do not overlap.
#[inline(always)]
unsafe fn copy_pieces(
    pieces: &[(usize, usize, usize)],
    src: *const f32,
    dst: *mut f32,
    push: bool,
) {
    for &(c, r, len) in pieces {
        let (from, to) = if push { (c, r) } else { (r, c) };
        // SAFETY: the caller's.
        unsafe { copy_floats(src.add(from), dst.add(to), len) };
    }
}

/// `N` values, as one unaligned load and store of an array.
///
/// # Safety
/// `N` values lie at `src` and at `dst`, which do not overlap.
#[inline(always)]
unsafe fn fixed<const N: usize>(src: *const f32, dst: *mut f32) {
    // SAFETY: the caller's.
    unsafe {
        dst.cast::<[f32; N]>()
            .write_unaligned(src.cast::<[f32; N]>().read_unaligned())
    };
}

/// The first and the last `N` of `len` (`N ≤ len ≤ 2N`) values: two
/// fixed-size copies that may overlap each other in `dst` (both write the
/// same values there).
///
/// # Safety
/// `len` values lie at `src` and at `dst`, which do not overlap.
#[inline(always)]
unsafe fn ends<const N: usize>(src: *const f32, dst: *mut f32, len: usize) {
    // SAFETY: the caller's.
    unsafe {
        fixed::<N>(src, dst);
        fixed::<N>(src.add(len - N), dst.add(len - N));
    }
}

/// Copies `len` values from `src` to `dst`, inlined: a row of up to 32
/// values (a joint group's frame field) as two fixed-size copies that may
/// overlap each other in `dst` (both write the same values there), not a
/// call into the C library's `memcpy`, whose call and size dispatch cost
/// more than copying a row of 12 or 29 values. The lengths are tried
/// shortest first, as the compiler compares them in this order: a law's
/// columns split into single ones (a Go1's calves in command order) cost
/// 324 instructions per env with the longest first, 260 this way.
///
/// # Safety
/// `len` values lie at `src` and at `dst`, which do not overlap.
#[inline(always)]
unsafe fn copy_floats(src: *const f32, dst: *mut f32, len: usize) {
    // SAFETY (each arm): the caller's, with `len` in the arm's range.
    unsafe {
        match len {
            1 => fixed::<1>(src, dst),
            2..=3 => ends::<2>(src, dst, len),
            4..=7 => ends::<4>(src, dst, len),
            8..=15 => ends::<8>(src, dst, len),
            // (A loop here is a call to `memcpy`: the compiler sees one.)
            16..=32 => ends::<16>(src, dst, len),
            0 => {}
            _ => std::ptr::copy_nonoverlapping(src, dst, len),
        }
    }
}

/// Rows of values in command order (`values`) put in ctrl order (`out`):
/// ctrl column `c` of a row takes command column `index[c]`'s value.
/// ([`Gather::scatter`]; a tile's gathered fields go through
/// [`permute_rows`] as well.)
#[inline]
fn to_ctrl_rows(index: &[u32], values: &[f32], out: &mut [f32]) {
    let nc = index.len().max(1);
    assert!(values.len() == out.len() && index.iter().all(|&j| (j as usize) < nc));
    // SAFETY: every index below the rows' length (asserted).
    unsafe { permute_rows(index, nc, &[values], out) };
}

/// Rows of `width` values (each of `fields`, as many rows each) put in the
/// order of `index` (rows of `out`, the fields' one after another): column
/// `c` of a row of `out` takes column `index[c]` of its row of its field.
/// (A tile's five fields in one call: the permute's registers and masks
/// are set up once for the five.) Rows within [`permute_width`] take
/// vector permutes: two per row up to 32 values where the CPU has AVX-512F
/// (up to 64: four and their blends), in-register permutes and blends
/// where it has AVX2 (one value at a time, the permutation cost G1 (29
/// joints) a third of its step on AVX-512 hardware); others go one value
/// at a time.
///
/// # Safety
/// Every index is below `width`; each of `fields` holds as many rows of
/// `width` values, and `out` as many rows of `index.len()` for each.
#[inline]
unsafe fn permute_rows(index: &[u32], width: usize, fields: &[&[f32]], out: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if index.len().max(width) <= permute_width(form()) {
        match form() {
            // SAFETY: `form` is AVX-512 only where the CPU has AVX-512F;
            // rows of at most 64 values ([`permute_width`]); the caller's.
            Form::Avx512 => return unsafe { to_ctrl_rows_avx512(index, width, fields, out) },
            // SAFETY: as above, with AVX2 and rows of at most 32.
            Form::Avx2 => return unsafe { to_ctrl_rows_avx2(index, width, fields, out) },
            Form::Baseline => {}
        }
    }
    // SAFETY: the caller's.
    unsafe { to_ctrl_rows_scalar(index, width, fields, out) };
}

/// The rows of each field of [`permute_rows`] beside their rows of `out`.
fn field_rows<'a>(
    fields: &'a [&'a [f32]],
    out: &'a mut [f32],
) -> impl Iterator<Item = (&'a [f32], &'a mut [f32])> {
    let per_field = out.len() / fields.len().max(1);
    assert!(per_field * fields.len() == out.len());
    fields
        .iter()
        .copied()
        .zip(out.chunks_exact_mut(per_field.max(1)))
}

/// The most values a row read or written may hold for [`permute_rows`]'s
/// vector permutes in `form` (0: none).
fn permute_width(form: Form) -> usize {
    match form {
        Form::Avx512 => 64,
        // Past 32 values (a 43-joint robot in group order: 36 permutes per
        // row of 43), permutes timed no faster than the values one by one.
        Form::Avx2 => 32,
        Form::Baseline => 0,
    }
}

/// [`to_ctrl_rows`] one value at a time, from rows of `width` values.
///
/// # Safety
/// Every index is below `width`.
unsafe fn to_ctrl_rows_scalar(index: &[u32], width: usize, fields: &[&[f32]], out: &mut [f32]) {
    let (nc, width) = (index.len().max(1), width.max(1));
    for (values, out) in field_rows(fields, out) {
        for (dst, src) in out.chunks_exact_mut(nc).zip(values.chunks_exact(width)) {
            for (d, &j) in dst.iter_mut().zip(index) {
                // SAFETY: the caller's (a row holds `width` values).
                *d = unsafe { *src.get_unchecked(j as usize) };
            }
        }
    }
}

/// [`to_ctrl_rows`] with AVX-512F, from rows of `width` values (the
/// command's, as wide as the ctrl rows or wider: a tile's fields where the
/// robot has targets no column drives): each row's (at most 32) values in
/// two registers, each half of the row in ctrl order one two-source
/// permute of them (rows of at most 16: one register, one permute); wider
/// rows, up to 64, in [`to_ctrl_rows_avx512_wide`].
///
/// # Safety
/// The CPU must have AVX-512F; `index` holds at most 64 indices, each
/// below `width ≤ 64`; `fields` and `out` as [`permute_rows`]'s.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn to_ctrl_rows_avx512(index: &[u32], width: usize, fields: &[&[f32]], out: &mut [f32]) {
    use std::arch::x86_64::{
        _mm512_loadu_epi32, _mm512_mask_storeu_ps, _mm512_maskz_loadu_ps, _mm512_permutex2var_ps,
        _mm512_permutexvar_ps,
    };
    let (nc, width) = (index.len().max(1), width.max(1));
    if nc > 32 || width > 32 {
        // SAFETY: the caller's.
        return unsafe { to_ctrl_rows_avx512_wide(index, width, fields, out) };
    }
    let mut padded = [0u32; 32];
    padded[..index.len()].copy_from_slice(index);
    // SAFETY: 32 values in `padded`.
    let [lo_index, hi_index] =
        [0, 16].map(|k| unsafe { _mm512_loadu_epi32(padded[k..].as_ptr().cast()) });
    // A row's first 16 columns and the rest, of the ctrl rows (`nc`) and of
    // the rows read (`width`).
    let mask = |n: usize| {
        let [lo, hi] = [n.min(16), n.saturating_sub(16)];
        [((1u32 << lo) - 1) as u16, ((1u32 << hi) - 1) as u16]
    };
    let ([lo_mask, hi_mask], [lo_load, hi_load]) = (mask(nc), mask(width));
    for (values, out) in field_rows(fields, out) {
        let rows = out.chunks_exact_mut(nc).zip(values.chunks_exact(width));
        // SAFETY (both loops): a masked load or store touches the lanes of
        // its mask alone, which lie in the row (`width` values read, `nc`
        // written).
        if nc <= 16 && width <= 16 {
            for (dst, src) in rows {
                unsafe {
                    let row = _mm512_maskz_loadu_ps(lo_load, src.as_ptr());
                    let row = _mm512_permutexvar_ps(lo_index, row);
                    _mm512_mask_storeu_ps(dst.as_mut_ptr(), lo_mask, row);
                }
            }
            continue;
        }
        for (dst, src) in rows {
            let (s, d) = (src.as_ptr(), dst.as_mut_ptr());
            unsafe {
                let lo = _mm512_maskz_loadu_ps(lo_load, s);
                let hi = _mm512_maskz_loadu_ps(hi_load, s.wrapping_add(16));
                _mm512_mask_storeu_ps(d, lo_mask, _mm512_permutex2var_ps(lo, lo_index, hi));
                let upper = _mm512_permutex2var_ps(lo, hi_index, hi);
                _mm512_mask_storeu_ps(d.wrapping_add(16), hi_mask, upper);
            }
        }
    }
}

/// [`to_ctrl_rows_avx512`] where a row read or written holds more than 32
/// values (at most 64: a humanoid's joints and its hands'): each row's
/// values in four registers, each 16 values of the row in ctrl order the
/// two-source permute of the first pair or of the second, by whether their
/// index is below 32. (One value at a time, 43 columns are 430 loads and
/// stores per env for the five fields.)
///
/// # Safety
/// The CPU must have AVX-512F; `index` holds at most 64 indices, each
/// below `width ≤ 64`; `fields` and `out` as [`permute_rows`]'s.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn to_ctrl_rows_avx512_wide(
    index: &[u32],
    width: usize,
    fields: &[&[f32]],
    out: &mut [f32],
) {
    use std::arch::x86_64::{
        _mm512_loadu_epi32, _mm512_mask_blend_ps, _mm512_mask_storeu_ps, _mm512_maskz_loadu_ps,
        _mm512_permutex2var_ps, _mm512_set1_epi32, _mm512_test_epi32_mask,
    };
    let (nc, width) = (index.len().max(1), width.max(1));
    assert!(nc <= 64 && width <= 64);
    let mut padded = [0u32; 64];
    padded[..index.len()].copy_from_slice(index);
    // SAFETY: 16 values of `padded` from each of 0, 16, 32, 48.
    let lanes = [0, 16, 32, 48].map(|k| unsafe { _mm512_loadu_epi32(padded[k..].as_ptr().cast()) });
    // Per 16 outputs, those whose index is 32 or more (the second pair).
    let upper = lanes.map(|lanes| _mm512_test_epi32_mask(lanes, _mm512_set1_epi32(32)));
    // Per 16 columns, the lanes in the row read and in the row written.
    let mask = |n: usize, k: usize| ((1u32 << n.saturating_sub(16 * k).min(16)) - 1) as u16;
    let loads = [0, 1, 2, 3].map(|k| mask(width, k));
    let stores = [0, 1, 2, 3].map(|k| mask(nc, k));
    let written = nc.div_ceil(16);
    for (values, out) in field_rows(fields, out) {
        for (dst, src) in out.chunks_exact_mut(nc).zip(values.chunks_exact(width)) {
            let (s, d) = (src.as_ptr(), dst.as_mut_ptr());
            // SAFETY: a masked load or store touches the lanes of its mask
            // alone, which lie in the row (`width` values read, `nc`
            // written).
            unsafe {
                let v = [
                    _mm512_maskz_loadu_ps(loads[0], s),
                    _mm512_maskz_loadu_ps(loads[1], s.wrapping_add(16)),
                    _mm512_maskz_loadu_ps(loads[2], s.wrapping_add(32)),
                    _mm512_maskz_loadu_ps(loads[3], s.wrapping_add(48)),
                ];
                for k in 0..written {
                    let lo = _mm512_permutex2var_ps(v[0], lanes[k], v[1]);
                    let hi = _mm512_permutex2var_ps(v[2], lanes[k], v[3]);
                    let row = _mm512_mask_blend_ps(upper[k], lo, hi);
                    _mm512_mask_storeu_ps(d.wrapping_add(16 * k), stores[k], row);
                }
            }
        }
    }
}

/// [`to_ctrl_rows`] with AVX2, from rows of `width` values (as
/// [`to_ctrl_rows_avx512`]): each row's (at most 32) values in up to four
/// 8-lane registers; each 8 values of the row in ctrl order are one
/// in-register permute (`vpermps`) of each register, blended by which
/// register their index falls in ([`permute_rows_avx2`], its register
/// counts constants of the loop).
///
/// # Safety
/// As [`to_ctrl_rows_avx512`], with AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn to_ctrl_rows_avx2(index: &[u32], width: usize, fields: &[&[f32]], out: &mut [f32]) {
    let (nc, width) = (index.len().max(1), width.max(1));
    // The loop with its register counts (of the rows read, of the rows
    // written) known: unrolled, with its registers kept in registers. (With
    // the counts read at run time, Go1's 12 columns took 58 instructions
    // per env.)
    // SAFETY (each call): the caller's, with rows of at most `8·S` values
    // read and `8·K` written.
    macro_rules! written {
        ($s:literal) => {
            match nc.div_ceil(8) {
                1 => unsafe { permute_rows_avx2::<$s, 1>(index, width, fields, out) },
                2 => unsafe { permute_rows_avx2::<$s, 2>(index, width, fields, out) },
                3 => unsafe { permute_rows_avx2::<$s, 3>(index, width, fields, out) },
                4 => unsafe { permute_rows_avx2::<$s, 4>(index, width, fields, out) },
                _ => unsafe { to_ctrl_rows_scalar(index, width, fields, out) },
            }
        };
    }
    match width.div_ceil(8) {
        1 => written!(1),
        2 => written!(2),
        3 => written!(3),
        4 => written!(4),
        // SAFETY: the caller's.
        _ => unsafe { to_ctrl_rows_scalar(index, width, fields, out) },
    }
}

/// [`to_ctrl_rows_avx2`] from rows of `width ≤ 8·S` values into rows of
/// `index.len() ≤ 8·K`. A row whose registers would reach past the end of
/// `values` or `out` (the last rows) takes masked loads and stores.
///
/// # Safety
/// As [`to_ctrl_rows_avx2`], with `width ≤ 8·S`, `index.len() ≤ 8·K` and
/// `S, K ≤ 4`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn permute_rows_avx2<const S: usize, const K: usize>(
    index: &[u32],
    width: usize,
    fields: &[&[f32]],
    out: &mut [f32],
) {
    use std::arch::x86_64::{
        _mm256_and_si256, _mm256_blendv_ps, _mm256_castsi256_ps, _mm256_cmpgt_epi32,
        _mm256_loadu_ps, _mm256_loadu_si256, _mm256_maskload_epi32, _mm256_maskload_ps,
        _mm256_maskstore_ps, _mm256_or_si256, _mm256_permutevar8x32_ps, _mm256_set1_epi32,
        _mm256_setr_epi32, _mm256_setzero_ps, _mm256_setzero_si256, _mm256_slli_epi32,
        _mm256_srli_epi32, _mm256_storeu_ps,
    };
    let (nc, width) = (index.len().max(1), width.max(1));
    assert!(S <= 4 && K <= 4 && width <= 8 * S && nc <= 8 * K);
    // Of 8 lanes from `at` of something `len` long: all ones within it,
    // zero past its end (the masks of the last indices, and of the last
    // rows' loads and stores).
    let iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    let within = |len: usize, at: usize| {
        _mm256_cmpgt_epi32(_mm256_set1_epi32(len.saturating_sub(at) as i32), iota)
    };
    // Per 8 outputs: the lane within its register (bits 0–2, all `vpermps`
    // reads) with bit 3 of the index in the sign bit, and bit 4 of the index
    // in the sign bit of a second register: the masks `vblendvps` reads to
    // pick registers 1 and 3 over 0 and 2, then 2–3 over 0–1. (A mask per
    // register, 16 with the 4 lane registers for 32 values, did not fit the
    // 16 registers: 9 were loaded from the stack for each row.)
    let mut lanes = [_mm256_setzero_si256(); K];
    let mut upper = [_mm256_setzero_ps(); K];
    for k in 0..K {
        // The 8 indices from `8·k` (those past the end 0).
        let from = index.as_ptr().wrapping_add(8 * k);
        // SAFETY: 8 indices from `8·k` (or the masked load of those within
        // `index`).
        let at = unsafe {
            if 8 * k + 8 <= index.len() {
                _mm256_loadu_si256(from.cast())
            } else {
                _mm256_maskload_epi32(from.cast(), within(index.len(), 8 * k))
            }
        };
        let bit3 = _mm256_slli_epi32::<31>(_mm256_srli_epi32::<3>(at));
        lanes[k] = _mm256_or_si256(_mm256_and_si256(at, _mm256_set1_epi32(7)), bit3);
        upper[k] = _mm256_castsi256_ps(_mm256_slli_epi32::<31>(_mm256_srli_epi32::<4>(at)));
    }
    // One row: the `width` values from `src` permuted into the `nc` from
    // `dst`, in registers of `8·S` and `8·K` values; each 8 outputs the
    // permutes of the `S` registers, blended.
    // SAFETY (each use): `src` has room for `8·S` values and `dst` for
    // `8·K`.
    macro_rules! row {
        ($src:expr, $dst:expr, $load:ident, $store:ident) => {{
            let (src, dst): (*const f32, *mut f32) = ($src, $dst);
            let mut v = [_mm256_setzero_ps(); S];
            for (r, v) in v.iter_mut().enumerate() {
                *v = unsafe { $load!(src.wrapping_add(8 * r), r) };
            }
            for k in 0..K {
                let mut p = v.map(|v| _mm256_permutevar8x32_ps(v, lanes[k]));
                let masks = [_mm256_castsi256_ps(lanes[k]), upper[k]];
                // Pairs blended level by level (an odd one out carried up)
                // until one register is left: `S` is a constant, so is the
                // whole tree.
                let (mut n, mut level) = (S, 0);
                while n > 1 {
                    for i in 0..n / 2 {
                        p[i] = _mm256_blendv_ps(p[2 * i], p[2 * i + 1], masks[level]);
                    }
                    if n % 2 == 1 {
                        p[n / 2] = p[n - 1];
                    }
                    (n, level) = (n.div_ceil(2), level + 1);
                }
                unsafe { $store!(dst.wrapping_add(8 * k), k, p[0]) };
            }
        }};
    }
    macro_rules! load {
        ($at:expr, $r:expr) => {
            _mm256_loadu_ps($at)
        };
    }
    macro_rules! store {
        ($at:expr, $k:expr, $o:expr) => {
            _mm256_storeu_ps($at, $o)
        };
    }
    // The last rows' masks: of the values in a row, and of its outputs.
    let (reads, writes): ([_; S], [_; K]) = (
        std::array::from_fn(|r| within(width, 8 * r)),
        std::array::from_fn(|k| within(nc, 8 * k)),
    );
    macro_rules! masked_load {
        ($at:expr, $r:expr) => {
            _mm256_maskload_ps($at, reads[$r])
        };
    }
    macro_rules! masked_store {
        ($at:expr, $k:expr, $o:expr) => {
            _mm256_maskstore_ps($at, writes[$k], $o)
        };
    }
    let room = |len: usize, width: usize, regs: usize| match len.checked_sub(8 * regs) {
        Some(past) => past / width + 1,
        None => 0,
    };
    // Each field's first rows, whose registers stay within its rows read and
    // written: their registers may reach into the next rows, whose values
    // are only read and whose outputs are written after this row's.
    // (Pointers checked once, and no call in the function: the C library's
    // copies would take the registers above to the stack.)
    let rows = fields.first().map_or(0, |values| values.len() / width);
    let fast = room(rows * width, width, S)
        .min(room(rows * nc, nc, K))
        .min(rows);
    for (values, out) in field_rows(fields, out) {
        assert!(values.len() == rows * width && out.len() == rows * nc);
        let (src, dst) = (values.as_ptr(), out.as_mut_ptr());
        for row in 0..fast {
            row!(
                src.wrapping_add(row * width),
                dst.wrapping_add(row * nc),
                load,
                store
            );
        }
        // The last rows, whose registers would reach past the end: masked
        // loads and stores of their own values only.
        for row in fast..rows {
            row!(
                src.wrapping_add(row * width),
                dst.wrapping_add(row * nc),
                masked_load,
                masked_store
            );
        }
    }
}

/// `[plane][env][target]` planes in ctrl order, `[plane][env][ctrl]`: each
/// ctrl column takes its command column's value.
fn to_ctrl_order(plan: &Plan, planes: &[f32], out: &mut [f32]) {
    let columns = plan.ctrl_columns();
    let rows = planes.chunks_exact(plan.num_targets().max(1));
    for (dst, src) in out.chunks_exact_mut(columns.len().max(1)).zip(rows) {
        for (d, column) in dst.iter_mut().zip(columns) {
            *d = src[column.cmd_column];
        }
    }
}

/// Every env's rows of a `[slot][ctrl]` table of defaults: `[slot][env][ctrl]`.
fn per_env(defaults: &[f32], num_envs: usize, num_ctrl: usize) -> Table {
    let mut table = Table::zeros(defaults.len() * num_envs);
    let rows = defaults.chunks_exact(num_ctrl.max(1));
    for (plane, row) in table
        .chunks_exact_mut((num_envs * num_ctrl).max(1))
        .zip(rows)
    {
        for env in plane.chunks_exact_mut(num_ctrl.max(1)) {
            env.copy_from_slice(row);
        }
    }
    table
}

/// Everything one env's step reads besides its own rows.
struct StepInputs<'a> {
    plan: &'a Plan,
    cmd: [&'a [f32]; 5],
    /// [`CpuBackend::params`].
    params: &'a [f32],
    /// `[plane][env][ctrl]`.
    inputs: &'a [f32],
    /// `[slot][env][ctrl]`, read for an env's law and written by its commit.
    state: SlotRows,
    /// `[slot][env][ctrl]`: the state the laws compute ([`RunLaw::next`]).
    next: SlotRows,
    /// `[plane][env][ctrl]`: the output planes.
    outputs: SlotRows,
    /// [`CpuBackend::commits`].
    commits: &'a [(usize, usize, usize)],
    step: u32,
    /// How a tile is filled.
    gather: &'a Gather,
    /// [`CpuBackend::tile_envs`].
    tile_envs: usize,
    /// [`CpuBackend::mj_wide`].
    mj_wide: bool,
    /// Whether a tile's MuJoCo stage runs for all its envs at once
    /// ([`MjStage::tile_forces`](sinew_core::plan::MjStage::tile_forces)).
    mj_tiled: bool,
    /// Whether a tile's learned networks run for all its envs at once
    /// ([`LearnedStage::rows_efforts`](sinew_core::net::LearnedStage::rows_efforts)).
    learned_tiled: bool,
    /// [`CpuBackend::law_passes`].
    law_passes: Option<&'a LawPasses>,
}

/// Non-zero when some value is NaN or ±inf (all exponent bits set). An
/// integer OR-reduction, so it vectorizes (a `bool` fold of `is_finite` did not).
#[inline]
fn nonfinite_bits(values: &[f32]) -> u32 {
    const EXP: u32 = 0x7f80_0000;
    values
        .iter()
        .fold(0, |acc, v| acc | u32::from(v.to_bits() & EXP == EXP))
}

/// One env's side of its per-env stages: its learned state in the state
/// tables ([`LearnedState`]); for the MuJoCo stage ([`MjDriver`]), its
/// activations in the state tables and `act_dot`s in their output plane,
/// its law members' raw forces in their output plane, and their laws
/// evaluated again.
struct EnvStage<'s, 'a> {
    step: &'s StepInputs<'a>,
    /// The env's first element in a `[slot][env][ctrl]` plane.
    row: usize,
    rows: &'s [&'a [f32]; 5],
    ring: &'s [f32],
    states: &'s [DelayState],
}

impl LearnedState for EnvStage<'_, '_> {
    #[inline(always)]
    fn get(&self, k: usize, c: usize) -> f32 {
        // SAFETY: this env's rows are touched by this thread alone.
        unsafe { self.step.state.span(k, self.row + c, 1)[0] }
    }

    #[inline(always)]
    fn set(&mut self, k: usize, c: usize, value: f32) {
        // SAFETY: as above.
        unsafe { self.step.next.span_mut(k, self.row + c, 1)[0] = value }
    }
}

/// A tile's learned state in the state tables ([`LearnedRows`]), from
/// element `at` of a `[slot][env][ctrl]` plane.
struct TileState<'s, 'a> {
    step: &'s StepInputs<'a>,
    at: usize,
}

impl LearnedRows for TileState<'_, '_> {
    #[inline(always)]
    fn row(&self, k: usize, at: usize, len: usize) -> &[f32] {
        // SAFETY: the tile's rows are touched by this thread alone.
        unsafe { self.step.state.span(k, self.at + at, len) }
    }

    #[inline(always)]
    fn row_mut(&mut self, k: usize, at: usize, len: usize) -> &mut [f32] {
        // SAFETY: as above; `next` is not `state`.
        unsafe { self.step.next.span_mut(k, self.at + at, len) }
    }
}

impl MjDriver for EnvStage<'_, '_> {
    fn act(&self, column: usize) -> f32 {
        // SAFETY: this env's rows are touched by this thread alone.
        unsafe { self.step.state.span(MJ_ACT_SLOT, self.row + column, 1)[0] }
    }

    fn set_act(&mut self, column: usize, act_dot: f32, act_next: f32) {
        let plan = self.step.plan;
        let at = self.row + column;
        // SAFETY: as above.
        unsafe {
            self.step.next.span_mut(MJ_ACT_SLOT, at, 1)[0] = act_next;
            (self.step.outputs).span_mut(plan.mj().act_dot_plane as usize, at, 1)[0] = act_dot;
        }
    }

    fn act_rows(&mut self, columns: Range<usize>) -> (&[f32], &mut [f32], &mut [f32]) {
        let (at, n) = (self.row + columns.start, columns.len());
        let plane = self.step.plan.mj().act_dot_plane as usize;
        // SAFETY: this env's rows are touched by this thread alone; the
        // three are rows of three tables.
        unsafe {
            (
                self.step.state.span(MJ_ACT_SLOT, at, n),
                self.step.next.span_mut(MJ_ACT_SLOT, at, n),
                self.step.outputs.span_mut(plane, at, n),
            )
        }
    }

    fn raw_force(&self, column: usize) -> f32 {
        let plane = self.step.plan.mj().raw_plane as usize;
        // SAFETY: this env's rows are touched by this thread alone.
        unsafe { self.step.outputs.span(plane, self.row + column, 1)[0] }
    }

    fn rescale(&mut self, column: usize, scale: f32) -> f32 {
        let plan = self.step.plan;
        let run = (plan.runs().iter())
            .find(|r| (r.ctrl_start..r.ctrl_start + r.len).contains(&column))
            .expect("every ctrl column is in a run");
        let mut value = [0.0];
        self.step.run(
            &run.element(column - run.ctrl_start),
            self.row,
            self.rows,
            self.ring,
            self.states,
            &mut value,
            scale,
            Check::Nothing,
        );
        value[0]
    }
}

impl StepInputs<'_> {
    /// Env `env` after its laws (`ctrl` its row, `ring` and `states` its
    /// delay rows, its targets already pushed): the learned networks and
    /// the MuJoCo stage where the plan has them, then the non-finite check
    /// of everything the env outputs. Returns whether all is finite: then
    /// the caller commits its state ([`Self::commit`]).
    #[allow(clippy::too_many_arguments, reason = "one env's rows of every table")]
    fn finish_env(
        &self,
        env: usize,
        ctrl: &mut [f32],
        ring: &[f32],
        states: &[DelayState],
        effort: &mut [f32],
    ) -> bool {
        let (t, num_ctrl) = (self.plan.num_targets(), self.plan.num_ctrl());
        let rows = self.cmd.map(|field| &field[env * t..(env + 1) * t]);
        let (plane, row) = (self.plan.num_envs() * num_ctrl, env * num_ctrl);
        let param = |slot: usize| &self.params[slot * plane + row..][..num_ctrl];
        let mut stage = EnvStage {
            step: self,
            row,
            rows: &rows,
            ring,
            states,
        };
        let learned = self.plan.learned();
        if !learned.is_empty() && !self.learned_tiled {
            let limits = LEARNED_LIMIT_SLOTS.map(param);
            learned.env_efforts(rows[3], rows[4], limits, ctrl, &mut stage);
        }
        let mj = self.plan.mj();
        let mut finite = true;
        let mut checked_effort: &[f32] = &[];
        if self.mj_tiled {
            // The tile's stage ran (its next activations are checked, as
            // `env_forces` checks them).
            checked_effort = effort;
        } else if mj.runs_per_step() {
            finite = mj.env_forces(
                rows[3],
                rows[4],
                ctrl,
                effort,
                param,
                self.mj_wide,
                &mut stage,
            );
            checked_effort = effort;
        }
        finite && self.outputs_finite(env, ctrl, checked_effort)
    }

    /// Zeroes env `env`'s outputs: its ctrl row, output planes and joint
    /// efforts (its state stays).
    fn zero_env(&self, env: usize, ctrl: &mut [f32], effort: &mut [f32]) {
        ctrl.fill(0.0);
        self.zero_outputs(env);
        effort.fill(0.0);
    }

    /// Non-zero when some value of env `env`'s rows of the input planes is
    /// NaN or ±inf.
    fn input_bits(&self, env: usize) -> u32 {
        let nc = self.plan.num_ctrl();
        let plane = self.plan.num_envs() * nc;
        (0..self.plan.input_planes().len()).fold(0, |acc, k| {
            acc | nonfinite_bits(&self.inputs[k * plane + env * nc..][..nc])
        })
    }

    /// Zeroes env `env`'s rows of the output planes.
    fn zero_outputs(&self, env: usize) {
        let nc = self.plan.num_ctrl();
        for k in 0..self.plan.output_planes().len() {
            // SAFETY: this env's rows are touched by this thread alone.
            unsafe { self.outputs.span_mut(k, env * nc, nc) }.fill(0.0);
        }
    }

    /// Commits the state the laws computed for envs `e0..e0 + n`, whose
    /// outputs are finite.
    fn commit(&self, e0: usize, n: usize) {
        let nc = self.plan.num_ctrl();
        for &(slots, start, len) in self.commits {
            // A run over every column: the envs' rows are one stretch.
            let (stretches, len) = if len == nc { (1, n * nc) } else { (n, len) };
            for k in 0..slots {
                for e in e0..e0 + stretches {
                    let at = e * nc + start;
                    // SAFETY: as above; `next` and `state` are two tables.
                    let next = unsafe { self.next.span(k, at, len) };
                    unsafe { self.state.span_mut(k, at, len) }.copy_from_slice(next);
                }
            }
        }
    }

    /// [`CpuBackend::one_run`]'s chunk: envs `first..` (one per entry of
    /// `flags`) as one run over the caller's rows, when every input of the
    /// chunk is finite and so is every output. Returns false, having
    /// written nothing the tiles would not rewrite, when some value is not:
    /// the caller then steps the chunk as tiles.
    fn one_run(&self, first: usize, ctrl: &mut [f32], flags: &mut [u8]) -> bool {
        let envs = flags.len();
        let t = self.plan.num_targets();
        let rows = self.cmd.map(|field| &field[first * t..(first + envs) * t]);
        let whole = Run {
            len: envs * t,
            ..self.plan.runs()[0]
        };
        // The checks ride along in the law's pass ([`RunLaw::check`]).
        let suspect = self.run(&whole, first * t, &rows, &[], &[], ctrl, 1.0, Check::All);
        if suspect {
            return false;
        }
        // Written only when set: a chunk's flags share a line with the
        // next chunk's, which another thread runs. (An OR over them all,
        // which vectorizes; `any` stops early and went a byte at a time.)
        if flags.iter().fold(0, |any, &flag| any | flag) != 0 {
            flags.fill(0);
        }
        true
    }

    /// A chunk's tiles: envs `first..` (one per entry of `rows.flags`), in
    /// tiles of [`CpuBackend::tile_envs`] rows. Each tile's five command
    /// fields are gathered into ctrl order (`tile`, `[field][env][ctrl]`),
    /// so the checks see exactly the claimed values; an env with a
    /// non-finite one is zeroed and flagged without its delay push. Each
    /// other env pushes its targets into its delay rings and reads its
    /// delayed frames back into the tile ([`Self::delay_row`]). Then the
    /// laws, over every env of the tile, those at fault too (zeroed after):
    /// one run over the tile when a single law covers every column, its
    /// checks in the same pass when every env is finite (an undelayed
    /// tile's command values too, unless the plan has input planes: checked
    /// env by env only when that pass finds something); one pass per law
    /// when several laws cover it ([`LawPasses`]); else the gathered runs
    /// env by env. Then each env's per-env stages, output checks and
    /// commits ([`Self::finish_env`]); a tile run whole without per-env
    /// stages commits at once, and so does a tile whose stages all ran for
    /// the whole tile (or that has none) when its outputs are all finite.
    /// Returns the number of envs zeroed.
    fn tiles(&self, first: usize, rows: EnvRows<'_>, tile: &mut [f32]) -> usize {
        let plan = self.plan;
        let nc = plan.num_ctrl();
        let ring_stride = plan.ring_stride();
        let num_buffers = plan.buffers().len();
        let effort_width = plan.mj().effort_width().max(1);
        let runs = plan.gathered_runs();
        let whole_tile = matches!(runs, [run] if run.len == nc);
        let has_inputs = !plan.input_planes().is_empty();
        let per_env_stage = plan.mj().runs_per_step() || !plan.learned().is_empty();
        let mut zeroed = 0;
        for (k, tile_flags) in rows.flags.chunks_mut(self.tile_envs).enumerate() {
            let (n, local) = (tile_flags.len(), k * self.tile_envs);
            let e0 = first + local;
            // The five fields, then (`scatter`) the laws' values.
            let (tile, staged) = tile.split_at_mut(5 * n * nc);
            self.gather_tile(e0, n, tile);
            // Flags the envs with a non-finite command value; true if any.
            let check_inputs = |tile: &[f32], flags: &mut [u8]| {
                let mut any = false;
                for (i, flag) in flags.iter_mut().enumerate() {
                    let bits = (0..5).fold(self.input_bits(e0 + i), |acc, f| {
                        acc | nonfinite_bits(self.tile_row(tile, f, n, e0, i))
                    });
                    *flag = u8::from(bits != 0);
                    any |= bits != 0;
                }
                any
            };
            // An env at fault must not push into its rings, so a delayed
            // tile (like one run env by env, or with input planes) is
            // checked before its laws: each field over the whole tile
            // first, env by env only when that finds something. An
            // undelayed tile run whole is checked in the law's pass, and
            // env by env only when that pass finds something.
            let checked_first = num_buffers > 0 || !whole_tile || has_inputs;
            let any_bad = checked_first
                && if self.tile_bits(e0, n, tile) == 0 {
                    tile_flags.fill(0);
                    false
                } else {
                    check_inputs(tile, tile_flags)
                };
            if num_buffers > 0 {
                // Buffer by buffer: the tile's lag candidates in one
                // vectorized loop, then each env's push and lag draw run
                // `AHEAD` envs before its copies, fetching the ring frames
                // it will write and read, so the copies find them on the
                // way (several envs' misses in flight at once, not one
                // env's at a time). Each env pushes its rows of the
                // command or, where copied, of the tile, and its delayed
                // frame goes into the tile's target fields (pointers all
                // from the one `&mut` tile: the reads overwrite what the
                // pushes read).
                assert!(5 * n * nc <= tile.len());
                let at = tile.as_mut_ptr();
                let targets = TileTargets {
                    pushed: std::array::from_fn(|f| match self.gather.copied[f] {
                        // SAFETY: field `f < 5` of the tile (asserted).
                        true => unsafe { at.add(f * n * nc) }.cast_const(),
                        false => self.cmd[f][e0 * nc..(e0 + n) * nc].as_ptr(),
                    }),
                    tile: at,
                    n,
                    nc,
                };
                let buffers = plan.buffers().iter().zip(&self.gather.lag_keys);
                for (b, ((buffer, &keys), pieces)) in buffers.zip(&self.gather.pieces).enumerate() {
                    // Each env's lag candidate, then (from its push and lag
                    // draw on) the slot of its delayed frame.
                    let slots = &mut rows.lags[..n];
                    (buffer.params).candidates(keys, e0 as u32, self.step, slots);
                    self.delay_pass(DelayPass {
                        buffer,
                        index: b,
                        keys,
                        pieces,
                        e0,
                        local,
                        flags: tile_flags,
                        clean: !any_bad,
                        slots,
                        ring: rows.ring,
                        states: rows.states,
                        targets: &targets,
                    });
                }
            }
            // Delayed targets are the tile's; the rest where `copied` says.
            let g: [&[f32]; 5] = std::array::from_fn(|f| {
                if f < 3 && num_buffers > 0 {
                    &tile[f * n * nc..(f + 1) * n * nc]
                } else {
                    self.tile_field(tile, f, n, e0)
                }
            });
            let out = &mut rows.ctrl[local * nc..(local + n) * nc];
            let mut done = false;
            // The laws run over the whole tile, its envs at fault too: their
            // values and output planes are zeroed below, their next state is
            // not committed. (Env by env, a tile with one env at fault cost a
            // G1 of two laws 1 572 instructions per env against 173.)
            if let Some(passes) = self.law_passes {
                // A tile of several laws: one pass per law, in ctrl order or
                // in command order to be put in ctrl order (`scatter`).
                match &self.gather.scatter {
                    Some(_) => {
                        let (values, scratch) = staged.split_at_mut(n * nc);
                        self.law_passes(passes, e0, &g, values, scratch);
                    }
                    None => self.law_passes(passes, e0, &g, out, staged),
                }
            } else {
                // The laws' values: in ctrl order, or in command order to be
                // put in ctrl order (`scatter`).
                let values = match &self.gather.scatter {
                    Some(_) => &mut staged[..n * nc],
                    None => &mut *out,
                };
                if whole_tile {
                    let whole = Run {
                        len: n * nc,
                        ..runs[0]
                    };
                    // A tile checked first has only its outputs left to check,
                    // and one with envs at fault has them checked env by env.
                    let check = match (any_bad, checked_first) {
                        (true, _) => Check::Nothing,
                        (false, true) => Check::Outputs,
                        (false, false) => Check::All,
                    };
                    let suspect = self.run(&whole, e0 * nc, &g, &[], &[], values, 1.0, check);
                    done = !any_bad && !suspect && !per_env_stage;
                    if !done && !checked_first {
                        if suspect {
                            check_inputs(tile, tile_flags);
                        } else {
                            tile_flags.fill(0);
                        }
                    }
                } else {
                    let rows = values.chunks_exact_mut(nc).zip(tile_flags.iter());
                    for (i, (values, flag)) in rows.enumerate() {
                        if *flag != 0 {
                            continue;
                        }
                        let env = e0 + i;
                        let row = g.map(|field| &field[i * nc..(i + 1) * nc]);
                        for run in runs {
                            let o = &mut values[run.ctrl_start..][..run.len];
                            self.run(run, env * nc, &row, &[], &[], o, 1.0, Check::Nothing);
                        }
                    }
                }
            }
            if let Some(index) = &self.gather.scatter {
                to_ctrl_rows(index, &staged[..n * nc], out);
            }
            if done {
                self.commit(e0, n);
                tile_flags.fill(0);
                continue;
            }
            if self.learned_tiled {
                self.learned_tile(e0, out);
            }
            if self.mj_tiled {
                let effort = &mut rows.effort[local * effort_width..(local + n) * effort_width];
                self.tile_stage(e0, out, effort, [g[3], g[4]]);
            }
            // After a tile's own stage, the per-env stages are only their
            // checks: the whole tile's at once (env by env, they took a
            // third of the MuJoCo law's step), env by env only when that
            // finds something.
            let effort: &[f32] = match self.mj_tiled {
                true => &rows.effort[local * effort_width..(local + n) * effort_width],
                false => &[],
            };
            // (Without per-env stages, an env's are its checks alone.)
            let stages_done = (plan.learned().is_empty() || self.learned_tiled)
                && (!plan.mj().runs_per_step() || self.mj_tiled);
            if stages_done
                && tile_flags.iter().all(|&flag| flag == 0)
                && self.outputs_finite(e0, out, effort)
            {
                self.commit(e0, n);
                continue;
            }
            for (i, (out, flag)) in out
                .chunks_exact_mut(nc)
                .zip(tile_flags.iter_mut())
                .enumerate()
            {
                let (env, r) = (e0 + i, local + i);
                let effort = &mut rows.effort[r * effort_width..][..effort_width];
                if *flag == 0
                    && !self.finish_env(
                        env,
                        out,
                        &rows.ring[r * ring_stride..][..ring_stride],
                        &rows.states[r * num_buffers..][..num_buffers],
                        effort,
                    )
                {
                    *flag = 1;
                }
                if *flag != 0 {
                    self.zero_env(env, out, effort);
                }
                zeroed += usize::from(*flag);
            }
            // Each stretch of finite envs commits at once: for the LSTM,
            // one env at a time was 128 copies of a row each.
            let mut finite = 0;
            for stretch in tile_flags.split(|&flag| flag != 0) {
                if !stretch.is_empty() {
                    self.commit(e0 + finite, stretch.len());
                }
                finite += stretch.len() + 1;
            }
        }
        zeroed
    }

    /// The laws of the envs from `e0` whose tile fields are `g` and value
    /// rows `out` (in ctrl order, or in command order under
    /// [`Gather::scatter`]), one pass of each law ([`LawPasses`]): the first over
    /// the whole rows into `out`, each other over the whole rows into
    /// `scratch`, whose values at its own columns are then copied into
    /// `out`, or a costly law over its own columns alone
    /// ([`StepInputs::own_columns`]).
    fn law_passes(
        &self,
        passes: &LawPasses,
        e0: usize,
        g: &[&[f32]; 5],
        out: &mut [f32],
        scratch: &mut [f32],
    ) {
        let (len, nc) = (out.len(), self.plan.num_ctrl());
        for (k, law) in passes.laws.iter().enumerate() {
            if let Some(own) = &law.own {
                self.own_columns(law, own, e0, g, out, scratch);
                continue;
            }
            let run = Run { len, ..law.run };
            let values = if k == 0 {
                &mut *out
            } else {
                &mut scratch[..len]
            };
            self.run(&run, e0 * nc, g, &[], &[], values, 1.0, Check::Nothing);
            if k > 0 {
                // (Per value, a compare with the pass of its column took
                // G1 with motor wrists 98 of its 704 instructions per env.)
                copy_columns(&law.pieces, &scratch[..len], out, nc);
            }
        }
    }

    /// The costly or stateful `law` of the envs from `e0` whose tile fields
    /// are `g` and ctrl rows `out`, over its `own` columns alone: their
    /// fields', parameters', state's and input planes' values gathered into
    /// rows of their own in `scratch`, the law run over those rows, its
    /// values, next state and output planes put back.
    fn own_columns(
        &self,
        law: &LawPass,
        own: &OwnColumns,
        e0: usize,
        g: &[&[f32]; 5],
        out: &mut [f32],
        scratch: &mut [f32],
    ) {
        let run = &law.run;
        with_row_copy!(&law.pieces, rows => self.own_columns_in(run, own, rows, e0, g, out, scratch))
    }

    /// [`StepInputs::own_columns`] with the law's columns' copies `rows`.
    #[inline(always)]
    #[allow(clippy::too_many_arguments, reason = "one tile's rows of every table")]
    fn own_columns_in<const W: usize>(
        &self,
        law: &Run,
        own: &OwnColumns,
        rows: RowCopy<'_, W>,
        e0: usize,
        g: &[&[f32]; 5],
        out: &mut [f32],
        scratch: &mut [f32],
    ) {
        let nc = self.plan.num_ctrl();
        let (n, at, plane) = (out.len() / nc, e0 * nc, self.plan.num_envs() * nc);
        let (w, m) = (own.width, out.len() / nc * own.width);
        let (fields, rest) = scratch.split_at_mut(5 * m);
        let (params, rest) = rest.split_at_mut(own.params * m);
        let (state, rest) = rest.split_at_mut(own.state * m);
        let (next, rest) = rest.split_at_mut(own.state * m);
        let group = &self.plan.groups()[law.group];
        let (inputs, rest) = rest.split_at_mut(self.plan.input_planes().len() * m);
        let (outputs, values) = rest.split_at_mut(self.plan.output_planes().len() * m);
        let values = &mut values[..m];
        // Row `i` of `n` rows of `nc` values (`src`) at the law's columns
        // into row `i` of rows of `w` (`dst`), or (`back`) the other way.
        let copy = |src: &[f32], dst: &mut [f32], back: bool| {
            let (src_row, dst_row) = if back { (w, nc) } else { (nc, w) };
            assert!(src.len() >= n * src_row && dst.len() >= n * dst_row);
            let (mut src, mut dst) = (src.as_ptr(), dst.as_mut_ptr());
            for _ in 0..n {
                // SAFETY: each piece lies in a row of `nc` and in one of
                // `w` ([`LawPasses::new`]), and each of the `n` rows in
                // both slices (asserted), which are distinct borrows.
                unsafe { rows.copy(src, dst, !back) };
                (src, dst) = (src.wrapping_add(src_row), dst.wrapping_add(dst_row));
            }
        };
        for (field, gathered) in g.iter().zip(fields.chunks_exact_mut(m)) {
            copy(field, gathered, false);
        }
        for (k, gathered) in params.chunks_exact_mut(m).enumerate() {
            copy(&self.params[k * plane + at..], gathered, false);
        }
        // (Not the output planes: a law writes every output it declares.)
        // SAFETY (the spans): these envs' rows are touched by this thread
        // alone; `state`, `next` and `outputs` are three tables.
        for (k, gathered) in state.chunks_exact_mut(m).enumerate() {
            copy(unsafe { self.state.span(k, at, n * nc) }, gathered, false);
        }
        for &p in &group.input_planes {
            copy(&self.inputs[p * plane + at..], &mut inputs[p * m..], false);
        }
        let [pt, vt, et, pos, vel] = std::array::from_fn(|f| &fields[f * m..(f + 1) * m]);
        let run = Run { len: m, ..*law };
        let targets = [pt, vt, et];
        // The law over the gathered tables: `n` envs of `w` columns, each
        // plane at its index in the plan.
        let gathered = StepInputs {
            inputs,
            state: SlotRows::new(state, n, w),
            next: SlotRows::new(next, n, w),
            outputs: SlotRows::new(outputs, n, w),
            ..*self
        };
        let params = (&*params, m, 0);
        gathered.law(
            &run,
            params,
            targets,
            [pos, vel],
            values,
            1.0,
            Check::Nothing,
        );
        copy(values, out, true);
        // SAFETY (the spans): as above.
        for (k, computed) in next.chunks_exact(m).enumerate() {
            copy(computed, unsafe { self.next.span_mut(k, at, n * nc) }, true);
        }
        for &p in &group.output_planes {
            let computed = &outputs[p * m..(p + 1) * m];
            copy(
                computed,
                unsafe { self.outputs.span_mut(p, at, n * nc) },
                true,
            );
        }
    }

    /// The MuJoCo stage of the envs from `e0` whose ctrl rows are `ctrl`
    /// and joint-effort rows `effort`, when [`StepInputs::mj_tiled`]; envs
    /// at fault included (their outputs are zeroed after, their state not
    /// committed). `tile` is their position and velocity in ctrl order.
    fn tile_stage(&self, e0: usize, ctrl: &mut [f32], effort: &mut [f32], tile: [&[f32]; 2]) {
        let nc = self.plan.num_ctrl();
        let (at, len) = (e0 * nc, ctrl.len());
        let plane = self.plan.num_envs() * nc;
        let mj = self.plan.mj();
        let ctrl_order = self.gather.mj_ctrl_order;
        // The command's rows of the same envs (of every target).
        let t = self.plan.num_targets();
        let cmd = e0 * t..e0 * t + len / nc * t;
        let cmd = [&self.cmd[3][cmd.clone()], &self.cmd[4][cmd]];
        // SAFETY: these envs' rows are touched by this thread alone; the
        // three spans are rows of three tables.
        let rows = unsafe {
            MjTileRows {
                ctrl,
                effort,
                pos: if ctrl_order { tile[0] } else { cmd[0] },
                vel: if ctrl_order { tile[1] } else { cmd[1] },
                ctrl_order,
                act: self.state.span(MJ_ACT_SLOT, at, len),
                act_next: self.next.span_mut(MJ_ACT_SLOT, at, len),
                act_dot: self.outputs.span_mut(mj.act_dot_plane as usize, at, len),
            }
        };
        mj.tile_forces(
            rows,
            cmd,
            |slot| &self.params[slot * plane + at..][..len],
            self.mj_wide,
        );
    }

    /// True when every output of the envs from `e0` whose ctrl rows are
    /// `ctrl` is finite: those rows, their joint-effort rows `effort`
    /// (empty without a MuJoCo stage), their next activations after a
    /// tile's MuJoCo stage ([`StepInputs::mj_tiled`]) and their rows of the
    /// output planes; in one pass in the widest vectors. For one env
    /// ([`Self::finish_env`]), or for a tile after its own stage.
    fn outputs_finite(&self, e0: usize, ctrl: &[f32], effort: &[f32]) -> bool {
        let nc = self.plan.num_ctrl();
        let (at, len) = (e0 * nc, ctrl.len());
        sinew_core::simd::widest(
            #[inline(always)]
            || {
                let mut bits = nonfinite_bits(ctrl);
                if self.mj_tiled {
                    // Every column's slot: the actuators' activations, and
                    // in other columns another kind's state or nothing
                    // (stricter than the general path, which checks no
                    // law's state; only a non-finite state differs).
                    // SAFETY: these envs' rows are touched by this thread alone.
                    bits |= nonfinite_bits(unsafe { self.next.span(MJ_ACT_SLOT, at, len) });
                }
                bits |= nonfinite_bits(effort);
                for k in 0..self.plan.output_planes().len() {
                    // SAFETY: as above.
                    bits |= nonfinite_bits(unsafe { self.outputs.span(k, at, len) });
                }
                bits == 0
            },
        )
    }

    /// The learned networks of the envs from `e0` whose ctrl rows are
    /// `ctrl`, when [`StepInputs::learned_tiled`]; envs at fault included
    /// (their outputs are zeroed after, their state not committed).
    fn learned_tile(&self, e0: usize, ctrl: &mut [f32]) {
        let nc = self.plan.num_ctrl();
        let (at, len) = (e0 * nc, ctrl.len());
        let plane = self.plan.num_envs() * nc;
        let limits = LEARNED_LIMIT_SLOTS.map(|slot| &self.params[slot * plane + at..][..len]);
        let mut state = TileState { step: self, at };
        let [pos, vel] = [3, 4].map(|f| &self.cmd[f][at..at + len]);
        (self.plan.learned()).rows_efforts(pos, vel, limits, ctrl, &mut state);
    }

    /// Env `e0 + i`'s values of field `f` in ctrl order: its row of the
    /// tile (`n` envs from `e0`) or, where the tile holds no copy of the
    /// field ([`Gather::copied`]), of the command ([`Self::tile_field`]'s
    /// row, sliced once).
    #[inline(always)]
    fn tile_row<'t>(
        &'t self,
        tile: &'t [f32],
        f: usize,
        n: usize,
        e0: usize,
        i: usize,
    ) -> &'t [f32] {
        let nc = self.plan.num_ctrl();
        if self.gather.copied[f] {
            &tile[(f * n + i) * nc..][..nc]
        } else {
            &self.cmd[f][(e0 + i) * nc..][..nc]
        }
    }

    /// The `n` envs from `e0`'s values of field `f` in ctrl order: their
    /// rows of the tile or, where it holds no copy ([`Gather::copied`]), of
    /// the command.
    #[inline]
    fn tile_field<'t>(&'t self, tile: &'t [f32], f: usize, n: usize, e0: usize) -> &'t [f32] {
        let nc = self.plan.num_ctrl();
        if self.gather.copied[f] {
            &tile[f * n * nc..(f + 1) * n * nc]
        } else {
            &self.cmd[f][e0 * nc..(e0 + n) * nc]
        }
    }

    /// Zero when every command value of the `n` envs from `e0`, and every
    /// value of their rows of the input planes, is finite; non-zero when
    /// some may not be (the caller then checks env by env).
    fn tile_bits(&self, e0: usize, n: usize, tile: &[f32]) -> u32 {
        let nc = self.plan.num_ctrl();
        let plane = self.plan.num_envs() * nc;
        // One pass over the five fields, as the law's own check ([`zeroed_bits`];
        // an overflowing sum only sends the caller to its exact checks).
        let [f0, f1, f2, f3, f4] = std::array::from_fn(|f| self.tile_field(tile, f, n, e0));
        let sums = sinew_core::simd::widest(
            #[inline(always)]
            || {
                let mut sums = 0u32;
                for ((((&a, &b), &c), &d), &e) in f0.iter().zip(f1).zip(f2).zip(f3).zip(f4) {
                    sums |= zeroed_bits(((a + b) + (c + d)) + e);
                }
                sums
            },
        );
        let fields = u32::from(any_nonfinite(sums));
        (0..self.plan.input_planes().len()).fold(fields, |acc, k| {
            acc | nonfinite_bits(&self.inputs[k * plane + e0 * nc..][..n * nc])
        })
    }

    /// Fills `tile` (`[field][env][ctrl]`, `n` envs from `e0`) with the
    /// command values of each ctrl column that [`Gather::copied`] asks for.
    fn gather_tile(&self, e0: usize, n: usize, tile: &mut [f32]) {
        let (t, nc) = (self.plan.num_targets(), self.plan.num_ctrl());
        let Some(index) = &self.gather.index else {
            for (f, dst) in tile.chunks_exact_mut(n * nc).enumerate() {
                if self.gather.copied[f] {
                    dst.copy_from_slice(&self.cmd[f][e0 * t..(e0 + n) * t]);
                }
            }
            return;
        };
        // Rows in and out within the vector permutes' width (mjlab's robots
        // in group order, a robot's joints beside its tendons and sites),
        // where the CPU has AVX-512F: each field's rows in two vector
        // permutes each (up to 32 values; four, and their blends, up to
        // 64). (One value at a time, the five fields took 290 of the 1 245
        // instructions per env of the G1's tiled MuJoCo step at 1024 × 29,
        // and a fifth of its time on this form.)
        let width = permute_width(form());
        let permutes = (1..=width).contains(&nc) && t <= width;
        if permutes && form() == Form::Avx512 {
            return self.permute_tile(e0, n, tile);
        }
        // Runs of consecutive command columns (a robot whose columns are
        // its joints but not its tendons or sites, a PD on all joints but
        // one): each run's rows copied whole. (Value by value, 29 servos on
        // a robot with a site took 445 instructions per env in the copies;
        // AVX2's permutes counted 870 per env in all against 873 so, and
        // timed no faster.)
        if let Some(runs) = &self.gather.runs {
            // Every run within a row of the command and of the tile.
            assert!(runs
                .iter()
                .all(|&(c, j, len)| c + len <= nc && j + len <= t));
            for (f, dst) in tile.chunks_exact_mut(n * nc).enumerate() {
                let src = &self.cmd[f][e0 * t..(e0 + n) * t];
                assert!(dst.len() == n * nc && src.len() == n * t);
                let (src, dst) = (src.as_ptr(), dst.as_mut_ptr());
                for i in 0..n {
                    for &(c, j, len) in runs {
                        // SAFETY: row `i < n` of each, and the run within
                        // its rows (asserted); the command and the tile do
                        // not overlap.
                        unsafe {
                            std::ptr::copy_nonoverlapping(
                                src.add(i * t + j),
                                dst.add(i * nc + c),
                                len,
                            )
                        };
                    }
                }
            }
            return;
        }
        // Otherwise AVX2's permutes and blends, up to four per 8 values
        // (the Panda's 8 ctrl columns of its 10 targets: 557 instructions
        // per env, 640 one value at a time).
        if permutes {
            return self.permute_tile(e0, n, tile);
        }
        // All five fields per (env, column): the column's index is loaded
        // once for five independent copies, without bounds checks.
        let index = &index[..nc];
        let (f0, rest) = tile.split_at_mut(n * nc);
        let (f1, rest) = rest.split_at_mut(n * nc);
        let (f2, rest) = rest.split_at_mut(n * nc);
        let (f3, f4) = rest.split_at_mut(n * nc);
        // (A plan without ctrl columns has empty fields: no rows.)
        let width = nc.max(1);
        let rows = (f0.chunks_exact_mut(width).zip(f1.chunks_exact_mut(width)))
            .zip(f2.chunks_exact_mut(width).zip(f3.chunks_exact_mut(width)))
            .zip(f4.chunks_exact_mut(width));
        for (i, (((d0, d1), (d2, d3)), d4)) in rows.enumerate() {
            let src = self.cmd.map(|field| &field[(e0 + i) * t..(e0 + i + 1) * t]);
            let dst = (d0.iter_mut().zip(d1.iter_mut()))
                .zip(d2.iter_mut().zip(d3.iter_mut()))
                .zip(d4.iter_mut().zip(index));
            for (((d0, d1), (d2, d3)), (d4, &j)) in dst {
                let j = j as usize;
                // SAFETY: every index is below `t`, the rows' length
                // ([`Gather::new`]).
                unsafe {
                    *d0 = *src[0].get_unchecked(j);
                    *d1 = *src[1].get_unchecked(j);
                    *d2 = *src[2].get_unchecked(j);
                    *d3 = *src[3].get_unchecked(j);
                    *d4 = *src[4].get_unchecked(j);
                }
            }
        }
    }

    /// [`StepInputs::gather_tile`] by [`permute_rows`] of the five fields'
    /// rows.
    fn permute_tile(&self, e0: usize, n: usize, tile: &mut [f32]) {
        let t = self.plan.num_targets();
        let index = self.gather.index.as_deref().expect("a gathered tile");
        let fields = self.cmd.map(|field| &field[e0 * t..(e0 + n) * t]);
        // SAFETY: rows of `t` values in and (the tile's five fields) of `nc`
        // out, every index below `t` ([`Gather::new`]).
        unsafe { permute_rows(index, t, &fields, tile) };
    }

    /// One buffer's pushes, lag draws and delayed frames for a tile's envs
    /// (see [`StepInputs::tiles`]), in the widest vector form the CPU
    /// has, with the buffer's row copies chosen once ([`RowCopy`]): each
    /// is then a few wide loads and stores.
    fn delay_pass(&self, pass: DelayPass<'_>) {
        with_row_copy!(pass.pieces, rows => self.delay_pass_wide(pass, rows))
    }

    /// [`StepInputs::delay_pass`] with its copies `rows`, in the widest
    /// form. (Written out rather than through `sinew_core::simd::widest`,
    /// whose closure left delay_dc at 1024 × 12 slower, 18.3–22.2 µs against
    /// 17.0–18.1, as it did the law loops; BENCHMARKS.md.)
    #[inline(always)]
    fn delay_pass_wide<const W: usize>(&self, pass: DelayPass<'_>, rows: RowCopy<'_, W>) {
        match form() {
            // SAFETY: `form` is AVX-512 only where the CPU has AVX-512F.
            #[cfg(target_arch = "x86_64")]
            Form::Avx512 => unsafe { self.delay_pass_avx512(pass, rows) },
            // SAFETY: `form` is AVX2 only where the CPU has AVX2.
            #[cfg(target_arch = "x86_64")]
            Form::Avx2 => unsafe { self.delay_pass_avx2(pass, rows) },
            _ => self.delay_pass_in(pass, rows),
        }
    }

    /// [`StepInputs::delay_pass`] with AVX-512F enabled.
    ///
    /// # Safety
    /// The CPU must have AVX-512F.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    unsafe fn delay_pass_avx512<const W: usize>(&self, pass: DelayPass<'_>, rows: RowCopy<'_, W>) {
        self.delay_pass_in(pass, rows)
    }

    /// [`StepInputs::delay_pass`] with AVX2 enabled.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn delay_pass_avx2<const W: usize>(&self, pass: DelayPass<'_>, rows: RowCopy<'_, W>) {
        self.delay_pass_in(pass, rows)
    }

    /// [`StepInputs::delay_pass`]'s loop: each env's push and lag draw run
    /// `AHEAD` envs before its copies. The tile's rings and states are
    /// bounds-checked once, then reached through pointers (a check per env
    /// and access was a tenth of the pass's instructions).
    #[inline(always)]
    fn delay_pass_in<const W: usize>(&self, pass: DelayPass<'_>, rows: RowCopy<'_, W>) {
        let DelayPass {
            buffer,
            index: b,
            keys,
            e0,
            local,
            flags,
            clean,
            slots,
            ring,
            states,
            targets,
            ..
        } = pass;
        let ring_stride = self.plan.ring_stride();
        let num_buffers = self.plan.buffers().len();
        let n = flags.len();
        // Read from locals in the loop, which its stores cannot change.
        let (params, cols, targets) = (buffer.params, buffer.cmd_columns.len(), *targets);
        // Every env of the tile has its ring in the buffer and its state.
        assert!(buffer.ring_offset + buffer.ring_len() <= ring_stride);
        assert!((local + n) * ring_stride <= ring.len() && slots.len() >= n);
        assert!(b < num_buffers && (local + n) * num_buffers <= states.len());
        // The tile's first env's ring and state (read only at the envs
        // asserted above).
        let ring = (ring.as_mut_ptr()).wrapping_add(local * ring_stride + buffer.ring_offset);
        let states = (states.as_mut_ptr()).wrapping_add(local * num_buffers + b);
        let slots = &mut slots[..n];
        // Env `j`'s push and lag draw (from its lag candidate in `slots`,
        // replaced by its ring slots).
        macro_rules! push {
            ($j:expr) => {{
                let j = $j;
                // SAFETY: env `j < n`'s state (asserted); no other reference to it.
                let state = unsafe { &mut *states.wrapping_add(j * num_buffers) };
                let ring = ring.wrapping_add(j * ring_stride);
                let env = (e0 + j) as u32;
                slots[j] = self.delay_state::<W>((env, &params, cols), keys, ring, state, slots[j]);
            }};
        }
        // Env `i`'s copies.
        macro_rules! read {
            ($i:expr) => {{
                let i = $i;
                // SAFETY: env `i < n`'s ring (asserted), which no reference
                // overlaps; `targets` is of this tile's fields and command
                // rows, which outlive the loop.
                unsafe {
                    let ring = ring.wrapping_add(i * ring_stride);
                    delay_row(i, targets, (params.len, cols, rows), ring, slots[i]);
                }
            }};
        }
        // A tile with no env flagged (nearly every one) runs its first
        // `AHEAD` pushes, then pushes and copies together, then the last
        // copies, with no flag or index test per env: Spot (two buffers)
        // counted 492 instructions per env so against 535 in the one loop
        // below, delay_dc 276 against 304 at 1024 × 12 (BENCHMARKS.md).
        if clean {
            debug_assert!(flags.iter().all(|&f| f == 0));
            let ahead = AHEAD.min(n);
            for j in 0..ahead {
                push!(j);
            }
            for j in ahead..n {
                push!(j);
                read!(j - ahead);
            }
            for i in n - ahead..n {
                read!(i);
            }
            return;
        }
        for j in 0..n + AHEAD {
            if j < n && flags[j] == 0 {
                push!(j);
            }
            if let Some(i) = j.checked_sub(AHEAD).filter(|&i| flags[i] == 0) {
                read!(i);
            }
        }
    }

    /// Env `env`'s push and lag draw in a buffer of `params` over `cols`
    /// columns (`keys` its lag keys, `ring` the start of the env's ring in
    /// it, `state` its state, `candidate` its lag candidate), with a
    /// prefetch of each ring frame that [`delay_row`] then writes and
    /// reads; returns its head and delayed frame's slot ([`pack_slots`]).
    #[inline(always)]
    fn delay_state<const W: usize>(
        &self,
        (env, params, cols): (u32, &DelayParams, usize),
        keys: LagKeys,
        ring: *const f32,
        state: &mut DelayState,
        candidate: u32,
    ) -> u32 {
        let frame_len = 3 * cols;
        let slot = params.push(state);
        params.update_lag_drawn(state, keys, env, self.step, || candidate);
        let read = params.read_slot_pushed(state);
        for slot in [slot, read] {
            prefetch_frame::<W>(ring.wrapping_add(slot as usize * frame_len), frame_len);
        }
        pack_slots(slot, read)
    }

    /// One law over one contiguous run of one env (or, on the whole-chunk
    /// and whole-tile paths, of envs whose rows are one stretch):
    /// `table_row` is the run's row in every `[slot][env][ctrl]` table,
    /// `out` the run's values, `scale` the force coupling's
    /// [`LawIo::force_scale`](sinew_core::LawIo::force_scale).
    /// Returns whether some value `check` asks for may be non-finite
    /// ([`RunLaw::check`]).
    #[inline(always)]
    #[allow(clippy::too_many_arguments, reason = "one env's rows of every table")]
    fn run(
        &self,
        run: &Run,
        table_row: usize,
        rows: &[&[f32]; 5],
        ring: &[f32],
        states: &[DelayState],
        out: &mut [f32],
        scale: f32,
        check: Check,
    ) -> bool {
        let n = run.len;
        let m = run.cmd_start;
        let targets: [&[f32]; 3] = match run.targets {
            TargetSource::Cmd => [0, 1, 2].map(|f| &rows[f][m..m + n]),
            TargetSource::Ring { buffer, column } => {
                let buf = &self.plan.buffers()[buffer];
                let cols = buf.cmd_columns.len();
                let slot = buf.params.read_slot(&states[buffer]) as usize;
                let frame = &ring[buf.ring_offset + slot * 3 * cols..][..3 * cols];
                [0, 1, 2].map(|f| &frame[f * cols + column..][..n])
            }
        };
        let plane = self.plan.num_envs() * self.plan.num_ctrl();
        let params = (self.params, plane, table_row + run.ctrl_start);
        let state = [&rows[3][m..m + n], &rows[4][m..m + n]];
        self.law(run, params, targets, state, out, scale, check)
    }

    /// [`StepInputs::run`]'s law over the values it has found: the run's
    /// parameters from element `at` of each `plane` of `params`, its
    /// targets, positions and velocities.
    #[inline(always)]
    #[allow(clippy::too_many_arguments, reason = "one run's rows of every table")]
    fn law(
        &self,
        run: &Run,
        (params, plane, at): (&[f32], usize, usize),
        targets: [&[f32]; 3],
        [pos, vel]: [&[f32]; 2],
        out: &mut [f32],
        scale: f32,
        check: Check,
    ) -> bool {
        let group = &self.plan.groups()[run.group];
        run.kind.visit(RunLaw {
            params,
            plane,
            at,
            state: self.state,
            next: self.next,
            targets,
            pos,
            vel,
            field: run.field,
            inputs: self.inputs,
            input_planes: &group.input_planes,
            output_planes: &group.output_planes,
            outputs: self.outputs,
            data: self.plan.data_of(group),
            out: &mut out[..run.len],
            scale,
            check,
        })
    }
}

/// [`CpuBackend::par_rows_mut`] for any backend: `op` over the env rows of
/// `tables` (each `(num_envs, width)` row-major) in one even part per
/// thread of rayon's pool (the global one, or the one this thread runs
/// in), on whichever thread takes it. For a GPU backend, whose upload reads
/// the rows wherever they were written.
///
/// # Errors
/// [`Error::RowsShape`] for a table whose length is not a multiple of
/// `num_envs`; `op` then runs on none.
pub fn par_rows_mut<const N: usize>(
    num_envs: usize,
    tables: [&mut [f32]; N],
    op: impl Fn(std::ops::Range<usize>, [&mut [f32]; N]) + Sync,
) -> Result<(), Error> {
    let chunk = rows::split(num_envs, rayon::current_num_threads());
    rows::run(tables, num_envs, rows::Placement::Rayon(chunk), &op)
}

impl Backend for CpuBackend {
    fn plan(&self) -> &Plan {
        &self.plan
    }

    fn step(&mut self, cmd: &dyn AsCmd) -> Result<(), Error> {
        let mut ctrl = std::mem::take(&mut self.ctrl);
        let result = self.step_rows(cmd, &mut ctrl);
        self.ctrl = ctrl;
        self.efforts_current = self.plan.mj().runs_per_step();
        result
    }

    fn step_into(&mut self, cmd: &dyn AsCmd, out: &mut [f32]) -> Result<(), Error> {
        self.step_rows(cmd, out)?;
        let mj = self.plan.mj();
        if !mj.is_empty() && !mj.runs_per_step() {
            // `self.ctrl` is not this step's: the efforts now, from `out`.
            let width = mj.effort_width();
            let rows = self.effort.chunks_exact_mut(width);
            for (row, ctrl) in rows.zip(out.chunks_exact(self.plan.num_ctrl())) {
                mj.law_efforts(ctrl, row);
            }
            self.efforts_current = true;
        }
        Ok(())
    }

    fn nonfinite_envs(&mut self) -> Result<&[u32], Error> {
        Ok(&self.nonfinite)
    }

    fn read_ctrl(&mut self, out: &mut [f32]) -> Result<(), Error> {
        self.plan.check_ctrl_len(out.len())?;
        out.copy_from_slice(&self.ctrl);
        Ok(())
    }

    fn reset(&mut self, env_ids: EnvIds<'_>) -> Result<(), Error> {
        self.plan
            .reset_delay_states(env_ids, &mut self.states, self.step)?;
        self.plan.reset_state(env_ids, &mut self.state);
        Ok(())
    }

    fn read_joint_effort(&mut self, out: &mut [f32]) -> Result<(), Error> {
        self.plan.check_joint_effort_len(out.len())?;
        let mj = self.plan.mj();
        if mj.effort_width() == 0 {
            out.fill(0.0);
        } else if self.efforts_current {
            out.copy_from_slice(&self.effort);
        } else {
            // Sums of ctrl values: computed when asked, not every step.
            let rows = out.chunks_exact_mut(mj.effort_width());
            for (row, ctrl) in rows.zip(self.ctrl.chunks_exact(self.plan.num_ctrl())) {
                mj.law_efforts(ctrl, row);
            }
        }
        Ok(())
    }

    fn set_param_at(
        &mut self,
        param: ParamRef,
        env_ids: EnvIds<'_>,
        values: Values<'_>,
    ) -> Result<(), Error> {
        let order = self.gather.param_order();
        let (g, slot) = (self.plan).write_param(param, env_ids, values, &mut self.params, order)?;
        self.mj_wide |= self.plan.widens_mj(g, slot);
        Ok(())
    }

    fn read_param(&mut self, group: &str, name: &str, out: &mut [f32]) -> Result<(), Error> {
        let order = self.gather.param_order();
        self.plan.read_param(group, name, &self.params, out, order)
    }

    fn set_state(
        &mut self,
        group: &str,
        name: &str,
        env_ids: EnvIds<'_>,
        values: Values<'_>,
    ) -> Result<(), Error> {
        self.plan
            .write_state(group, name, env_ids, values, &mut self.state)?;
        Ok(())
    }

    fn read_state(&mut self, group: &str, name: &str, out: &mut [f32]) -> Result<(), Error> {
        self.plan.read_state(group, name, &self.state, out)
    }

    fn set_input(&mut self, name: &str, values: &[f32]) -> Result<(), Error> {
        let k = self.plan.check_input(name, values.len())?;
        let plane = self.plan.num_envs() * self.plan.num_ctrl();
        to_ctrl_order(&self.plan, values, &mut self.inputs[k * plane..][..plane]);
        Ok(())
    }

    fn read_output(&mut self, name: &str, out: &mut [f32]) -> Result<(), Error> {
        let k = self.plan.check_output(name, out.len())?;
        out.copy_from_slice(&self.outputs[k * out.len()..][..out.len()]);
        Ok(())
    }

    fn set_lags(&mut self, group: &str, env_ids: EnvIds<'_>, lags: Lags<'_>) -> Result<(), Error> {
        let states = &mut self.states;
        self.plan
            .write_lags(group, env_ids, lags, |i, lag| states[i].lag = lag)
    }

    fn read_delay_states(&mut self, group: &str, out: &mut [DelayState]) -> Result<(), Error> {
        let b = self
            .plan
            .per_env_buffer_of(group, "the delay-state buffer", out.len())?;
        let nb = self.plan.buffers().len();
        for (o, row) in out.iter_mut().zip(self.states.chunks_exact(nb)) {
            *o = row[b];
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every vector form of [`to_ctrl_rows`] the CPU has gives the scalar
    /// form's values, which take each ctrl column's value from its own
    /// column of the rows read: for every pair of widths each form takes
    /// (rows read narrower than, as wide as and wider than the rows
    /// written: a tile's fields where two ctrl columns drive one target, or
    /// where the robot has targets no column drives) and a few row counts.
    #[test]
    fn vector_permutations_match_the_scalar_one() {
        // Each form the CPU has; each safe to call with indices below the
        // rows' width, which is at most its permute width.
        type Permute = unsafe fn(&[u32], usize, &[&[f32]], &mut [f32]);
        #[allow(unused_mut, reason = "the vector forms are x86-64's")]
        let mut forms: Vec<(&str, Permute, usize)> = vec![("scalar", to_ctrl_rows_scalar, 64)];
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                forms.push(("AVX2", to_ctrl_rows_avx2, permute_width(Form::Avx2)));
            }
            if std::arch::is_x86_feature_detected!("avx512f") {
                forms.push(("AVX-512", to_ctrl_rows_avx512, permute_width(Form::Avx512)));
            }
        }
        for width in 1..=64usize {
            for nc in 1..=64usize {
                // Reversed and rotated over the rows read: columns past the
                // ctrl rows' width, and across registers.
                let index: Vec<u32> = (0..nc)
                    .map(|c| ((2 * width + 3 - c % width) % width) as u32)
                    .collect();
                // One field and two (the second's values negated).
                for (rows, num_fields) in [(1, 1), (2, 1), (5, 1), (1, 2), (3, 2)] {
                    let fields: Vec<Vec<f32>> = (0..num_fields)
                        .map(|f| {
                            let sign = if f == 0 { 1.0 } else { -1.0 };
                            (0..rows * width).map(|v| sign * (v as f32 + 0.5)).collect()
                        })
                        .collect();
                    let want: Vec<f32> = (fields.iter())
                        .flat_map(|values| {
                            (0..rows * nc).map(|k| values[k / nc * width + index[k % nc] as usize])
                        })
                        .collect();
                    let fields: Vec<&[f32]> = fields.iter().map(Vec::as_slice).collect();
                    let taken = forms.iter().filter(|f| f.2 >= width.max(nc));
                    for &(form, permute, _) in taken {
                        // A register's worth past the rows: left alone.
                        let mut got = vec![f32::NAN; want.len() + 16];
                        let (rows_out, past) = got.split_at_mut(want.len());
                        // SAFETY: the CPU has the form's features; every
                        // index is below `width`, within the form's rows.
                        unsafe { permute(&index, width, &fields, rows_out) };
                        let what = format!(
                            "{form}, {nc} columns of rows of {width}, {rows} rows of \
                             {num_fields} fields"
                        );
                        assert_eq!(rows_out, want, "{what}");
                        assert!(past.iter().all(|v| v.is_nan()), "{what}: past the rows");
                    }
                }
            }
        }
    }
}
