//! The host-side twins of the WGSL structs and constants in
//! `shaders/step.wgsl`, and their construction from a [`Plan`].

use bytemuck::{Pod, Zeroable};
use sinew_core::delay::DelayParams;
use sinew_core::plan::TargetSource;
use sinew_core::{Law, Param, Plan};

/// Threads per workgroup of every kernel (`WORKGROUP_SIZE` in `common.wgsl`).
pub const WORKGROUP_SIZE: u32 = 64;

/// `ColumnDesc.law` of an ideal PD column.
pub const LAW_IDEAL_PD: u32 = 0;
/// `ColumnDesc.law` of a DC motor column.
pub const LAW_DC_MOTOR: u32 = 1;
/// `ColumnDesc.law` of a pass-through column (its `field` says which).
pub const LAW_PASS_THROUGH: u32 = 2;
/// `ColumnDesc.law` of a MuJoCo-law column: the law stage forwards its
/// `field`, the output stage's MuJoCo stage computes the force.
pub const LAW_MJ_GENERAL: u32 = 3;
/// `ColumnDesc.law` of a learned MLP column (its `field` is its index in
/// [`sinew_core::LearnedStage::columns`]).
pub const LAW_LEARNED_MLP: u32 = 4;
/// `ColumnDesc.law` of a learned LSTM column (likewise).
pub const LAW_LSTM_NET: u32 = 5;
/// `ColumnDesc.buffer` of an undelayed column.
pub const NO_BUFFER: u32 = u32::MAX;

/// Sizes and parameter-table offsets of one backend (WGSL `Dims`, the uniform).
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
    /// Offset of the stiffness table in the params buffer (0 when no group
    /// has the parameter: then no column reads it). Likewise the next four.
    pub stiffness_offset: u32,
    /// Offset of the damping table.
    pub damping_offset: u32,
    /// Offset of the effort-limit table.
    pub effort_limit_offset: u32,
    /// Offset of the saturation-effort table.
    pub saturation_effort_offset: u32,
    /// Offset of the velocity-limit table.
    pub velocity_limit_offset: u32,
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
    /// Offset in the words table of the [`sinew_core::LearnedColumn`]s (16 words each).
    pub learned_columns_offset: u32,
    /// Offset of the [`sinew_core::NetLayer`]s (8 words each).
    pub net_layers_offset: u32,
    /// Offset of the taps.
    pub learned_taps_offset: u32,
    /// Offset of the network weights in the params buffer.
    pub net_weights_offset: u32,
    /// u32s of learned state per env ([`sinew_core::LearnedStage::state_stride`]).
    pub learned_stride: u32,
    /// [`sinew_core::LearnedStage::period`].
    pub learned_period: u32,
    /// Padding to a multiple of 16 bytes (uniform layout).
    pub _pad: u32,
}

impl Dims {
    /// The table offset of a parameter.
    pub fn param_offset(&self, param: Param) -> u32 {
        match param {
            Param::Stiffness => self.stiffness_offset,
            Param::Damping => self.damping_offset,
            Param::EffortLimit => self.effort_limit_offset,
            Param::SaturationEffort => self.saturation_effort_offset,
            Param::VelocityLimit => self.velocity_limit_offset,
        }
    }
}

/// One ctrl column (WGSL `ColumnDesc`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Pod, Zeroable)]
#[repr(C)]
pub struct ColumnDesc {
    /// One of the `LAW_*` codes.
    pub law: u32,
    /// The forwarded [`sinew_core::CommandField`] of a pass-through or
    /// MuJoCo-law column; a learned column's index in
    /// [`sinew_core::LearnedStage::columns`].
    pub field: u32,
    /// Command column of its target.
    pub cmd_column: u32,
    /// Its delay buffer, or [`NO_BUFFER`].
    pub buffer: u32,
    /// Its column in that buffer's ring frame.
    pub ring_column: u32,
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

/// `(law code, field)` of a law.
pub fn law_code(law: Law) -> (u32, u32) {
    match law {
        Law::IdealPd => (LAW_IDEAL_PD, 0),
        Law::DcMotor => (LAW_DC_MOTOR, 0),
        Law::PassThrough(field) => (LAW_PASS_THROUGH, field as u32),
        Law::MjGeneral(field) => (LAW_MJ_GENERAL, field as u32),
        Law::LearnedMlp => (LAW_LEARNED_MLP, 0),
        Law::LstmNet => (LAW_LSTM_NET, 0),
    }
}

/// Everything the kernels read that a plan fixes.
pub(crate) struct Layout {
    pub dims: Dims,
    pub columns: Vec<ColumnDesc>,
    pub buffers: Vec<BufferDesc>,
    pub words: Vec<u32>,
    /// Floats of the params buffer.
    pub params_len: usize,
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
            let (law, field) = law_code(run.law);
            for k in 0..run.len {
                let (buffer, ring_column) = match run.targets {
                    TargetSource::Cmd => (NO_BUFFER, 0),
                    TargetSource::Ring { buffer, column } => (buffer as u32, (column + k) as u32),
                };
                let field = match run.law {
                    Law::LearnedMlp | Law::LstmNet => learned_index(run.ctrl_start + k),
                    _ => field,
                };
                columns[run.ctrl_start + k] = ColumnDesc {
                    law,
                    field,
                    cmd_column: (run.cmd_start + k) as u32,
                    buffer,
                    ring_column,
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
        let learned = plan.learned();
        let learned_columns_offset = words.len() as u32;
        words.extend_from_slice(bytemuck::cast_slice(&learned.columns));
        let net_layers_offset = words.len() as u32;
        words.extend_from_slice(bytemuck::cast_slice(&learned.layers));
        let learned_taps_offset = words.len() as u32;
        words.extend(&learned.taps);
        let mut offsets = [0u32; 5];
        let mut params_len = 0;
        for p in Param::ALL {
            if plan.param_defaults(p).is_some() {
                offsets[p as usize] = params_len as u32;
                params_len += num_envs * num_ctrl;
            }
        }
        let net_weights_offset = params_len as u32;
        params_len += learned.weights.len();
        let [stiffness_offset, damping_offset, effort_limit_offset, saturation_effort_offset, velocity_limit_offset] =
            offsets;
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
                stiffness_offset,
                damping_offset,
                effort_limit_offset,
                saturation_effort_offset,
                velocity_limit_offset,
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
                net_weights_offset,
                learned_stride: learned.state_stride as u32,
                learned_period: learned.period,
                _pad: 0,
            },
            columns,
            buffers,
            words,
            params_len,
        }
    }
}
