//! The host-side twins of the WGSL structs and constants in
//! `shaders/step.wgsl`, and their construction from a [`Plan`].

use bytemuck::{Pod, Zeroable};
use sinew_core::delay::DelayParams;
use sinew_core::plan::TargetSource;
use sinew_core::{Plan, Stage};

/// Threads per workgroup of every kernel but the one-dispatch step's
/// (`WORKGROUP_SIZE` in `common.wgsl`).
pub const WORKGROUP_SIZE: u32 = 64;

/// Threads per workgroup of the one-dispatch step (`env_stage`, whose
/// workgroups hold whole envs; `ENV_WORKGROUP_SIZE` in `common.wgsl`): the
/// most WebGPU's default limits allow, so that plans of up to this many
/// ctrl columns fit and few threads idle (29 columns: 8 envs in 232 of
/// 256 threads).
pub const ENV_WORKGROUP_SIZE: u32 = 256;

/// `ColumnDesc.buffer` of an undelayed column.
pub const NO_BUFFER: u32 = u32::MAX;

/// Sizes and parameter-table offsets of one backend (WGSL `Dims`, binding 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Pod, Zeroable)]
#[repr(C)]
pub struct Dims {
    /// Envs.
    pub num_envs: u32,
    /// Command columns.
    pub num_targets: u32,
    /// Ctrl columns.
    pub num_ctrl: u32,
    /// Floats of ring per env.
    pub ring_stride: u32,
    /// Delay buffers.
    pub num_buffers: u32,
    /// Claimed command-column ranges.
    pub num_claimed: u32,
    /// Offset of the claimed `(start, len)` pairs in the words table.
    pub claimed_offset: u32,
    /// The lag RNG's seed.
    pub seed: u32,
    /// Parameter slots ([`Plan::num_param_slots`]): the params buffer
    /// starts with `[slot][env][ctrl]` tables.
    pub num_param_slots: u32,
    /// State slots ([`Plan::num_state_slots`]): the state buffer holds
    /// `[slot][env][ctrl]` tables, then as many for the next state.
    pub num_state_slots: u32,
    /// Offset of the group data ([`Plan::group_data`]) in the params buffer.
    pub data_offset: u32,
    /// MuJoCo-law actuators ([`sinew_core::MjStage::actuators`]).
    pub num_mj: u32,
    /// Offset in the words table of the MuJoCo paths: `(column, coef bits)`.
    pub mj_path_offset: u32,
    /// Offset of the tendon limits: `(lo bits, hi bits, members offset, members len)`.
    pub mj_tendon_offset: u32,
    /// Tendon limits.
    pub num_tendon_limits: u32,
    /// Offset of the joint limits: `(joint, lo bits, hi bits)`.
    pub mj_joint_offset: u32,
    /// Joint limits.
    pub num_joint_limits: u32,
    /// Width of a joint-effort row ([`sinew_core::MjStage::effort_width`]).
    pub effort_width: u32,
    /// Learned columns ([`sinew_core::LearnedStage::columns`]).
    pub num_learned: u32,
    /// Offset in the words table of the [`sinew_core::LearnedColumn`]s (15 words each).
    pub learned_columns_offset: u32,
    /// Offset of the [`sinew_core::NetLayer`]s (8 words each), their weight
    /// and bias offsets in the network buffer's groups of four
    /// ([`net_vectors`]).
    pub net_layers_offset: u32,
    /// Offset of the taps.
    pub learned_taps_offset: u32,
    /// Input planes ([`Plan::input_planes`]): `[plane][env][target]` in
    /// the state buffer after the state and the next state.
    pub num_inputs: u32,
    /// Output planes ([`Plan::output_planes`]): `[plane][env][ctrl]` in the
    /// state buffer after the input planes.
    pub num_outputs: u32,
    /// Offset in the words table of the force coupling's members: their
    /// count, the raw-force output plane, the `act_dot` output plane, then
    /// each [`sinew_core::MjMember`] (four words).
    pub mj_members_offset: u32,
    /// Offset in the words table of the per-element MuJoCo stage, or
    /// [`NO_ELEMENTS`] when the stage runs per env: per ctrl column its
    /// actuator, [`MJ_LAW_ELEMENT`] with a law member's path entry, or
    /// [`sinew_core::MJ_FROM_LAW`]. A plan has one when each member of its
    /// stage (MuJoCo actuator or law member) has a one-entry path, no
    /// tendon range couples them and no two members drive one joint.
    pub mj_element_offset: u32,
}

/// `Dims::mj_element_offset` of a plan whose MuJoCo stage runs per env.
pub const NO_ELEMENTS: u32 = u32::MAX;

/// The flag of a per-element stage's word for a law member (a kind that
/// joins the force coupling through its own law, MuJoCo 4's `dcmotor` and
/// `pid`): the rest of the word is the offset of its one path entry.
pub const MJ_LAW_ELEMENT: u32 = 1 << 31;

/// The per-element MuJoCo stage's words ([`Dims::mj_element_offset`]),
/// when the law stage can compute each member in its own thread: each
/// member's force depends on its own column (and its path's joints) alone,
/// as in a [`MjStage::plain`](sinew_core::MjStage::plain) stage: no tendon
/// range couples them; each law member (MuJoCo 4's `dcmotor` and `pid`,
/// beside actuators or alone) has a one-entry path; and no two members'
/// paths reach one joint (each joint effort has one writer, so no thread
/// sums another's). A joint no member drives
/// keeps the 0 its buffer was made with: only an env at fault and the
/// per-env stage write it, and they write 0.
fn mj_elements(mj: &sinew_core::MjStage, num_ctrl: usize) -> Option<Vec<u32>> {
    // (An actuator's thread writes the effort of each joint of its path;
    // a law member's element word holds its one path entry.)
    let separate = mj.tendon_limits.is_empty()
        && (mj.members.iter()).all(|m| {
            m.actuator != sinew_core::MJ_FROM_LAW
                || (m.path_len == 1 && m.path_offset < MJ_LAW_ELEMENT)
        });
    if mj.members.is_empty() || !separate {
        return None;
    }
    let mut driven = vec![false; mj.effort_width()];
    let mut words = vec![sinew_core::MJ_FROM_LAW; num_ctrl];
    for m in &mj.members {
        words[m.ctrl_column as usize] = match m.actuator {
            sinew_core::MJ_FROM_LAW => MJ_LAW_ELEMENT | m.path_offset,
            k => k,
        };
        for e in mj.member_path(m) {
            if let Some(seen) = driven.get_mut(e.column as usize) {
                if std::mem::replace(seen, true) {
                    return None;
                }
            }
        }
    }
    Some(words)
}

/// Whether `plan`'s step can be one dispatch (`env_stage`): an env's ctrl
/// columns fit in a workgroup, and its MuJoCo stage, if it has one, runs
/// per element ([`mj_elements`]), so that an env needs the per-env stage
/// only when a control is wild, which the thread that ends the env runs.
pub(crate) fn fits_env_stage(plan: &Plan) -> bool {
    let num_ctrl = plan.num_ctrl();
    let mj = plan.mj();
    (1..=ENV_WORKGROUP_SIZE as usize).contains(&num_ctrl)
        && (mj.members.is_empty() || mj_elements(mj, num_ctrl).is_some())
}

/// One ctrl column (WGSL `ColumnDesc`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Pod, Zeroable)]
#[repr(C)]
pub struct ColumnDesc {
    /// Its [`sinew_core::KindId`].
    pub kind: u32,
    /// Its [`sinew_core::CommandField`].
    pub field: u32,
    /// Command column of its target.
    pub cmd_column: u32,
    /// Its delay buffer, or [`NO_BUFFER`].
    pub buffer: u32,
    /// Its column in that buffer's ring frame.
    pub ring_column: u32,
    /// A learned column's index in [`sinew_core::LearnedStage::columns`] (0 otherwise).
    pub aux: u32,
    /// Offset of its group's data in the group data.
    pub data_offset: u32,
    /// Length of its group's data.
    pub data_len: u32,
}

/// One delay buffer (WGSL `BufferDesc`).
#[derive(Debug, Clone, Copy, PartialEq, Pod, Zeroable)]
#[repr(C)]
pub struct BufferDesc {
    /// The schedule.
    pub params: DelayParams,
    /// Offset of its ring in an env's ring row (floats).
    pub ring_offset: u32,
    /// Columns per field in a frame.
    pub num_columns: u32,
    /// Offset in the words table of its columns' command columns.
    pub columns_offset: u32,
    /// Padding.
    pub _pad: u32,
}

/// Everything the kernels read that a plan fixes.
pub(crate) struct Layout {
    pub dims: Dims,
    pub columns: Vec<ColumnDesc>,
    pub buffers: Vec<BufferDesc>,
    pub words: Vec<u32>,
    /// Floats of the params buffer.
    pub params_len: usize,
    /// The network buffer ([`net_vectors`]).
    pub net_weights: Vec<[f32; 4]>,
}

impl Layout {
    pub fn new(plan: &Plan) -> Layout {
        let (num_envs, num_ctrl) = (plan.num_envs(), plan.num_ctrl());
        let mut columns = vec![ColumnDesc::default(); num_ctrl];
        let learned_index = |c: usize| {
            plan.learned()
                .columns
                .iter()
                .position(|l| l.ctrl_column as usize == c)
                .map_or(0, |k| k as u32)
        };
        for run in plan.runs() {
            let group = &plan.groups()[run.group];
            for k in 0..run.len {
                let (buffer, ring_column) = match run.targets {
                    TargetSource::Cmd => (NO_BUFFER, 0),
                    TargetSource::Ring { buffer, column } => (buffer as u32, (column + k) as u32),
                };
                let aux = match group.stage {
                    Stage::Learned => learned_index(run.ctrl_start + k),
                    Stage::Law | Stage::MuJoCo => 0,
                };
                columns[run.ctrl_start + k] = ColumnDesc {
                    kind: run.kind as u32,
                    field: run.field as u32,
                    cmd_column: (run.cmd_start + k) as u32,
                    buffer,
                    ring_column,
                    aux,
                    data_offset: group.data_offset as u32,
                    data_len: group.data_len as u32,
                };
            }
        }
        let mut words = Vec::new();
        let buffers = plan
            .buffers()
            .iter()
            .map(|b| {
                let columns_offset = words.len() as u32;
                words.extend(b.cmd_columns.iter().map(|&c| c as u32));
                BufferDesc {
                    params: b.params,
                    ring_offset: b.ring_offset as u32,
                    num_columns: b.cmd_columns.len() as u32,
                    columns_offset,
                    _pad: 0,
                }
            })
            .collect();
        let claimed_offset = words.len() as u32;
        for &(start, len) in plan.claimed_columns() {
            words.extend([start as u32, len as u32]);
        }
        let mj = plan.mj();
        let mj_path_offset = words.len() as u32;
        for e in &mj.path {
            words.extend([e.column, e.coef.to_bits()]);
        }
        let mj_tendon_offset = words.len() as u32;
        let mut members_at = mj_tendon_offset as usize + 4 * mj.tendon_limits.len();
        for limit in &mj.tendon_limits {
            let len = limit.members.len();
            words.extend([
                limit.lo.to_bits(),
                limit.hi.to_bits(),
                members_at as u32,
                len as u32,
            ]);
            members_at += len;
        }
        for limit in &mj.tendon_limits {
            words.extend(&limit.members);
        }
        let mj_joint_offset = words.len() as u32;
        for &(joint, [lo, hi]) in &mj.joint_limits {
            words.extend([joint, lo.to_bits(), hi.to_bits()]);
        }
        let mj_members_offset = words.len() as u32;
        words.extend([mj.members.len() as u32, mj.raw_plane, mj.act_dot_plane]);
        words.extend_from_slice(bytemuck::cast_slice(&mj.members));
        let mj_element_offset = match mj_elements(mj, num_ctrl) {
            Some(elements) => {
                let at = words.len() as u32;
                words.extend(elements);
                at
            }
            None => NO_ELEMENTS,
        };
        let learned = plan.learned();
        let learned_columns_offset = words.len() as u32;
        words.extend_from_slice(bytemuck::cast_slice(&learned.columns));
        let net_layers_offset = words.len() as u32;
        let (layers, net_weights) = net_vectors(learned);
        words.extend_from_slice(bytemuck::cast_slice(&layers));
        let learned_taps_offset = words.len() as u32;
        words.extend(&learned.taps);
        let mut params_len = plan.num_param_slots() * num_envs * num_ctrl;
        let data_offset = params_len as u32;
        params_len += plan.group_data().len();
        Layout {
            dims: Dims {
                num_envs: num_envs as u32,
                num_targets: plan.num_targets() as u32,
                num_ctrl: num_ctrl as u32,
                ring_stride: plan.ring_stride() as u32,
                num_buffers: plan.buffers().len() as u32,
                num_claimed: plan.claimed_columns().len() as u32,
                claimed_offset,
                seed: plan.seed(),
                num_param_slots: plan.num_param_slots() as u32,
                num_state_slots: plan.num_state_slots() as u32,
                data_offset,
                num_mj: mj.actuators.len() as u32,
                mj_path_offset,
                mj_tendon_offset,
                num_tendon_limits: mj.tendon_limits.len() as u32,
                mj_joint_offset,
                num_joint_limits: mj.joint_limits.len() as u32,
                effort_width: mj.effort_width() as u32,
                num_learned: learned.columns.len() as u32,
                learned_columns_offset,
                net_layers_offset,
                learned_taps_offset,
                num_inputs: plan.input_planes().len() as u32,
                num_outputs: plan.output_planes().len() as u32,
                mj_members_offset,
                mj_element_offset,
            },
            columns,
            buffers,
            words,
            params_len,
            net_weights,
        }
    }
}

/// The learned stage's networks as the kernels read them: every weight and
/// bias in groups of four that one vector load takes (the network buffer,
/// binding 13), and each layer with its offsets in those groups. A dense
/// layer's `W` (`[inputs][outputs]`) and `b` keep their order, each row
/// padded with zeros to a multiple of four outputs: the four outputs a
/// thread sums at a time. An LSTM layer's `Wih`, `Whh`, `bih` and `bhh`
/// hold each unit's four gates together (`[row][unit][gate]`), where the
/// CPU's rows hold them a hidden size apart ([`sinew_core::NetLayer`]): a
/// unit's four gates share each input's read. One vector read where four
/// scalar reads were: on lavapipe the MLP's and the LSTM's steps took 40 %
/// and 44 % less time so (BENCHMARKS.md).
pub fn net_vectors(
    learned: &sinew_core::LearnedStage,
) -> (Vec<sinew_core::NetLayer>, Vec<[f32; 4]>) {
    let w = &learned.weights;
    let mut vectors: Vec<[f32; 4]> = Vec::new();
    let mut layers = Vec::with_capacity(learned.layers.len());
    for layer in &learned.layers {
        let (inputs, outputs) = (layer.inputs as usize, layer.outputs as usize);
        // Appends `rows` rows of `groups` groups, lane `k` of group `q` of
        // row `r` from `at(r, q, k)` (None: a zero); returns their offset.
        let mut push =
            |rows: usize, groups: usize, at: &dyn Fn(usize, usize, usize) -> Option<usize>| {
                let offset = vectors.len() as u32;
                for r in 0..rows {
                    for q in 0..groups {
                        vectors.push(std::array::from_fn(|k| at(r, q, k).map_or(0.0, |i| w[i])));
                    }
                }
                offset
            };
        let (weight, bias) = (layer.weight as usize, layer.bias as usize);
        layers.push(if layer.kind == sinew_core::net::NET_LSTM {
            // Row r, unit q, gate k: `r·4·hidden + k·hidden + q` in the CPU's.
            let gates = |base: usize| {
                move |r: usize, q: usize, k: usize| Some(base + r * 4 * outputs + k * outputs + q)
            };
            sinew_core::NetLayer {
                weight: push(inputs, outputs, &gates(weight)),
                bias: push(1, outputs, &gates(bias)),
                weight_hh: push(outputs, outputs, &gates(layer.weight_hh as usize)),
                bias_hh: push(1, outputs, &gates(layer.bias_hh as usize)),
                ..*layer
            }
        } else {
            let groups = outputs.div_ceil(4);
            // Row r, outputs 4q..4q + 4.
            let padded = |base: usize| {
                move |r: usize, q: usize, k: usize| {
                    (4 * q + k < outputs).then_some(base + r * outputs + 4 * q + k)
                }
            };
            sinew_core::NetLayer {
                weight: push(inputs, groups, &padded(weight)),
                bias: push(1, groups, &padded(bias)),
                ..*layer
            }
        });
    }
    (layers, vectors)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sinew_core::net::{NET_DENSE, NET_LSTM};
    use sinew_core::{LearnedStage, NetLayer};

    /// Each weight's value is its index in the CPU's table, so each lane
    /// shows where it came from.
    #[test]
    fn network_vectors_hold_four_outputs_or_a_units_four_gates() {
        // An LSTM of 1 input and 2 units (Wih 1 × 8 at 0, bih 8 at 8, Whh
        // 2 × 8 at 16, bhh 8 at 32), then a dense layer of 2 inputs and 5
        // outputs (W 2 × 5 at 40, b 5 at 50).
        let lstm = NetLayer {
            kind: NET_LSTM,
            inputs: 1,
            outputs: 2,
            weight: 0,
            bias: 8,
            weight_hh: 16,
            bias_hh: 32,
            ..NetLayer::default()
        };
        let dense = NetLayer {
            kind: NET_DENSE,
            inputs: 2,
            outputs: 5,
            weight: 40,
            bias: 50,
            ..NetLayer::default()
        };
        let learned = LearnedStage {
            weights: (0..55).map(|i| i as f32).collect(),
            layers: vec![lstm, dense],
            ..LearnedStage::default()
        };
        let (layers, vectors) = net_vectors(&learned);
        // Unit u's gates k sit `k·hidden + u` into a row of 8.
        let lstm_rows = [
            [0.0, 2.0, 4.0, 6.0],
            [1.0, 3.0, 5.0, 7.0],
            [8.0, 10.0, 12.0, 14.0],
            [9.0, 11.0, 13.0, 15.0],
            [16.0, 18.0, 20.0, 22.0],
            [17.0, 19.0, 21.0, 23.0],
            [24.0, 26.0, 28.0, 30.0],
            [25.0, 27.0, 29.0, 31.0],
            [32.0, 34.0, 36.0, 38.0],
            [33.0, 35.0, 37.0, 39.0],
        ];
        // Five outputs in two groups, the second padded with zeros.
        let dense_rows = [
            [40.0, 41.0, 42.0, 43.0],
            [44.0, 0.0, 0.0, 0.0],
            [45.0, 46.0, 47.0, 48.0],
            [49.0, 0.0, 0.0, 0.0],
            [50.0, 51.0, 52.0, 53.0],
            [54.0, 0.0, 0.0, 0.0],
        ];
        assert_eq!(vectors, [&lstm_rows[..], &dense_rows[..]].concat());
        let offsets = |l: &NetLayer| [l.weight, l.bias, l.weight_hh, l.bias_hh];
        assert_eq!(offsets(&layers[0]), [0, 2, 4, 8]);
        assert_eq!(offsets(&layers[1]), [10, 14, 0, 0]);
        assert_eq!((layers[1].inputs, layers[1].outputs), (2, 5));
    }
}
