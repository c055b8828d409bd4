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

    /// Compiles the learned columns of a plan's groups, in ctrl order.
    pub(crate) fn compile(infos: &[GroupInfo], ctrl: &[CtrlColumn]) -> LearnedStage {
        let mut stage = LearnedStage::default();
        // (group, first layer, layers, lstm layers) of each network compiled so far.
        let mut compiled: Vec<(usize, u32, u32, u32)> = Vec::new();
        for (c, column) in ctrl.iter().enumerate() {
            let actuator = &infos[column.group].cfg.actuator;
            if !matches!(
                actuator,
                ActuatorCfg::LearnedMlp(_) | ActuatorCfg::LstmNet(_)
            ) {
                continue;
            }
            let (first_layer, num_layers, lstm_layers) =
                match compiled.iter().find(|n| n.0 == column.group) {
                    Some(&(_, first, n, l)) => (first, n, l),
                    None => {
                        let first = stage.layers.len() as u32;
                        let lstm_layers = match actuator {
                            ActuatorCfg::LearnedMlp(cfg) => {
                                stage.push_dense(cfg.network.layers());
                                0
                            }
                            ActuatorCfg::LstmNet(cfg) => stage.push_lstm(&cfg.network),
                            _ => unreachable!("only learned kinds are compiled"),
                        };
                        let n = stage.layers.len() as u32 - first;
                        compiled.push((column.group, first, n, lstm_layers));
                        (first, n, lstm_layers)
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
                    col.taps_offset = stage.taps.len() as u32;
                    col.num_taps = cfg.taps.len() as u32;
                    stage.taps.extend(&cfg.taps);
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
            || self.efforts(pos, vel, limits, ctrl, state),
        );
    }

    /// The body of [`LearnedStage::env_efforts`].
    #[inline(always)]
    fn efforts(
        &self,
        pos: &[f32],
        vel: &[f32],
        limits: [&[f32]; 3],
        ctrl: &mut [f32],
        state: &mut impl LearnedState,
    ) {
        // One layer's input and output per lane; each step writes before
        // it reads.
        let mut lanes = [[[0.0f32; NET_LANES]; NET_MAX_WIDTH]; 2];
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
            let mut errors = [0.0f32; NET_LANES];
            let mut vels = [0.0f32; NET_LANES];
            for (lane, col) in batch.iter().enumerate() {
                let (c, m) = (col.ctrl_column as usize, col.cmd_column as usize);
                errors[lane] = ctrl[c] - pos[m];
                vels[lane] = vel[m];
            }
            let layers = &self.layers[col.first_layer as usize..][..col.num_layers as usize];
            let raw = if col.kind == LEARNED_MLP {
                let [x, y] = &mut lanes;
                let inputs = 2 * col.num_taps as usize;
                let mut x1 = [0.0f32; NET_MAX_WIDTH];
                for (lane, col) in batch.iter().enumerate() {
                    self.mlp_inputs(col, errors[lane], vels[lane], state, &mut x1);
                    for (xl, &xi) in x[..inputs].iter_mut().zip(&x1[..inputs]) {
                        xl[lane] = xi;
                    }
                }
                let out = dense_stack_lanes(&self.weights, layers, x, y);
                std::array::from_fn(|lane| {
                    out[lane] * batch.get(lane).map_or(1.0, |c| c.torque_scale)
                })
            } else {
                self.lstm_lanes(batch, errors, vels, state, &mut lanes)
            };
            for ((col, &raw), &v) in batch.iter().zip(&raw).zip(&vels) {
                let c = col.ctrl_column as usize;
                let [fl, sat, vlim] = limits.map(|row| row[c]);
                ctrl[c] = dc_motor_clip(raw, sat, vlim, fl, v);
            }
            rest = after;
        }
    }

    /// An MLP column's network input (`x`, the module docs give its
    /// state), its history shifted for the next step.
    #[inline(always)]
    fn mlp_inputs<S: LearnedState>(
        &self,
        col: &LearnedColumn,
        error: f32,
        vel: f32,
        state: &mut S,
        x: &mut [f32; NET_MAX_WIDTH],
    ) {
        let c = col.ctrl_column as usize;
        let lags = col.history_len as usize - 1;
        // The frames `lag` steps back, errors then velocities.
        let fresh = state.get(MLP_FRESH, c) != 0.0;
        let backfill = col.history_init == HistoryInit::Backfill as u32;
        let frame = |state: &S, lag: usize, half: usize, now: f32| match lag {
            0 => now,
            _ if fresh && backfill => now,
            _ if fresh => 0.0,
            _ => state.get(half * lags + lag, c),
        };
        let n = col.num_taps as usize;
        let taps = &self.taps[col.taps_offset as usize..][..n];
        let (pos_half, vel_half) = if col.input_order == InputOrder::PosVel as u32 {
            (0, n)
        } else {
            (n, 0)
        };
        for (k, &t) in taps.iter().enumerate() {
            x[pos_half + k] = col.pos_scale * frame(state, t as usize, 0, error);
            x[vel_half + k] = col.vel_scale * frame(state, t as usize, 1, vel);
        }
        // The history after this step: every frame one lag older.
        for (half, now) in [(0, error), (1, vel)] {
            for lag in (1..=lags).rev() {
                let value = frame(state, lag - 1, half, now);
                state.set(half * lags + lag, c, value);
            }
        }
        state.set(MLP_FRESH, c, 0.0);
    }

    /// The outputs, before the DC clip, of up to [`NET_LANES`] LSTM columns
    /// of one network (the module docs give their state), one per lane:
    /// per lane the one-column arithmetic of WGSL `lstm_unit`. Compiled,
    /// like the networks, for the widest vectors the CPU has; kept out of
    /// [`LearnedStage::env_efforts`]'s body, whose MLPs would otherwise pay
    /// for its large stack frame.
    #[inline(never)]
    fn lstm_lanes<S: LearnedState>(
        &self,
        batch: &[LearnedColumn],
        errors: Lanes,
        vels: Lanes,
        state: &mut S,
        lanes: &mut [[Lanes; NET_MAX_WIDTH]; 2],
    ) -> Lanes {
        crate::simd::widest(
            #[inline(always)]
            || self.lstm_body(batch, errors, vels, state, lanes),
        )
    }

    /// The body of [`LearnedStage::lstm_lanes`].
    #[inline(always)]
    fn lstm_body<S: LearnedState>(
        &self,
        batch: &[LearnedColumn],
        errors: Lanes,
        vels: Lanes,
        state: &mut S,
        [x, y]: &mut [[Lanes; NET_MAX_WIDTH]; 2],
    ) -> Lanes {
        use crate::kinds::{net_sigmoid, net_tanh};
        let col = &batch[0];
        let hidden = col.hidden as usize;
        let layers = &self.layers[col.first_layer as usize..][..col.num_layers as usize];
        let (lstm, head) = layers.split_at(col.lstm_layers as usize);
        x[0] = errors;
        x[1] = vels;
        let g = 4 * hidden;
        let mut from_x = [[0.0f32; NET_LANES]; 4 * NET_MAX_WIDTH];
        let mut from_h = [[0.0f32; NET_LANES]; 4 * NET_MAX_WIDTH];
        let (from_x, from_h) = (&mut from_x[..g], &mut from_h[..g]);
        let mut cells = [[0.0f32; NET_LANES]; NET_MAX_WIDTH];
        for (l, layer) in lstm.iter().enumerate() {
            let at = 2 * l * hidden;
            // The old hidden state in `y`, the old cell state in `cells`.
            let n_in = layer.inputs as usize;
            for u in 0..hidden {
                for (lane, col) in batch.iter().enumerate() {
                    let c = col.ctrl_column as usize;
                    y[u][lane] = state.get(at + u, c);
                    cells[u][lane] = state.get(at + hidden + u, c);
                }
            }
            let w_ih = &self.weights[layer.weight as usize..][..n_in * g];
            weighted_sums_lanes::<4>(w_ih, &x[..n_in], from_x);
            let w_hh = &self.weights[layer.weight_hh as usize..][..hidden * g];
            weighted_sums_lanes::<4>(w_hh, &y[..hidden], from_h);
            let b_ih = &self.weights[layer.bias as usize..][..g];
            let b_hh = &self.weights[layer.bias_hh as usize..][..g];
            let pre =
                |r: usize, lane: usize| (from_x[r][lane] + b_ih[r]) + (from_h[r][lane] + b_hh[r]);
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
                for (lane, col) in batch.iter().enumerate() {
                    let c = col.ctrl_column as usize;
                    state.set(at + u, c, y[u][lane]);
                    state.set(at + hidden + u, c, cells[u][lane]);
                }
            }
            x[..hidden].copy_from_slice(&y[..hidden]);
        }
        dense_stack_lanes(&self.weights, head, x, y)
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
    weighted_sums_lanes::<8>(&weights[l.weight as usize..][..n_in * n_out], &x[..n_in], y);
    let bias = &weights[l.bias as usize..][..n_out];
    per_activation(l.activation, |f| {
        for (yo, &bo) in y.iter_mut().zip(bias) {
            for v in yo {
                *v = f(*v + bo);
            }
        }
    });
}

/// Per lane `y[o] = Σ_i x[i]·w[i][o]` (`w` input-major: one row of
/// `y.len()` weights per input), summed from 0 in input order, `BLOCK`
/// outputs at a time: independent sums hide the additions' latency. The
/// dense layers take 8 (2–4 % faster than 4 on the Go1 MLP); the LSTM's
/// gates 4 (with 8 they took 9× as long, BENCHMARKS.md). Each output's
/// sum is the same either way.
#[inline(always)]
fn weighted_sums_lanes<const BLOCK: usize>(w: &[f32], x: &[Lanes], y: &mut [Lanes]) {
    let n_out = y.len();
    let mut blocks = y.chunks_exact_mut(BLOCK);
    for (b, yb) in blocks.by_ref().enumerate() {
        let mut acc = [[0.0f32; NET_LANES]; BLOCK];
        for (xi, row) in x.iter().zip(w.chunks_exact(n_out)) {
            let row = &row[b * BLOCK..][..BLOCK];
            for (acc, &wo) in acc.iter_mut().zip(row) {
                axpy(acc, xi, wo);
            }
        }
        yb.copy_from_slice(&acc);
    }
    let done = n_out - blocks.into_remainder().len();
    for (o, yo) in y.iter_mut().enumerate().skip(done) {
        let mut acc = [0.0f32; NET_LANES];
        for (xi, row) in x.iter().zip(w.chunks_exact(n_out)) {
            axpy(&mut acc, xi, row[o]);
        }
        *yo = acc;
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
    per_activation(l.activation, |f| {
        for (yo, &bo) in y.iter_mut().zip(bias) {
            *yo = f(*yo + bo);
        }
    });
}

/// `each(f)` with `f` the activation of code `activation`, a different
/// known function in each arm: one loop per activation, so each vectorizes.
#[inline(always)]
fn per_activation(activation: u32, mut each: impl FnMut(fn(f32) -> f32)) {
    match Activation::ALL[activation as usize] {
        Activation::Identity => each(|x| Activation::Identity.apply(x)),
        Activation::Relu => each(|x| Activation::Relu.apply(x)),
        Activation::Elu => each(|x| Activation::Elu.apply(x)),
        Activation::Tanh => each(|x| Activation::Tanh.apply(x)),
        Activation::Softsign => each(|x| Activation::Softsign.apply(x)),
        Activation::Sigmoid => each(|x| Activation::Sigmoid.apply(x)),
    }
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
        /// Slot `k` of column `c` at `2·c + k`.
        struct Slots(Vec<f32>);
        impl LearnedState for Slots {
            fn get(&self, k: usize, c: usize) -> f32 {
                self.0[2 * c + k]
            }
            fn set(&mut self, k: usize, c: usize, value: f32) {
                self.0[2 * c + k] = value;
            }
        }
        // Two columns, one per lane: the second with other inputs and state.
        let columns: Vec<LearnedColumn> = (0..2)
            .map(|c| LearnedColumn {
                ctrl_column: c,
                kind: LEARNED_LSTM,
                num_layers: 1,
                lstm_layers: 1,
                hidden: 1,
                ..LearnedColumn::default()
            })
            .collect();
        let (x, h, c) = ([0.5f32, -1.5], 0.3f32, -0.2f32);
        let mut state = Slots(vec![h, c, -h, 2.0 * c]);
        let mut errors = [0.0f32; NET_LANES];
        let mut vels = [0.0f32; NET_LANES];
        (errors[0], vels[0], errors[1], vels[1]) = (x[0], x[1], 2.0 * x[0], -x[1]);
        let mut lanes = [[[0.0f32; NET_LANES]; NET_MAX_WIDTH]; 2];
        let out = stage.lstm_lanes(&columns, errors, vels, &mut state, &mut lanes);
        let (h_new, c_new) = ([state.0[0]], [state.0[1]]);
        assert_eq!(
            out[0].to_bits(),
            h_new[0].to_bits(),
            "no head: the output is h"
        );
        let mut second = Slots(vec![0.0, 0.0, -h, 2.0 * c]);
        let mut lanes = [[[0.0f32; NET_LANES]; NET_MAX_WIDTH]; 2];
        let (e1, v1) = ([errors[1]; NET_LANES], [vels[1]; NET_LANES]);
        stage.lstm_lanes(&columns[1..], e1, v1, &mut second, &mut lanes);
        assert_eq!(
            &second.0[2..],
            &state.0[2..],
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
