//! The compiled learned-network stage of a plan: every learned column's
//! network as flat weight tables, and the per-env evaluation both backends
//! run (WGSL: `shaders/net.wgsl` and `shaders/learned.wgsl`).
//!
//! A column's history or recurrent state is its group's state slots in the
//! plan's `[slot][env][ctrl]` state tables (the kinds' `state_slots`). An
//! MLP column with `H` frames of history (its largest tap + 1) keeps
//! [`MLP_FRESH`] (1 after a reset), then its past position errors (slot
//! `lag`, for lags `1..H`), then its past velocities (slot `H − 1 + lag`).
//! A step reads lag 0 from its own frame and lag `t` from its slot (or, while
//! fresh, the frame itself or 0 per [`HistoryInit`]), and writes the history
//! shifted by one. An LSTM column keeps, per layer `l`, the hidden state at
//! slots `2·l·hidden + u` and the cell state after it (0 after a reset).
//! The state advances with the env's other state: only when the env's
//! outputs are finite, so a zeroed env's networks read as if the step never
//! happened.

use bytemuck::{Pod, Zeroable};

use crate::kinds::{
    dc_motor_clip, Activation, ActuatorCfg, Dense, HistoryInit, InputOrder, LstmNet, MLP_FRESH,
    NET_MAX_WIDTH,
};
use crate::plan::{CtrlColumn, GroupInfo};

/// `NetLayer.kind` of a dense layer.
pub const NET_DENSE: u32 = 0;
/// `NetLayer.kind` of an LSTM layer.
pub const NET_LSTM: u32 = 1;
/// `LearnedColumn.kind` of an MLP column.
pub const LEARNED_MLP: u32 = 0;
/// `LearnedColumn.kind` of an LSTM column.
pub const LEARNED_LSTM: u32 = 1;

/// One layer in the weight table (WGSL: eight words of the words table).
///
/// Dense: `y[o] = act(Σ_i x[i]·W[i][o] + b[o])`, the sum in input order from
/// 0, with `W` stored input-major (`[inputs][outputs]`). LSTM: gate rows
/// `r = q·hidden + u` (q = input, forget, cell, output gate),
/// `pre[r] = (Σ_i x[i]·Wih[i][r] + bih[r]) + (Σ_j h[j]·Whh[j][r] + bhh[r])`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Pod, Zeroable)]
#[repr(C)]
pub struct NetLayer {
    /// [`NET_DENSE`] or [`NET_LSTM`].
    pub kind: u32,
    /// Input width.
    pub inputs: u32,
    /// Output width (dense) or hidden size (LSTM).
    pub outputs: u32,
    /// [`Activation`] code (dense).
    pub activation: u32,
    /// Offset of `W` (dense) or `Wih` (LSTM) in the weight table.
    pub weight: u32,
    /// Offset of `b` or `bih`.
    pub bias: u32,
    /// Offset of `Whh` (LSTM).
    pub weight_hh: u32,
    /// Offset of `bhh` (LSTM).
    pub bias_hh: u32,
}

/// One learned ctrl column (WGSL: fifteen words of the words table).
#[derive(Debug, Clone, Copy, PartialEq, Default, Pod, Zeroable)]
#[repr(C)]
pub struct LearnedColumn {
    /// Its ctrl column (the law stage leaves the delayed position target there).
    pub ctrl_column: u32,
    /// Its command column (`pos`, `vel`).
    pub cmd_column: u32,
    /// [`LEARNED_MLP`] or [`LEARNED_LSTM`].
    pub kind: u32,
    /// Index of its network's first layer in [`LearnedStage::layers`].
    pub first_layer: u32,
    /// Layers in all (LSTM layers first, then the dense head).
    pub num_layers: u32,
    /// LSTM layers among them.
    pub lstm_layers: u32,
    /// Hidden size (LSTM).
    pub hidden: u32,
    /// Frames of history (MLP): the largest tap + 1.
    pub history_len: u32,
    /// Offset of its taps in [`LearnedStage::taps`].
    pub taps_offset: u32,
    /// Number of taps.
    pub num_taps: u32,
    /// [`InputOrder`] code.
    pub input_order: u32,
    /// [`HistoryInit`] code.
    pub history_init: u32,
    /// Scale of the position errors.
    pub pos_scale: f32,
    /// Scale of the velocities.
    pub vel_scale: f32,
    /// Scale of the output.
    pub torque_scale: f32,
}

/// Every learned column of a plan, compiled.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LearnedStage {
    /// Every weight and bias, in the layouts of [`NetLayer`].
    pub weights: Vec<f32>,
    /// Every network's layers; a group's columns share its network.
    pub layers: Vec<NetLayer>,
    /// One per learned ctrl column, in ctrl-column order.
    pub columns: Vec<LearnedColumn>,
    /// The MLP columns' taps.
    pub taps: Vec<u32>,
}

/// One env's learned state as the driver keeps it in the plan's state
/// tables: slot `k` of ctrl column `c`.
pub trait LearnedState {
    /// Slot `k` of column `c` before this step.
    fn get(&self, k: usize, c: usize) -> f32;
    /// Writes slot `k` of column `c` for after this step (committed with
    /// the env's other state, only when its outputs are finite).
    fn set(&mut self, k: usize, c: usize, value: f32);
}

impl LearnedStage {
    /// True when the plan has no learned column.
    pub fn is_empty(&self) -> bool {
        self.columns.is_empty()
    }

    /// The most units any layer takes in or puts out (an LSTM layer: its
    /// input or hidden size); 0 without networks.
    pub fn widest(&self) -> usize {
        (self.layers.iter())
            .map(|layer| layer.inputs.max(layer.outputs) as usize)
            .max()
            .unwrap_or(0)
    }

    /// Compiles the learned columns of a plan's groups, in ctrl order.
    pub(crate) fn compile(infos: &[GroupInfo], ctrl: &[CtrlColumn]) -> LearnedStage {
        let mut stage = LearnedStage::default();
        // (group, first layer, layers, lstm layers, taps offset) of each
        // network compiled so far: a group's columns share its network and
        // taps.
        let mut compiled: Vec<(usize, u32, u32, u32, u32)> = Vec::new();
        for (c, column) in ctrl.iter().enumerate() {
            let actuator = &infos[column.group].cfg.actuator;
            if !matches!(
                actuator,
                ActuatorCfg::LearnedMlp(_) | ActuatorCfg::LstmNet(_)
            ) {
                continue;
            }
            let (first_layer, num_layers, lstm_layers, taps_offset) =
                match compiled.iter().find(|n| n.0 == column.group) {
                    Some(&(_, first, n, l, taps)) => (first, n, l, taps),
                    None => {
                        let taps = stage.taps.len() as u32;
                        let first = stage.layers.len() as u32;
                        let lstm_layers = match actuator {
                            ActuatorCfg::LearnedMlp(cfg) => {
                                stage.push_dense(cfg.network.layers());
                                stage.taps.extend(&cfg.taps);
                                0
                            }
                            ActuatorCfg::LstmNet(cfg) => stage.push_lstm(&cfg.network),
                            _ => unreachable!("only learned kinds are compiled"),
                        };
                        let n = stage.layers.len() as u32 - first;
                        compiled.push((column.group, first, n, lstm_layers, taps));
                        (first, n, lstm_layers, taps)
                    }
                };
            let mut col = LearnedColumn {
                ctrl_column: c as u32,
                cmd_column: column.cmd_column as u32,
                first_layer,
                num_layers,
                lstm_layers,
                ..LearnedColumn::default()
            };
            match actuator {
                ActuatorCfg::LearnedMlp(cfg) => {
                    col.kind = LEARNED_MLP;
                    col.history_len = cfg.history_len() as u32;
                    col.taps_offset = taps_offset;
                    col.num_taps = cfg.taps.len() as u32;
                    col.input_order = cfg.input_order as u32;
                    col.history_init = cfg.history_init as u32;
                    (col.pos_scale, col.vel_scale, col.torque_scale) =
                        (cfg.pos_scale, cfg.vel_scale, cfg.torque_scale);
                }
                ActuatorCfg::LstmNet(cfg) => {
                    col.kind = LEARNED_LSTM;
                    col.hidden = cfg.network.hidden() as u32;
                }
                _ => unreachable!("only learned kinds are compiled"),
            }
            stage.columns.push(col);
        }
        stage
    }

    fn push_values(&mut self, values: impl IntoIterator<Item = f32>) -> u32 {
        let at = self.weights.len() as u32;
        self.weights.extend(values);
        at
    }

    /// Appends `[rows][cols]` data transposed to `[cols][rows]`.
    fn push_transposed(&mut self, data: &[f32], rows: usize, cols: usize) -> u32 {
        self.push_values((0..cols).flat_map(|i| (0..rows).map(move |r| data[r * cols + i])))
    }

    fn push_dense(&mut self, layers: &[Dense]) {
        for l in layers {
            let weight = self.push_transposed(&l.weight, l.outputs, l.inputs);
            let bias = self.push_values(l.bias.iter().copied());
            self.layers.push(NetLayer {
                kind: NET_DENSE,
                inputs: l.inputs as u32,
                outputs: l.outputs as u32,
                activation: l.activation as u32,
                weight,
                bias,
                ..NetLayer::default()
            });
        }
    }

    /// Pushes the LSTM layers and the head; returns the number of LSTM layers.
    fn push_lstm(&mut self, net: &LstmNet) -> u32 {
        for l in net.layers() {
            let g = 4 * l.hidden;
            let weight = self.push_transposed(&l.weight_ih, g, l.inputs);
            let bias = self.push_values(l.bias_ih.iter().copied());
            let weight_hh = self.push_transposed(&l.weight_hh, g, l.hidden);
            let bias_hh = self.push_values(l.bias_hh.iter().copied());
            self.layers.push(NetLayer {
                kind: NET_LSTM,
                inputs: l.inputs as u32,
                outputs: l.hidden as u32,
                activation: 0,
                weight,
                bias,
                weight_hh,
                bias_hh,
            });
        }
        self.push_dense(net.head());
        net.layers().len() as u32
    }

    /// One env's learned columns (WGSL: `learned_law` per column): `ctrl`
    /// holds each column's delayed position target on entry and its
    /// clipped effort on exit. `pos`/`vel` are the env's command rows,
    /// `limits` its rows of the effort-limit, saturation-effort and
    /// velocity-limit tables, `state` its state: read as it was before the
    /// step, written for after it.
    ///
    /// The networks run compiled for AVX-512 or AVX2 when the CPU has it
    /// (no FMA, so the bits are the same). A network (MLP or LSTM) runs for up to
    /// [`NET_LANES`] of the env's columns at once, one column per lane, each
    /// lane's sums in the one-column order.
    pub fn env_efforts(
        &self,
        pos: &[f32],
        vel: &[f32],
        limits: [&[f32]; 3],
        ctrl: &mut [f32],
        state: &mut impl LearnedState,
    ) {
        crate::simd::widest(
            #[inline(always)]
            || {
                let mut rest = &self.columns[..];
                while let Some(col) = rest.first() {
                    // The next columns of this network, one per lane.
                    let batch = rest
                        .iter()
                        .take(NET_LANES)
                        .take_while(|c| {
                            c.kind == col.kind
                                && c.first_layer == col.first_layer
                                && c.num_layers == col.num_layers
                        })
                        .count();
                    let (batch, after) = rest.split_at(batch);
                    let mut lanes = EnvLanes {
                        batch,
                        pos,
                        vel,
                        limits,
                        ctrl: &mut *ctrl,
                        state: &mut *state,
                    };
                    self.network_lanes(col, &mut lanes);
                    rest = after;
                }
            },
        );
    }

    /// True when [`LearnedStage::rows_efforts`] can run this stage: every
    /// one of the plan's `num_ctrl` columns is learned, by one group's
    /// network, with the ctrl columns in command order (`num_targets` of
    /// them).
    pub fn runs_by_rows(&self, num_ctrl: usize, num_targets: usize) -> bool {
        let unplaced = |c: &LearnedColumn| LearnedColumn {
            ctrl_column: 0,
            cmd_column: 0,
            ..*c
        };
        self.columns.first().is_some_and(|first| {
            num_targets == num_ctrl
                && self.columns.len() == num_ctrl
                && self.columns.iter().enumerate().all(|(i, c)| {
                    c.ctrl_column as usize == i
                        && c.cmd_column as usize == i
                        && unplaced(c) == unplaced(first)
                })
        })
    }

    /// [`LearnedStage::env_efforts`] for consecutive envs at once, when
    /// [`LearnedStage::runs_by_rows`]: `pos`, `vel`, `limits` and `ctrl` are
    /// their rows (each `num_ctrl` values per env, one stretch), `state` their
    /// state. The network runs for [`NET_LANES`] consecutive (env, column)
    /// elements at once, so every lane is busy whatever the robot's joint
    /// count, and each slot of their state is one load and one store; each
    /// lane computes what [`LearnedStage::env_efforts`] does, bit for bit.
    pub fn rows_efforts(
        &self,
        pos: &[f32],
        vel: &[f32],
        limits: [&[f32]; 3],
        ctrl: &mut [f32],
        state: &mut impl LearnedRows,
    ) {
        let len = ctrl.len();
        assert!(pos.len() == len && vel.len() == len && limits.iter().all(|l| l.len() == len));
        let Some(col) = self.columns.first() else {
            return;
        };
        let mut lanes = RowLanes {
            pos,
            vel,
            limits,
            ctrl,
            state,
        };
        crate::simd::widest(
            #[inline(always)]
            || self.network_lanes(col, &mut lanes),
        );
    }

    /// The network of `col` (whose group every lane of `lanes` is in) for
    /// each group of `lanes`, in the widest vector form the caller was
    /// compiled for.
    #[inline(always)]
    fn network_lanes(&self, col: &LearnedColumn, lanes: &mut impl LaneGroups) {
        if col.kind == LEARNED_MLP {
            self.mlp_lanes(col, lanes);
        } else {
            self.lstm_lanes(col, lanes);
        }
    }

    /// [`LearnedStage::network_lanes`] for an MLP: per group, the network
    /// inputs (the module docs give its state), the history shifted for the
    /// next step, the dense layers, the output scaled.
    #[inline(always)]
    fn mlp_lanes(&self, col: &LearnedColumn, lanes: &mut impl LaneGroups) {
        let layers = &self.layers[col.first_layer as usize..][..col.num_layers as usize];
        let lags = col.history_len as usize - 1;
        let taps = &self.taps[col.taps_offset as usize..][..col.num_taps as usize];
        let n = taps.len();
        let (pos_half, vel_half) = if col.input_order == InputOrder::PosVel as u32 {
            (0, n)
        } else {
            (n, 0)
        };
        let backfill = col.history_init == HistoryInit::Backfill as u32;
        // One layer's input and output per lane; each layer writes before
        // it reads.
        let mut xy = [[[0.0f32; NET_LANES]; NET_MAX_WIDTH]; 2];
        for g in 0..lanes.groups() {
            let [errors, vels] = lanes.inputs(g);
            let fresh = lanes.load(g, MLP_FRESH);
            // The frames `lag` steps back (of `half`: errors, then
            // velocities): this step's own, or while fresh the frame
            // itself or 0 per [`HistoryInit`].
            // (A macro: as a closure it was left a function of its own,
            // compiled for the baseline target.)
            macro_rules! frame {
                ($lag:expr, $half:expr, $now:expr) => {{
                    let (lag, half, now): (usize, usize, &Lanes) = ($lag, $half, $now);
                    if lag == 0 {
                        *now
                    } else {
                        history_frame(&lanes.load(g, half * lags + lag), now, &fresh, backfill)
                    }
                }};
            }
            let [x, y] = &mut xy;
            for (k, &t) in taps.iter().enumerate() {
                let p = frame!(t as usize, 0, &errors);
                let v = frame!(t as usize, 1, &vels);
                x[pos_half + k] = each_lane(p, |p| col.pos_scale * p);
                x[vel_half + k] = each_lane(v, |v| col.vel_scale * v);
            }
            // The history after this step: every frame one lag older.
            for (half, now) in [(0, &errors), (1, &vels)] {
                for lag in (1..=lags).rev() {
                    let value = frame!(lag - 1, half, now);
                    lanes.store(g, half * lags + lag, &value);
                }
            }
            lanes.store(g, MLP_FRESH, &[0.0; NET_LANES]);
            let out = dense_stack_lanes(&self.weights, layers, x, y);
            lanes.finish(g, &each_lane(out, |o| o * col.torque_scale));
        }
    }

    /// [`LearnedStage::network_lanes`] for an LSTM (the module docs give
    /// its state): per lane the one-column arithmetic of WGSL `lstm_unit`.
    /// Compiled, like the networks, for the widest vectors the CPU has;
    /// kept out of its callers' bodies, whose MLPs would otherwise pay for
    /// its large stack frame.
    #[inline(never)]
    fn lstm_lanes(&self, col: &LearnedColumn, lanes: &mut impl LaneGroups) {
        crate::simd::widest(
            #[inline(always)]
            || self.lstm_body(col, lanes),
        )
    }

    /// The body of [`LearnedStage::lstm_lanes`].
    #[inline(always)]
    fn lstm_body(&self, col: &LearnedColumn, lanes: &mut impl LaneGroups) {
        use crate::kinds::{net_sigmoid, net_tanh};
        let hidden = col.hidden as usize;
        let layers = &self.layers[col.first_layer as usize..][..col.num_layers as usize];
        let (lstm, head) = layers.split_at(col.lstm_layers as usize);
        let g = 4 * hidden;
        // Scratch for every group, each value written before it is read.
        let [mut x_rows, mut y_rows] = [[[0.0f32; NET_LANES]; NET_MAX_WIDTH]; 2];
        let mut from_x = [[0.0f32; NET_LANES]; 4 * NET_MAX_WIDTH];
        let mut from_h = [[0.0f32; NET_LANES]; 4 * NET_MAX_WIDTH];
        let (from_x, from_h) = (&mut from_x[..g], &mut from_h[..g]);
        let mut cells = [[0.0f32; NET_LANES]; NET_MAX_WIDTH];
        for group in 0..lanes.groups() {
            // A layer's inputs in `x`; its new hidden state, in `y`, is the
            // next layer's (the two swap, not copied: a copy by length was a
            // call to `memmove`).
            let (mut x, mut y) = (&mut x_rows, &mut y_rows);
            [x[0], x[1]] = lanes.inputs(group);
            for (l, layer) in lstm.iter().enumerate() {
                let at = 2 * l * hidden;
                // The old hidden state in `y`, the old cell state in `cells`.
                let n_in = layer.inputs as usize;
                for u in 0..hidden {
                    y[u] = lanes.load(group, at + u);
                    cells[u] = lanes.load(group, at + hidden + u);
                }
                let w_ih = &self.weights[layer.weight as usize..][..n_in * g];
                weighted_sums_lanes(w_ih, &x[..n_in], from_x, |_, v| v);
                let w_hh = &self.weights[layer.weight_hh as usize..][..hidden * g];
                weighted_sums_lanes(w_hh, &y[..hidden], from_h, |_, v| v);
                let b_ih = &self.weights[layer.bias as usize..][..g];
                let b_hh = &self.weights[layer.bias_hh as usize..][..g];
                let pre = |r: usize, lane: usize| {
                    (from_x[r][lane] + b_ih[r]) + (from_h[r][lane] + b_hh[r])
                };
                // Every lane in one loop (vector lanes), then the state writes.
                for u in 0..hidden {
                    for lane in 0..NET_LANES {
                        let i = net_sigmoid(pre(u, lane));
                        let f = net_sigmoid(pre(hidden + u, lane));
                        let cell = net_tanh(pre(2 * hidden + u, lane));
                        let o = net_sigmoid(pre(3 * hidden + u, lane));
                        let c_new = f * cells[u][lane] + i * cell;
                        cells[u][lane] = c_new;
                        y[u][lane] = o * net_tanh(c_new);
                    }
                    lanes.store(group, at + u, &y[u]);
                    lanes.store(group, at + hidden + u, &cells[u]);
                }
                std::mem::swap(&mut x, &mut y);
            }
            let out = dense_stack_lanes(&self.weights, head, x, y);
            lanes.finish(group, &out);
        }
    }
}

/// Consecutive (env, column) elements' learned state, as the driver keeps
/// it in the plan's `[slot][env][ctrl]` state tables, for
/// [`LearnedStage::rows_efforts`]: element `i` is column `i % num_ctrl`
/// of the `i / num_ctrl`-th env.
pub trait LearnedRows {
    /// Slot `k` of the `len` elements from element `at`, before this step.
    fn row(&self, k: usize, at: usize, len: usize) -> &[f32];
    /// Slot `k` of the `len` elements from element `at`, for after this
    /// step (committed with each env's other state, only when its outputs
    /// are finite).
    fn row_mut(&mut self, k: usize, at: usize, len: usize) -> &mut [f32];
}

/// One network's lanes in groups of [`NET_LANES`]: the lanes of a group
/// are (env, column) elements of that network, each with its own state
/// and outputs. Lanes past the last element compute values nobody reads.
trait LaneGroups {
    /// How many groups there are.
    fn groups(&self) -> usize;
    /// Group `g`'s position errors (delayed position target less position)
    /// and velocities.
    fn inputs(&self, g: usize) -> [Lanes; 2];
    /// Slot `k` of group `g`'s elements, before this step.
    fn load(&self, g: usize, k: usize) -> Lanes;
    /// Writes slot `k` of group `g`'s elements for after this step.
    fn store(&mut self, g: usize, k: usize, values: &Lanes);
    /// Writes group `g`'s efforts: each lane's network output `raw`, DC
    /// clipped.
    fn finish(&mut self, g: usize, raw: &Lanes);
}

/// The lanes of [`LearnedStage::env_efforts`]: one group, one of the env's
/// columns (`batch`) per lane.
struct EnvLanes<'a, S> {
    batch: &'a [LearnedColumn],
    pos: &'a [f32],
    vel: &'a [f32],
    limits: [&'a [f32]; 3],
    ctrl: &'a mut [f32],
    state: &'a mut S,
}

impl<S: LearnedState> EnvLanes<'_, S> {
    /// `value(column)` in each lane with a column, else 0.
    #[inline(always)]
    fn each(&self, value: impl Fn(&LearnedColumn) -> f32) -> Lanes {
        std::array::from_fn(|lane| self.batch.get(lane).map_or(0.0, &value))
    }
}

impl<S: LearnedState> LaneGroups for EnvLanes<'_, S> {
    fn groups(&self) -> usize {
        1
    }

    #[inline(always)]
    fn inputs(&self, _: usize) -> [Lanes; 2] {
        [
            self.each(|c| self.ctrl[c.ctrl_column as usize] - self.pos[c.cmd_column as usize]),
            self.each(|c| self.vel[c.cmd_column as usize]),
        ]
    }

    #[inline(always)]
    fn load(&self, _: usize, k: usize) -> Lanes {
        self.each(|c| self.state.get(k, c.ctrl_column as usize))
    }

    #[inline(always)]
    fn store(&mut self, _: usize, k: usize, values: &Lanes) {
        for (col, &value) in self.batch.iter().zip(values) {
            self.state.set(k, col.ctrl_column as usize, value);
        }
    }

    #[inline(always)]
    fn finish(&mut self, _: usize, raw: &Lanes) {
        for (col, &raw) in self.batch.iter().zip(raw) {
            let c = col.ctrl_column as usize;
            let [fl, sat, vlim] = self.limits.map(|row| row[c]);
            let v = self.vel[col.cmd_column as usize];
            self.ctrl[c] = dc_motor_clip(raw, sat, vlim, fl, v);
        }
    }
}

/// The lanes of [`LearnedStage::rows_efforts`]: group `g` is elements
/// `g·NET_LANES..` of the rows.
struct RowLanes<'a, R> {
    pos: &'a [f32],
    vel: &'a [f32],
    limits: [&'a [f32]; 3],
    ctrl: &'a mut [f32],
    state: &'a mut R,
}

impl<R> RowLanes<'_, R> {
    /// Group `g`'s first element and element count.
    #[inline(always)]
    fn span(&self, g: usize) -> (usize, usize) {
        let at = g * NET_LANES;
        (at, (self.ctrl.len() - at).min(NET_LANES))
    }

    /// Group `g`'s values of `row`, 0 past its last element.
    #[inline(always)]
    fn lanes(&self, g: usize, row: &[f32]) -> Lanes {
        let (at, n) = self.span(g);
        padded(&row[at..at + n])
    }
}

impl<R: LearnedRows> LaneGroups for RowLanes<'_, R> {
    fn groups(&self) -> usize {
        self.ctrl.len().div_ceil(NET_LANES)
    }

    #[inline(always)]
    fn inputs(&self, g: usize) -> [Lanes; 2] {
        let (targets, pos) = (self.lanes(g, self.ctrl), self.lanes(g, self.pos));
        [
            std::array::from_fn(|l| targets[l] - pos[l]),
            self.lanes(g, self.vel),
        ]
    }

    #[inline(always)]
    fn load(&self, g: usize, k: usize) -> Lanes {
        let (at, n) = self.span(g);
        padded(self.state.row(k, at, n))
    }

    #[inline(always)]
    fn store(&mut self, g: usize, k: usize, values: &Lanes) {
        let (at, n) = self.span(g);
        store_lanes(self.state.row_mut(k, at, n), values);
    }

    #[inline(always)]
    fn finish(&mut self, g: usize, raw: &Lanes) {
        // Whole lane groups, in vector lanes (one element at a time, with a
        // bounds check per row, it was a tenth of the MLP's time); the lanes
        // past a partial group's last element clip zeros nobody stores.
        let [fl, sat, vlim] = self.limits.map(|row| self.lanes(g, row));
        let vel = self.lanes(g, self.vel);
        let efforts =
            std::array::from_fn(|l| dc_motor_clip(raw[l], sat[l], vlim[l], fl[l], vel[l]));
        let (at, n) = self.span(g);
        store_lanes(&mut self.ctrl[at..at + n], &efforts);
    }
}

/// Dense layers in turn from `x` (WGSL `dense_stack`); returns the first
/// output of the last (`x[0]` when there is none).
#[inline(always)]
fn dense_stack<'a>(
    weights: &[f32],
    layers: &[NetLayer],
    mut x: &'a mut [f32; NET_MAX_WIDTH],
    mut y: &'a mut [f32; NET_MAX_WIDTH],
) -> f32 {
    for layer in layers {
        dense(weights, layer, x, y);
        std::mem::swap(&mut x, &mut y);
    }
    x[0]
}

/// `$body` with `$f` the activation of code `$activation`, a closure of its
/// own type in each arm: one loop per activation, each with its function
/// inlined, so each vectorizes. (As a function taking the activation as a
/// `fn` pointer, the lane form's loop called it once per value.)
macro_rules! per_activation {
    ($activation:expr, |$f:ident| $body:expr) => {
        per_activation!(@arms $activation, $f, $body, Identity Relu Elu Tanh Softsign Sigmoid)
    };
    (@arms $activation:expr, $f:ident, $body:expr, $($kind:ident)*) => {
        match Activation::ALL[$activation as usize] {
            $(Activation::$kind => {
                let $f = |x| Activation::$kind.apply(x);
                $body
            })*
        }
    };
}

/// Columns of one network run at once in [`LearnedStage::env_efforts`].
pub const NET_LANES: usize = 16;

/// One value per lane.
type Lanes = [f32; NET_LANES];

/// [`dense_stack`] for [`NET_LANES`] columns of one network at once, each
/// lane one column's `x`; returns each lane's first output of the last
/// layer.
#[inline(always)]
fn dense_stack_lanes<'a>(
    weights: &[f32],
    layers: &[NetLayer],
    mut x: &'a mut [Lanes; NET_MAX_WIDTH],
    mut y: &'a mut [Lanes; NET_MAX_WIDTH],
) -> Lanes {
    for layer in layers {
        dense_lanes(weights, layer, x, y);
        std::mem::swap(&mut x, &mut y);
    }
    x[0]
}

/// Per lane, a history frame as the MLP reads it: `old` (the stored
/// frame), or for a lane whose env is `fresh` (nonzero) `now` under
/// backfill and 0 otherwise, as selects of whole vectors.
#[inline(always)]
fn history_frame(old: &Lanes, now: &Lanes, fresh: &Lanes, backfill: bool) -> Lanes {
    let init = if backfill { *now } else { [0.0; NET_LANES] };
    std::array::from_fn(|l| if fresh[l] != 0.0 { init[l] } else { old[l] })
}

/// Up to [`NET_LANES`] values, one per lane, then zeros. (A whole group
/// is one vector load: copied by length, each was a call to `memcpy`.)
#[inline(always)]
fn padded(values: &[f32]) -> Lanes {
    match <&Lanes>::try_from(values) {
        Ok(lanes) => *lanes,
        Err(_) => padded_part(values),
    }
}

/// [`padded`] for fewer values than lanes. (Not inlined: where it was, the
/// compiler merged both forms into one `memcpy` call of either length.)
#[cold]
#[inline(never)]
fn padded_part(values: &[f32]) -> Lanes {
    let mut lanes = [0.0; NET_LANES];
    lanes[..values.len()].copy_from_slice(values);
    lanes
}

/// The first `row.len()` lanes of `values` into `row` (all of them for a
/// whole group, in one vector store; see [`padded_part`]).
#[inline(always)]
fn store_lanes(row: &mut [f32], values: &Lanes) {
    match <&mut Lanes>::try_from(&mut *row) {
        Ok(whole) => *whole = *values,
        Err(_) => store_part(row, values),
    }
}

/// [`store_lanes`] for fewer values than lanes.
#[cold]
#[inline(never)]
fn store_part(row: &mut [f32], values: &Lanes) {
    let n = row.len();
    row.copy_from_slice(&values[..n]);
}

/// `f` of every lane. (A loop the caller inlines: `[f32; N]::map` was left
/// a call, once per output.)
#[inline(always)]
fn each_lane(mut lanes: Lanes, f: impl Fn(f32) -> f32) -> Lanes {
    for v in &mut lanes {
        *v = f(*v);
    }
    lanes
}

/// `acc += x·w` in every lane.
#[inline(always)]
fn axpy(acc: &mut Lanes, x: &Lanes, w: f32) {
    *acc = std::array::from_fn(|l| acc[l] + x[l] * w);
}

/// [`dense`] for every lane: per lane the same additions in the same order.
#[inline(always)]
fn dense_lanes(weights: &[f32], l: &NetLayer, x: &[Lanes], y: &mut [Lanes]) {
    let (n_in, n_out) = (l.inputs as usize, l.outputs as usize);
    let y = &mut y[..n_out];
    let w = &weights[l.weight as usize..][..n_in * n_out];
    let bias = &weights[l.bias as usize..][..n_out];
    // Each output's bias and activation while its sums are in registers:
    // as a pass of their own after the sums, the compiler vectorized it
    // across outputs instead of lanes, gathering and scattering one lane
    // of each.
    per_activation!(l.activation, |f| {
        weighted_sums_lanes(w, &x[..n_in], y, |o, v| f(v + bias[o]))
    })
}

/// Outputs [`weighted_sums_lanes`] sums at a time.
const SUM_BLOCK: usize = 8;

/// Per lane `y[o] = Σ_i x[i]·w[i][o]` (`w` input-major: one row of
/// `y.len()` weights per input), summed from 0 in input order, eight
/// outputs at a time: independent sums hide the additions' latency (2–4 %
/// faster than four on the Go1 MLP; on the LSTM's gates 7 % at 29 joints,
/// the same at 12; BENCHMARKS.md).
/// Each output's sum is the same either way. `y[o]` takes `then(o, sum)`
/// in each lane.
#[inline(always)]
fn weighted_sums_lanes(w: &[f32], x: &[Lanes], y: &mut [Lanes], then: impl Fn(usize, f32) -> f32) {
    let n_out = y.len();
    let mut blocks = y.chunks_exact_mut(SUM_BLOCK);
    for (b, yb) in blocks.by_ref().enumerate() {
        let mut acc = [[0.0f32; NET_LANES]; SUM_BLOCK];
        for (xi, row) in x.iter().zip(w.chunks_exact(n_out)) {
            let row = &row[b * SUM_BLOCK..][..SUM_BLOCK];
            for (acc, &wo) in acc.iter_mut().zip(row) {
                axpy(acc, xi, wo);
            }
        }
        for (j, (yo, acc)) in yb.iter_mut().zip(&acc).enumerate() {
            *yo = each_lane(*acc, |v| then(b * SUM_BLOCK + j, v));
        }
    }
    let done = n_out - blocks.into_remainder().len();
    for (o, yo) in y.iter_mut().enumerate().skip(done) {
        let mut acc = [0.0f32; NET_LANES];
        for (xi, row) in x.iter().zip(w.chunks_exact(n_out)) {
            axpy(&mut acc, xi, row[o]);
        }
        *yo = each_lane(acc, |v| then(o, v));
    }
}

/// Dense layers on one row of `inputs` ([`Mlp::forward`](crate::Mlp::forward)).
pub(crate) fn evaluate_dense(layers: &[Dense], inputs: &[f32]) -> f32 {
    let mut stage = LearnedStage::default();
    stage.push_dense(layers);
    let [mut x, mut y] = [[0.0f32; NET_MAX_WIDTH]; 2];
    x[..inputs.len()].copy_from_slice(inputs);
    dense_stack(&stage.weights, &stage.layers, &mut x, &mut y)
}

/// One dense layer (WGSL `dense_stack`, per output).
#[inline(always)]
fn dense(weights: &[f32], l: &NetLayer, x: &[f32], y: &mut [f32]) {
    let (n_in, n_out) = (l.inputs as usize, l.outputs as usize);
    let w = &weights[l.weight as usize..][..n_in * n_out];
    let y = &mut y[..n_out];
    // The common widths with their sums in registers; the same additions
    // in the same order as the general loop, so the same bits.
    match n_out {
        8 => weighted_sum::<8>(w, &x[..n_in], y),
        16 => weighted_sum::<16>(w, &x[..n_in], y),
        32 => weighted_sum::<32>(w, &x[..n_in], y),
        64 => weighted_sum::<64>(w, &x[..n_in], y),
        _ => {
            y.fill(0.0);
            for (&xi, row) in x[..n_in].iter().zip(w.chunks_exact(n_out)) {
                for (yo, &wo) in y.iter_mut().zip(row) {
                    *yo += xi * wo;
                }
            }
        }
    }
    let bias = &weights[l.bias as usize..][..n_out];
    per_activation!(l.activation, |f| {
        for (yo, &bo) in y.iter_mut().zip(bias) {
            *yo = f(*yo + bo);
        }
    })
}

/// `y = Σ_i x[i]·w[i]` over rows of `N` weights, summed from 0 in input
/// order (the general loop of [`dense`], with the sums held in registers).
#[inline(always)]
fn weighted_sum<const N: usize>(w: &[f32], x: &[f32], y: &mut [f32]) {
    let mut acc = [0.0f32; N];
    for (&xi, row) in x.iter().zip(w.chunks_exact(N)) {
        let row: &[f32; N] = row.try_into().expect("rows of N");
        for o in 0..N {
            acc[o] += xi * row[o];
        }
    }
    y.copy_from_slice(&acc);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::{Activation, Dense, LstmLayer, Mlp};

    /// The register-held sums of the common widths, and every lane of the
    /// many-column form, are the general loop's additions in the same
    /// order: the same bits, every activation.
    #[test]
    fn common_widths_and_lanes_sum_as_the_general_loop() {
        let mut seed = 7u32;
        let mut draw = || {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 8) as f32 / (1u32 << 24) as f32 * 4.0 - 2.0
        };
        for n_out in [8, 16, 32, 64, 7, 1, 6] {
            for &activation in &Activation::ALL {
                let n_in = 13;
                let weights: Vec<f32> = (0..n_in * n_out + n_out).map(|_| draw()).collect();
                let layer = NetLayer {
                    kind: NET_DENSE,
                    inputs: n_in as u32,
                    outputs: n_out as u32,
                    activation: activation as u32,
                    weight: 0,
                    bias: (n_in * n_out) as u32,
                    ..NetLayer::default()
                };
                let x: Vec<f32> = (0..NET_MAX_WIDTH).map(|_| draw()).collect();
                let mut y = [0.0f32; NET_MAX_WIDTH];
                dense(&weights, &layer, &x, &mut y);
                // Lane `l` holds `x` shifted by `l`: every lane differs.
                let x_lanes: Vec<Lanes> = (0..NET_MAX_WIDTH)
                    .map(|i| std::array::from_fn(|l| x[(i + l) % NET_MAX_WIDTH]))
                    .collect();
                let mut y_lanes = [[0.0f32; NET_LANES]; NET_MAX_WIDTH];
                dense_lanes(&weights, &layer, &x_lanes, &mut y_lanes);
                for o in 0..n_out {
                    for l in 0..NET_LANES {
                        let mut sum = 0.0f32;
                        for i in 0..n_in {
                            sum += x_lanes[i][l] * weights[i * n_out + o];
                        }
                        let want = activation.apply(sum + weights[n_in * n_out + o]);
                        if l == 0 {
                            assert_eq!(y[o].to_bits(), want.to_bits(), "{n_out} {activation} {o}");
                        }
                        let got = y_lanes[o][l];
                        assert_eq!(
                            got.to_bits(),
                            want.to_bits(),
                            "{n_out} {activation} {o} {l}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn compiled_dense_layers_compute_the_torch_layout() {
        // torch's layout: weight [out][in]; the compiled table is transposed.
        let (w0, b0) = ([0.5f32, -1.0, 2.0, 0.25, -0.3, 0.7], [0.1f32, -0.2, 0.3]);
        let (w1, b1) = ([1.5f32, -0.5, 0.25], [0.05f32]);
        let net = Mlp::new(
            "t",
            vec![
                Dense::new("0", 3, 2, w0.to_vec(), b0.to_vec(), Activation::Elu),
                Dense::new("2", 1, 3, w1.to_vec(), b1.to_vec(), Activation::Tanh),
            ],
        )
        .unwrap();
        for input in [[0.3f32, -0.8], [-2.0, 1.0], [0.0, 0.0]] {
            let hidden: Vec<f64> = (0..3)
                .map(|o| {
                    let z = f64::from(input[0]) * f64::from(w0[2 * o])
                        + f64::from(input[1]) * f64::from(w0[2 * o + 1])
                        + f64::from(b0[o]);
                    if z > 0.0 {
                        z
                    } else {
                        z.exp_m1()
                    }
                })
                .collect();
            let z: f64 =
                (0..3).map(|o| hidden[o] * f64::from(w1[o])).sum::<f64>() + f64::from(b1[0]);
            let got = net.forward(&input);
            assert!(
                (f64::from(got) - z.tanh()).abs() < 1e-6,
                "{input:?}: {got} vs {}",
                z.tanh()
            );
        }
    }

    #[test]
    fn one_unit_lstm_step_matches_the_gate_equations_in_every_lane() {
        // hidden 1: gate rows i, f, g, o.
        let layer = LstmLayer {
            name: ("".into(), "_l0".into()),
            inputs: 2,
            hidden: 1,
            weight_ih: vec![0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8],
            weight_hh: vec![-0.1, -0.2, -0.3, -0.4],
            bias_ih: vec![0.01, 0.02, 0.03, 0.04],
            bias_hh: vec![0.05, 0.06, 0.07, 0.08],
        };
        let net = LstmNet::new("t", vec![layer.clone()], vec![]).unwrap();
        let mut stage = LearnedStage::default();
        stage.push_lstm(&net);
        /// Two columns, one per lane: slot `k` of lane `l` at `2·l + k`,
        /// the second lane with other inputs and state; `raw` the outputs.
        struct Probe {
            inputs: [Lanes; 2],
            state: Vec<f32>,
            lanes: usize,
            raw: Lanes,
        }
        impl LaneGroups for Probe {
            fn groups(&self) -> usize {
                1
            }
            fn inputs(&self, _: usize) -> [Lanes; 2] {
                self.inputs
            }
            fn load(&self, _: usize, k: usize) -> Lanes {
                std::array::from_fn(|l| {
                    if l < self.lanes {
                        self.state[2 * l + k]
                    } else {
                        0.0
                    }
                })
            }
            fn store(&mut self, _: usize, k: usize, values: &Lanes) {
                for (l, &value) in values.iter().enumerate().take(self.lanes) {
                    self.state[2 * l + k] = value;
                }
            }
            fn finish(&mut self, _: usize, raw: &Lanes) {
                self.raw = *raw;
            }
        }
        let column = LearnedColumn {
            kind: LEARNED_LSTM,
            num_layers: 1,
            lstm_layers: 1,
            hidden: 1,
            ..LearnedColumn::default()
        };
        let (x, h, c) = ([0.5f32, -1.5], 0.3f32, -0.2f32);
        let mut inputs = [[0.0f32; NET_LANES]; 2];
        [inputs[0][0], inputs[1][0], inputs[0][1], inputs[1][1]] = [x[0], x[1], 2.0 * x[0], -x[1]];
        let mut both = Probe {
            inputs,
            state: vec![h, c, -h, 2.0 * c],
            lanes: 2,
            raw: [0.0; NET_LANES],
        };
        stage.lstm_lanes(&column, &mut both);
        let (h_new, c_new) = ([both.state[0]], [both.state[1]]);
        assert_eq!(
            both.raw[0].to_bits(),
            h_new[0].to_bits(),
            "no head: the output is h"
        );
        let mut second = Probe {
            inputs: inputs.map(|lanes| [lanes[1]; NET_LANES]),
            state: vec![-h, 2.0 * c],
            lanes: 1,
            raw: [0.0; NET_LANES],
        };
        stage.lstm_lanes(&column, &mut second);
        assert_eq!(
            &second.state[..],
            &both.state[2..],
            "lane 1 alone gives the same bits"
        );
        let pre = |q: usize| {
            let w = &layer.weight_ih[2 * q..2 * q + 2];
            (x[0] as f64 * w[0] as f64 + x[1] as f64 * w[1] as f64 + layer.bias_ih[q] as f64)
                + (h as f64 * layer.weight_hh[q] as f64 + layer.bias_hh[q] as f64)
        };
        let sig = |v: f64| 1.0 / (1.0 + (-v).exp());
        let c_want = sig(pre(1)) * c as f64 + sig(pre(0)) * pre(2).tanh();
        let h_want = sig(pre(3)) * c_want.tanh();
        assert!(
            (c_new[0] as f64 - c_want).abs() < 1e-6,
            "{} vs {c_want}",
            c_new[0]
        );
        assert!(
            (h_new[0] as f64 - h_want).abs() < 1e-6,
            "{} vs {h_want}",
            h_new[0]
        );
    }
}
