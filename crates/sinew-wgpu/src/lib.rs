//! Sinew's GPU backend: the laws of `sinew-core` as WGSL compute kernels
//! (`shaders/` at the repository root) over buffers that stay on the device.
//!
//! A step writes the command (past 64 KiB) into one of two host-visible
//! buffers it keeps mapped between steps, copies it to the device, records
//! its dispatches (the law stage, one thread per element, which first
//! commits the state the last step kept; the output stage, one thread per
//! env) into one compute pass, and submits once, for all groups. Nothing
//! comes back until asked ([`Backend::read_ctrl`],
//! [`Backend::nonfinite_envs`], …); what the caller read after one step
//! (its ctrl, its report, its joint efforts) the next step copies into a
//! host-visible buffer in its own submission, so a loop that steps and reads
//! waits for the device once per step. Setters and resets write only the rows
//! they touch. [`WgpuBackend::encode_step`] records the step into a caller's
//! encoder over caller-owned buffers, for simulators that live on the GPU.
//!
//! ```
//! use sinew_core::{ActuatorCmd, Backend, GroupCfg, IdealPdCfg, Plan, PlanOptions, Robot};
//! use sinew_wgpu::{GpuContext, WgpuBackend};
//!
//! let robot = Robot::from_joints(["hip", "knee"]);
//! let groups = vec![GroupCfg::new("leg", [".*"], IdealPdCfg::new(10.0, 0.0))];
//! let plan = Plan::new(&robot, groups, 2, PlanOptions::default())?;
//! let Ok(context) = GpuContext::shared() else {
//!     return Ok(()); // no adapter on this machine
//! };
//! let mut gpu = WgpuBackend::new(&context, plan)?;
//! let mut cmd = ActuatorCmd::zeros(2, 2);
//! cmd.position_target.copy_from_slice(&[0.1, 0.2, 0.3, 0.4]);
//! gpu.step(&cmd)?;
//! let mut ctrl = [0.0f32; 4];
//! gpu.read_ctrl(&mut ctrl)?;
//! assert_eq!(ctrl, [1.0, 2.0, 3.0, 4.0]);
//! # Ok::<(), sinew_core::Error>(())
//! ```

mod context;
pub mod layout;
pub mod shaders;
mod upload;

use std::sync::{mpsc, Arc};

use bytemuck::Pod;
use sinew_core::net::{LearnedColumn, LearnedStage};
use sinew_core::{
    AsCmd, Backend, ColumnOrder, DelayState, EnvIds, Error, Lags, ParamRef, Plan, Source, Values,
};
use wgpu::util::DeviceExt;

pub use context::{GpuContext, STORAGE_BUFFERS_PER_STAGE};
use context::{Pipelines, Stage};
use layout::{Dims, Layout};
pub use layout::{ENV_WORKGROUP_SIZE, WORKGROUP_SIZE};
use upload::Upload;

/// Bytes of one [`DelayState`] on the device.
const STATE_BYTES: u64 = std::mem::size_of::<DelayState>() as u64;
/// The smallest buffer made: one element of the largest struct a binding
/// holds ([`sinew_core::MjActuator`]), rounded up.
const MIN_BUFFER_BYTES: usize = 160;

/// How a step dispatches its kernels ([`WgpuBackend::set_dispatches`]).
/// Each computes the same operations in the same order; only the time
/// differs.
///
/// A step is one dispatch where the plan allows it: its workgroups of
/// [`ENV_WORKGROUP_SIZE`] threads hold whole envs, one thread per (env,
/// ctrl column), and after a barrier one thread per env ends its env (its
/// verdict, the delay heads and lag draws), so no verdict goes through
/// memory and no second dispatch waits for the first. The plan allows it
/// when an env's ctrl columns fit in a workgroup and its MuJoCo stage, if
/// it has one, runs per element (where a control past MuJoCo's bound makes
/// each actuator of the env run again with a zero control, after a second
/// barrier); the device must allow workgroups of [`ENV_WORKGROUP_SIZE`]
/// threads (WebGPU's default limits do). Else a step is two dispatches:
/// one thread per (env, ctrl column), then one per env.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Dispatches {
    /// One dispatch where allowed on a hardware GPU; two on a software
    /// adapter, where one took 3–13× as long (lavapipe, 1024 × 29: PD 7.1
    /// ms against 0.55, mujoco 11.7 against 2.4; its 256-thread workgroups
    /// and its workgroup memory behind a barrier each about doubled the
    /// time).
    #[default]
    Auto,
    /// One dispatch wherever the plan and the device allow it.
    One,
    /// Two dispatches every step.
    Two,
}

/// The GPU backend: parameter tables, delay rings and states in device memory.
pub struct WgpuBackend {
    ctx: GpuContext,
    plan: Plan,
    dims: Dims,
    /// The kernels, specialized to the plan's kinds and delays.
    pipelines: Arc<Pipelines>,
    /// What they were made for; `env_stage` as [`WgpuBackend::set_dispatches`]
    /// last chose.
    spec: shaders::Specialization,
    /// Host copy of the params buffer (only the host writes it).
    params_host: Vec<f32>,
    buffers: DeviceBuffers,
    bind_group: wgpu::BindGroup,
    /// The bind group of the last `encode_step` buffers.
    external: Option<(wgpu::Buffer, wgpu::Buffer, wgpu::BindGroup)>,
    staging: Option<wgpu::Buffer>,
    /// The command's way to the device.
    upload: Upload,
    /// The results [`Backend::step`] copies for the host in its own
    /// submission.
    readback: Readback,
    step: u32,
    nonfinite: Vec<u32>,
    nonfinite_fresh: bool,
    output_external: bool,
}

/// A step's results the host reads back: its non-finite report, its ctrl,
/// its joint efforts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Flags,
    Ctrl,
    Effort,
}

impl Part {
    const ALL: [Part; 3] = [Part::Flags, Part::Ctrl, Part::Effort];
}

/// The host-visible buffer into which [`Backend::step`] copies, in the
/// step's own submission, each [`Part`] the caller read after the step
/// before. A training loop reads the same parts every step; without this,
/// each read was a submission and a wait of its own: on lavapipe each costs
/// about as much as the step's own submission and wait (45–60 µs), and on a
/// hardware GPU a round trip through the driver.
struct Readback {
    buffer: wgpu::Buffer,
    /// Each part's byte range in `buffer`, starting at a multiple of
    /// [`wgpu::MAP_ALIGNMENT`].
    ranges: [std::ops::Range<u64>; 3],
    /// The parts `buffer` holds for the last step.
    holds: [bool; 3],
    /// The parts read since the last step: the next step copies them.
    wanted: [bool; 3],
    /// Whether `buffer` is mapped (until the next step copies into it).
    mapped: bool,
}

impl Readback {
    /// A buffer with room for parts of `bytes` bytes each.
    fn new(device: &wgpu::Device, bytes: [u64; 3]) -> Readback {
        let mut end = 0;
        let ranges = bytes.map(|len| {
            let start = end;
            end = (start + len).next_multiple_of(wgpu::MAP_ALIGNMENT);
            start..start + len
        });
        let buffer = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("sinew step readback"),
            size: end.max(wgpu::MAP_ALIGNMENT),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        Readback {
            buffer,
            ranges,
            holds: [false; 3],
            wanted: [false; 3],
            mapped: false,
        }
    }
}

struct DeviceBuffers {
    dims: wgpu::Buffer,
    cmd: wgpu::Buffer,
    ctrl: wgpu::Buffer,
    params: wgpu::Buffer,
    ring: wgpu::Buffer,
    states: wgpu::Buffer,
    flags: wgpu::Buffer,
    columns: wgpu::Buffer,
    descs: wgpu::Buffer,
    words: wgpu::Buffer,
    mj: wgpu::Buffer,
    effort: wgpu::Buffer,
    state: wgpu::Buffer,
    net_weights: wgpu::Buffer,
}

impl std::fmt::Debug for WgpuBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WgpuBackend")
            .field("adapter", &self.ctx.description())
            .field("num_envs", &self.plan.num_envs())
            .field("num_ctrl", &self.plan.num_ctrl())
            .field("steps_taken", &self.step)
            .finish_non_exhaustive()
    }
}

impl WgpuBackend {
    /// Allocates every table and history of the plan on the context's device.
    /// Fails when a buffer would exceed the device's limits or the kernels
    /// for the plan's kinds do not compile.
    pub fn new(ctx: &GpuContext, plan: Plan) -> Result<Self, Error> {
        let layout = Layout::new(&plan);
        let (num_envs, num_ctrl) = (plan.num_envs(), plan.num_ctrl());
        let nb = plan.buffers().len();
        let plane = num_envs * plan.num_targets();

        // The device's limits first: a plan too big for it is an error
        // before any host table is filled.
        let mj = plan.mj();
        let device = ctx.device();
        let limits = device.limits();
        // Indices in the kernels are u32 element counts: stay below 4 GiB too.
        let max_bytes = limits
            .max_storage_buffer_binding_size
            .min(limits.max_buffer_size)
            .min(u64::from(u32::MAX));
        let check = |what: &str, bytes: usize| {
            if bytes as u64 > max_bytes {
                Err(Error::Gpu {
                    what: "allocation",
                    message: format!(
                        "the {what} buffer needs {bytes} bytes and the device binds at most \
                         {max_bytes}; use fewer envs (or a shorter max_lag) per backend"
                    ),
                    source: None,
                })
            } else {
                Ok(())
            }
        };
        check("command", 5 * plane * 4)?;
        check("ctrl", num_envs * num_ctrl * 4)?;
        check("parameter", layout.params_len * 4)?;
        check("network", layout.net_weights.len() * 16)?;
        check("delay ring", num_envs * plan.ring_stride() * 4)?;
        check("delay state", num_envs * nb * STATE_BYTES as usize)?;
        check("joint effort", num_envs * mj.effort_width() * 4)?;
        // The state, the next state, the input planes, the output planes.
        let state_len = plan.num_state_slots() * num_envs * num_ctrl;
        let inputs_len = plan.input_planes().len() * plane;
        let outputs_len = plan.output_planes().len() * num_envs * num_ctrl;
        check(
            "kind state and plane",
            (2 * state_len + inputs_len + outputs_len) * 4,
        )?;
        check_loop_limit(ctx, &plan)?;
        let mut params_host = vec![0.0f32; layout.params_len];
        let plane_len = num_envs * num_ctrl;
        for (slot, defaults) in plan
            .param_defaults()
            .chunks_exact(num_ctrl.max(1))
            .enumerate()
        {
            for row in params_host[slot * plane_len..][..plane_len].chunks_exact_mut(num_ctrl) {
                row.copy_from_slice(defaults);
            }
        }
        let at = layout.dims.data_offset as usize;
        params_host[at..at + plan.group_data().len()].copy_from_slice(plan.group_data());
        // The state and the next state alike: the first law_stage commits
        // the next state of every env (their flags are clear).
        let mut state_host = vec![0.0f32; 2 * state_len + inputs_len + outputs_len];
        plan.reset_state(EnvIds::All, &mut state_host[..state_len]);
        state_host.copy_within(..state_len, state_len);
        state_host[2 * state_len..][..inputs_len].copy_from_slice(&plan.input_defaults());
        let mut states = vec![DelayState::default(); num_envs * nb];
        plan.reset_delay_states(EnvIds::All, &mut states, 0)?;

        let spec = specialization(ctx, &plan, Dispatches::Auto);
        let pipelines = ctx.pipelines(spec.clone())?;

        use wgpu::BufferUsages as U;
        let storage = U::STORAGE | U::COPY_DST | U::COPY_SRC;
        let init = |label: &str, contents: &[u8], usage: U| {
            // A binding holds at least one element of its largest struct
            // (`MjActuator`, 156 bytes), even when the plan has none.
            let mut padded;
            let contents = if contents.len() < MIN_BUFFER_BYTES {
                padded = contents.to_vec();
                padded.resize(MIN_BUFFER_BYTES, 0);
                &padded[..]
            } else {
                contents
            };
            device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents,
                usage,
            })
        };
        let zeroed = |label: &str, bytes: usize| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: (bytes.max(MIN_BUFFER_BYTES) as u64).next_multiple_of(4),
                usage: storage,
                mapped_at_creation: false,
            })
        };
        let scope = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let buffers = DeviceBuffers {
            dims: init(
                "sinew dims",
                bytemuck::bytes_of(&layout.dims),
                U::STORAGE | U::COPY_DST,
            ),
            cmd: zeroed("sinew cmd", 5 * plane * 4),
            ctrl: zeroed("sinew ctrl", num_envs * num_ctrl * 4),
            params: init("sinew params", bytemuck::cast_slice(&params_host), storage),
            ring: zeroed("sinew ring", num_envs * plan.ring_stride() * 4),
            states: init("sinew states", bytemuck::cast_slice(&states), storage),
            // The report, each step's verdicts, each env's step count.
            flags: zeroed("sinew flags", 3 * num_envs * 4),
            columns: init(
                "sinew columns",
                bytemuck::cast_slice(&layout.columns),
                storage,
            ),
            descs: init(
                "sinew buffers",
                bytemuck::cast_slice(&layout.buffers),
                storage,
            ),
            words: init("sinew words", bytemuck::cast_slice(&layout.words), storage),
            mj: init(
                "sinew mujoco actuators",
                bytemuck::cast_slice(&mj.actuators),
                storage,
            ),
            effort: zeroed("sinew joint effort", num_envs * mj.effort_width() * 4),
            state: init(
                "sinew kind state",
                bytemuck::cast_slice(&state_host),
                storage,
            ),
            net_weights: init(
                "sinew network weights",
                bytemuck::cast_slice(&layout.net_weights),
                storage,
            ),
        };
        // The host-visible buffers too: the upload's two are as large as
        // the command buffer.
        let readback = Readback::new(
            device,
            [num_envs, num_envs * num_ctrl, num_envs * mj.effort_width()].map(|n| n as u64 * 4),
        );
        let upload = Upload::new(device, buffers.cmd.size());
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(Error::Gpu {
                what: "allocation",
                message: e.to_string(),
                source: Some(Source::new(e)),
            });
        }
        let bind_group = bind_group(ctx, &buffers, &buffers.cmd, &buffers.ctrl);
        Ok(WgpuBackend {
            ctx: ctx.clone(),
            plan,
            dims: layout.dims,
            pipelines,
            spec,
            params_host,
            buffers,
            bind_group,
            external: None,
            staging: None,
            upload,
            readback,
            step: 0,
            nonfinite: Vec::new(),
            nonfinite_fresh: true,
            output_external: false,
        })
    }

    /// A backend on a device the caller owns (see [`GpuContext::from_device`]).
    pub fn with_device(
        device: wgpu::Device,
        queue: wgpu::Queue,
        plan: Plan,
    ) -> Result<Self, Error> {
        WgpuBackend::new(&GpuContext::from_device(device, queue)?, plan)
    }

    /// The context (device, queue, adapter) this backend runs on.
    pub fn context(&self) -> &GpuContext {
        &self.ctx
    }

    /// Steps recorded since construction (the lag RNG's counter).
    pub fn steps_taken(&self) -> u32 {
        self.step
    }

    /// Chooses how the next steps dispatch their kernels (see
    /// [`Dispatches`]; a backend starts with [`Dispatches::Auto`]); returns
    /// how many dispatches a step then records: 1 where the plan and device
    /// allow one dispatch and `dispatches` asks for it, else 2. The
    /// operations do not change, only the time. Fails only when the kernels
    /// do not compile.
    pub fn set_dispatches(&mut self, dispatches: Dispatches) -> Result<usize, Error> {
        let spec = specialization(&self.ctx, &self.plan, dispatches);
        if spec != self.spec {
            self.pipelines = self.ctx.pipelines(spec.clone())?;
            self.spec = spec;
        }
        Ok(self.dispatches_per_step())
    }

    /// How many dispatches a step records: 1 (`env_stage`) or 2
    /// (`law_stage`, then `output_stage`). See [`Dispatches`].
    pub fn dispatches_per_step(&self) -> usize {
        self.pipelines.stages.len()
    }

    /// The backend's own ctrl buffer, `(num_envs, num_ctrl)` f32 row-major,
    /// written by [`Backend::step`]; bind it in your own pipelines to apply
    /// the efforts without a round trip through the host.
    pub fn ctrl_buffer(&self) -> &wgpu::Buffer {
        &self.buffers.ctrl
    }

    /// Bytes of the command buffer [`WgpuBackend::encode_step`] reads:
    /// five `(num_envs, num_targets)` f32 planes in
    /// [`CMD_FIELDS`](sinew_core::CMD_FIELDS) order.
    pub fn cmd_bytes(&self) -> u64 {
        5 * self.plane() as u64 * 4
    }

    /// Bytes of the ctrl buffer [`WgpuBackend::encode_step`] writes.
    pub fn ctrl_bytes(&self) -> u64 {
        (self.plan.num_envs() * self.plan.num_ctrl()) as u64 * 4
    }

    fn plane(&self) -> usize {
        self.plan.num_envs() * self.plan.num_targets()
    }

    /// Where the input planes start in the state buffer (floats): after the
    /// state and the next state. The output planes follow them.
    fn inputs_offset(&self) -> usize {
        2 * self.plan.num_state_slots() * self.plan.num_envs() * self.plan.num_ctrl()
    }

    /// Records one step into `encoder`, reading the command from `cmd` (see
    /// [`WgpuBackend::cmd_bytes`] for its layout) and writing ctrl into
    /// `ctrl_out`, both caller-owned buffers with `STORAGE` usage. Nothing
    /// crosses to the host; submit the encoder when you like. Delay state,
    /// lags and the non-finite report advance as with [`Backend::step`];
    /// [`Backend::read_ctrl`] refuses until the next [`Backend::step`],
    /// since the output is in `ctrl_out`.
    ///
    /// Steps recorded into one encoder run in order. Resets, setters and
    /// reads act at the next queue submission, so call them between
    /// submissions, not between steps of one encoder.
    pub fn encode_step(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        cmd: &wgpu::Buffer,
        ctrl_out: &wgpu::Buffer,
    ) -> Result<(), Error> {
        if cmd == ctrl_out {
            return Err(Error::Gpu {
                what: "encode_step",
                message: "the command and ctrl buffers are one buffer; a kernel cannot read \
                          and write one binding: pass two buffers"
                    .into(),
                source: None,
            });
        }
        for (what, buffer, bytes) in [
            ("command", cmd, self.cmd_bytes()),
            ("ctrl", ctrl_out, self.ctrl_bytes()),
        ] {
            if !buffer.usage().contains(wgpu::BufferUsages::STORAGE) || buffer.size() < bytes {
                return Err(Error::Gpu {
                    what: "encode_step",
                    message: format!(
                        "the {what} buffer must have STORAGE usage and at least {bytes} bytes; \
                         it has {:?} and {} bytes",
                        buffer.usage(),
                        buffer.size()
                    ),
                    source: None,
                });
            }
        }
        let reuse = matches!(&self.external, Some((c, o, _)) if c == cmd && o == ctrl_out);
        if !reuse {
            // A buffer wgpu refuses (another device's, a destroyed one) is an
            // error here, not a panic in wgpu's default handler.
            let scope = self
                .ctx
                .device()
                .push_error_scope(wgpu::ErrorFilter::Validation);
            let group = bind_group(&self.ctx, &self.buffers, cmd, ctrl_out);
            if let Some(e) = pollster::block_on(scope.pop()) {
                return Err(Error::Gpu {
                    what: "encode_step",
                    message: format!("the command or ctrl buffer cannot be bound: {e}"),
                    source: Some(Source::new(e)),
                });
            }
            self.external = Some((cmd.clone(), ctrl_out.clone(), group));
        }
        let (_, _, group) = self.external.as_ref().expect("just set");
        record(
            &self.ctx,
            &self.pipelines,
            &self.dims,
            encoder,
            group,
            Timestamps::None,
        );
        self.after_step(true);
        Ok(())
    }

    /// Checks `cmd`'s shape and records its copy into the command buffer
    /// on `encoder`; [`Upload::submitted`] follows the submission.
    fn upload_cmd(
        &mut self,
        cmd: &dyn AsCmd,
        encoder: &mut wgpu::CommandEncoder,
    ) -> Result<(), Error> {
        let cmd = cmd.as_cmd();
        cmd.check_shape(self.plan.num_envs(), self.plan.num_targets())?;
        let (ctx, stride) = (&self.ctx, self.plane() * 4);
        let fields = cmd.fields();
        let gpu = (ctx.device(), ctx.queue());
        (self.upload).stage(gpu, encoder, &fields, stride, &self.buffers.cmd)
    }

    /// Steps `steps` times with `cmd` (uploaded once) and returns the GPU's
    /// own time for each step in µs, measured with timestamp queries at the
    /// beginning and end of the step's compute pass: the kernels' time,
    /// without the host's upload, submission and wait that
    /// [`Backend::step`] also pays. The steps advance every state as
    /// [`Backend::step`] does. `None` when the device has no timestamp
    /// queries ([`GpuContext::has_timestamps`]). Steps are recorded into
    /// one encoder per 256, as [`WgpuBackend::encode_step`] would.
    pub fn gpu_step_times(
        &mut self,
        cmd: &dyn AsCmd,
        steps: usize,
    ) -> Result<Option<Vec<f64>>, Error> {
        let times = self.timed_steps(cmd, steps, false)?;
        Ok(times.map(|times| times.iter().map(|t| t[0]).collect()))
    }

    /// As [`WgpuBackend::gpu_step_times`], with each of the step's
    /// dispatches in a compute pass of its own timed apart: where a step's
    /// GPU time goes. Separate passes may cost a little more than the
    /// one pass a step records.
    pub fn gpu_stage_times(
        &mut self,
        cmd: &dyn AsCmd,
        steps: usize,
    ) -> Result<Option<Vec<StageTimes>>, Error> {
        let times = self.timed_steps(cmd, steps, true)?;
        let two = self.dispatches_per_step() == 2;
        Ok(times.map(|times| {
            (times.iter())
                .map(|t| StageTimes {
                    law_us: t[0],
                    output_us: two.then_some(t[1]),
                })
                .collect()
        }))
    }

    /// The GPU times of `steps` steps of `cmd` in µs: each step's pass
    /// (the first entry), or with `stages` each of its dispatches' passes
    /// in dispatch order.
    fn timed_steps(
        &mut self,
        cmd: &dyn AsCmd,
        steps: usize,
        stages: bool,
    ) -> Result<Option<Vec<[f64; STAGES]>>, Error> {
        if !self.ctx.has_timestamps() {
            return Ok(None);
        }
        const BATCH: usize = 256;
        // Timestamps per step.
        let per_step = 2 * if stages {
            self.dispatches_per_step()
        } else {
            1
        };
        let ctx = self.ctx.clone();
        let device = ctx.device();
        let mut encoder = device.create_command_encoder(&Default::default());
        self.upload_cmd(cmd, &mut encoder)?;
        let submission = ctx.queue().submit([encoder.finish()]);
        self.upload.submitted(submission);
        let set = device.create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("sinew step timestamps"),
            ty: wgpu::QueryType::Timestamp,
            count: (per_step * BATCH) as u32,
        });
        let resolved = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("sinew timestamps"),
            size: (per_step * BATCH * 8) as u64,
            usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        // Nanoseconds per tick.
        let period = f64::from(ctx.queue().get_timestamp_period());
        let mut times = Vec::with_capacity(steps);
        let mut ticks = vec![0u64; per_step * BATCH];
        while times.len() < steps {
            let n = (steps - times.len()).min(BATCH);
            let mut encoder = device.create_command_encoder(&Default::default());
            for i in 0..n {
                let first = (per_step * i) as u32;
                let timestamps = match stages {
                    false => Timestamps::Pass(&set, first),
                    true => Timestamps::Stages(&set, first),
                };
                let (k, dims, group) = (&self.pipelines, &self.dims, &self.bind_group);
                record(&ctx, k, dims, &mut encoder, group, timestamps);
            }
            encoder.resolve_query_set(&set, 0..(per_step * n) as u32, &resolved, 0);
            ctx.queue().submit([encoder.finish()]);
            for _ in 0..n {
                self.after_step(false);
            }
            self.read_into(&resolved, 0, &mut ticks[..per_step * n])?;
            times.extend(ticks[..per_step * n].chunks_exact(per_step).map(|step| {
                let mut us = [0.0; STAGES];
                for (us, t) in us.iter_mut().zip(step.chunks_exact(2)) {
                    *us = t[1].wrapping_sub(t[0]) as f64 * period / 1e3;
                }
                us
            }));
        }
        Ok(Some(times))
    }

    fn after_step(&mut self, external: bool) {
        self.step = self.step.wrapping_add(1);
        self.nonfinite_fresh = false;
        self.output_external = external;
        self.readback.holds = [false; 3];
    }

    /// The device buffer a [`Part`] is read from.
    fn source(&self, part: Part) -> wgpu::Buffer {
        match part {
            Part::Flags => &self.buffers.flags,
            Part::Ctrl => &self.buffers.ctrl,
            Part::Effort => &self.buffers.effort,
        }
        .clone()
    }

    /// Reads `part` of the last step into `out` (its whole length): from
    /// the readback buffer when the step copied it there (mapped once for
    /// every part), else by a copy of its own. Either way the next step
    /// copies it.
    fn read_part<T: Pod>(&mut self, part: Part, out: &mut [T]) -> Result<(), Error> {
        let k = part as usize;
        self.readback.wanted[k] = true;
        let range = self.readback.ranges[k].clone();
        // (The callers checked `out`'s length: the part's whole length.)
        assert_eq!(std::mem::size_of_val(out) as u64, range.end - range.start);
        if !self.readback.holds[k] {
            return self.read_into(&self.source(part), 0, out);
        }
        if range.is_empty() {
            return Ok(());
        }
        if !self.readback.mapped {
            map_read(self.ctx.device(), self.readback.buffer.slice(..))?;
            self.readback.mapped = true;
        }
        let view = (self.readback.buffer)
            .get_mapped_range(range)
            .map_err(readback_error)?;
        upload::copy_bytes(bytemuck::cast_slice_mut::<T, u8>(out), &view);
        Ok(())
    }

    /// Copies `out.len()` values from `src` at byte `offset` to the host.
    fn read_into<T: Pod>(
        &mut self,
        src: &wgpu::Buffer,
        offset: u64,
        out: &mut [T],
    ) -> Result<(), Error> {
        let bytes = std::mem::size_of_val(out) as u64;
        if bytes == 0 {
            return Ok(());
        }
        let device = self.ctx.device();
        if self.staging.as_ref().is_none_or(|s| s.size() < bytes) {
            self.staging = Some(device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("sinew readback"),
                size: bytes.next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT),
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }));
        }
        let staging = self.staging.as_ref().expect("just made");
        let mut encoder = device.create_command_encoder(&Default::default());
        encoder.copy_buffer_to_buffer(src, offset, staging, 0, bytes);
        self.ctx.queue().submit([encoder.finish()]);
        let slice = staging.slice(..bytes);
        map_read(device, slice)?;
        {
            let view = slice.get_mapped_range().map_err(readback_error)?;
            upload::copy_bytes(bytemuck::cast_slice_mut::<T, u8>(out), &view);
        }
        staging.unmap();
        Ok(())
    }

    /// The kinds' current state, `[slot][env][ctrl]`, read back: an env's
    /// next state where the last step kept the env (its flag clear), else
    /// its state, as the next step's law stage commits them
    /// (`settle_state` in `shaders/step.wgsl`).
    fn state_host(&mut self) -> Result<Vec<f32>, Error> {
        let (num_envs, num_ctrl) = (self.plan.num_envs(), self.plan.num_ctrl());
        let len = self.plan.num_state_slots() * num_envs * num_ctrl;
        let mut both = vec![0.0f32; 2 * len];
        let mut kept = vec![0u32; num_envs];
        let (state, flags) = (self.buffers.state.clone(), self.buffers.flags.clone());
        self.read_into(&state, 0, &mut both)?;
        self.read_into(&flags, 0, &mut kept)?;
        let (state, next) = both.split_at_mut(len);
        let rows = state
            .chunks_exact_mut(num_ctrl)
            .zip(next.chunks_exact(num_ctrl));
        for (i, (row, next_row)) in rows.enumerate() {
            if kept[i % num_envs] == 0 {
                row.copy_from_slice(next_row);
            }
        }
        both.truncate(len);
        Ok(both)
    }

    /// Writes `values` into the kinds' state at float `at` of the state
    /// half, and into the next state alike: the next step's law stage
    /// starts from either (`settle_state`).
    fn write_state(&self, at: usize, values: &[f32]) {
        let len = self.plan.num_state_slots() * self.plan.num_envs() * self.plan.num_ctrl();
        for half in [0, len] {
            self.write(&self.buffers.state, ((half + at) * 4) as u64, values);
        }
    }

    fn write<T: Pod>(&self, dst: &wgpu::Buffer, offset: u64, values: &[T]) {
        if !values.is_empty() {
            self.ctx
                .queue()
                .write_buffer(dst, offset, bytemuck::cast_slice(values));
        }
    }
}

/// Maps `slice` for reading and waits until it is (the work submitted
/// before done).
fn map_read(device: &wgpu::Device, slice: wgpu::BufferSlice<'_>) -> Result<(), Error> {
    let (tx, rx) = mpsc::channel();
    slice.map_async(wgpu::MapMode::Read, move |r| {
        let _ = tx.send(r);
    });
    device
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(readback_error)?;
    rx.recv().map_err(readback_error)?.map_err(readback_error)
}

/// A failed map or wait of a readback.
fn readback_error(e: impl std::error::Error + Send + Sync + 'static) -> Error {
    Error::Gpu {
        what: "readback",
        message: e.to_string(),
        source: Some(Source::new(e)),
    }
}

impl WgpuBackend {
    /// Uploads the rows of `env_ids` in the parameter plane at `at`, over
    /// the span of group `g`'s columns.
    fn upload_rows(&self, g: usize, at: usize, env_ids: EnvIds<'_>) {
        let num_ctrl = self.plan.num_ctrl();
        let columns = &self.plan.groups()[g].ctrl_columns;
        let lo = *columns.iter().min().expect("a group has targets");
        let hi = *columns.iter().max().expect("a group has targets") + 1;
        match env_ids {
            EnvIds::All => {
                let len = self.plan.num_envs() * num_ctrl;
                self.write(
                    &self.buffers.params,
                    at as u64 * 4,
                    &self.params_host[at..at + len],
                );
            }
            EnvIds::List(ids) => {
                for &env in ids {
                    let start = at + env as usize * num_ctrl;
                    self.write(
                        &self.buffers.params,
                        (start + lo) as u64 * 4,
                        &self.params_host[start + lo..start + hi],
                    );
                }
            }
        }
    }

    /// Writes the kinds' reset state of the selected (checked) envs.
    fn reset_state(&self, env_ids: EnvIds<'_>) {
        let plan = &self.plan;
        let num_ctrl = plan.num_ctrl();
        let plane = plan.num_envs() * num_ctrl;
        let resets = plan.state_resets();
        match env_ids {
            EnvIds::All => {
                let mut state = vec![0.0f32; plan.num_state_slots() * plane];
                plan.reset_state(env_ids, &mut state);
                self.write_state(0, &state);
            }
            EnvIds::List(ids) => {
                for (k, row) in resets.chunks_exact(num_ctrl).enumerate() {
                    for &env in ids {
                        self.write_state(k * plane + env as usize * num_ctrl, row);
                    }
                }
            }
        }
    }
}

/// Loop iterations a software adapter runs per shader invocation before it
/// stops the loop without an error (Mesa gallivm's loop limiter: 65 535,
/// outer and inner loops together), with a margin.
pub const SOFTWARE_LOOP_LIMIT: u64 = 65_000;

/// An upper bound of the loop iterations one invocation of the per-env
/// kernel runs (the delay heads and lag draws, the output check and
/// zeroing, the MuJoCo stage).
pub fn env_loop_iterations(plan: &Plan) -> u64 {
    let n = |x: usize| x as u64;
    let delay = n(plan.buffers().len());
    let output = 3 * n(plan.num_ctrl());
    let mj = plan.mj();
    let paths = n(mj.path.len());
    let tendons: u64 = mj
        .tendon_limits
        .iter()
        .map(|t| 1 + 2 * n(t.members.len()))
        .sum();
    let mujoco = 6 * n(mj.actuators.len())
        + 2 * paths
        + tendons
        + 4 * n(mj.effort_width())
        + n(mj.joint_limits.len());
    delay + output + mujoco
}

/// Loop iterations one invocation of the learned law runs for `column` in
/// a plan of `num_state_slots` state slots (every loop of
/// `shaders/learned.wgsl` counted, outer ones included, and the law
/// thread's commit of its state, `settle_state`).
pub fn learned_loop_iterations(
    stage: &LearnedStage,
    column: &LearnedColumn,
    num_state_slots: usize,
) -> u64 {
    let layers = &stage.layers[column.first_layer as usize..][..column.num_layers as usize];
    let (lstm, dense) = layers.split_at(column.lstm_layers as usize);
    let lstm: u64 = lstm
        .iter()
        .map(|l| {
            // The hidden state in, the units (each over the inputs and the
            // hidden state, four gates at a time), the next input out.
            let (h, i) = (u64::from(l.outputs), u64::from(l.inputs));
            1 + 3 * h + h * (i + h)
        })
        .sum();
    let dense: u64 = dense
        .iter()
        .map(|l| {
            // Four outputs at a time, each group over the inputs.
            let (o, i) = (u64::from(l.outputs).div_ceil(4), u64::from(l.inputs));
            1 + o + o * i
        })
        .sum();
    // The column's words, the taps, the history shift and the state copy.
    let fixed = 15 + u64::from(column.num_taps) + u64::from(column.history_len);
    lstm + dense + fixed + num_state_slots as u64
}

/// Refuses, on a software adapter, a plan whose per-env kernels or whose
/// learned networks need more loop iterations per invocation than
/// [`SOFTWARE_LOOP_LIMIT`]: llvmpipe would cut the loops short and return
/// wrong values with no error.
fn check_loop_limit(ctx: &GpuContext, plan: &Plan) -> Result<(), Error> {
    if !ctx.is_software() {
        return Ok(());
    }
    let refuse = |what: &'static str, subject: String, iterations: u64| Error::Gpu {
        what,
        message: format!(
            "{subject} run {iterations} loop iterations per invocation, and this software \
             adapter ({}) stops every shader loop after 65 535 without an error, which would \
             give wrong values; step this plan on the CPU backend or a hardware GPU",
            ctx.description()
        ),
        source: None,
    };
    let per_env = env_loop_iterations(plan);
    if per_env > SOFTWARE_LOOP_LIMIT {
        let subject = format!(
            "its per-env kernel ({} targets, {} ctrl columns, delay buffers, MuJoCo paths)",
            plan.num_targets(),
            plan.num_ctrl()
        );
        return Err(refuse("plan", subject, per_env));
    }
    let learned = plan.learned();
    for column in &learned.columns {
        let iterations = learned_loop_iterations(learned, column, plan.num_state_slots());
        if iterations > SOFTWARE_LOOP_LIMIT {
            let group = &plan.groups()[plan.ctrl_columns()[column.ctrl_column as usize].group];
            let subject = format!("group `{}`: its network's columns", group.cfg.name);
            return Err(refuse("learned network", subject, iterations));
        }
    }
    Ok(())
}

fn bind_group(
    ctx: &GpuContext,
    b: &DeviceBuffers,
    cmd: &wgpu::Buffer,
    ctrl: &wgpu::Buffer,
) -> wgpu::BindGroup {
    let resources = [
        &b.dims,
        cmd,
        ctrl,
        &b.params,
        &b.ring,
        &b.states,
        &b.flags,
        &b.columns,
        &b.descs,
        &b.words,
        &b.mj,
        &b.effort,
        &b.state,
        &b.net_weights,
    ];
    let entries: Vec<wgpu::BindGroupEntry> = resources
        .iter()
        .enumerate()
        .map(|(i, buffer)| wgpu::BindGroupEntry {
            binding: i as u32,
            resource: buffer.as_entire_binding(),
        })
        .collect();
    ctx.device().create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("sinew step"),
        layout: &ctx.inner.kernels.layout,
        entries: &entries,
    })
}

/// The kernels `plan` needs on `ctx`, in one dispatch where `dispatches`
/// asks for it and the plan and device allow it.
fn specialization(
    ctx: &GpuContext,
    plan: &Plan,
    dispatches: Dispatches,
) -> shaders::Specialization {
    let mut spec = shaders::Specialization::of(plan);
    spec.env_stage &= ctx.fits_env_workgroups()
        && match dispatches {
            Dispatches::Auto => !ctx.is_software(),
            Dispatches::One => true,
            Dispatches::Two => false,
        };
    spec
}

/// Workgroups for `groups` groups: x up to the per-dimension limit, the
/// rest in y (`thread_index` in `common.wgsl`, and `env_stage`, undo it).
fn workgroups(groups: u32, max_per_dimension: u32) -> (u32, u32) {
    let groups = groups.max(1);
    let x = groups.min(max_per_dimension);
    (x, groups.div_ceil(x))
}

/// The most dispatches a step records.
const STAGES: usize = 2;

/// The GPU's own time of one step's dispatches, in µs
/// ([`WgpuBackend::gpu_stage_times`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StageTimes {
    /// The law stage: one thread per (env, ctrl column), every law. With
    /// one dispatch per step ([`Dispatches`]), the whole step.
    pub law_us: f64,
    /// The output stage: one thread per env, the per-env MuJoCo stage, the
    /// delay heads and lags and each env's verdict. `None` with one
    /// dispatch per step, whose law stage does this too.
    pub output_us: Option<f64>,
}

/// Where a recorded step writes timestamps.
enum Timestamps<'q> {
    /// Nowhere.
    None,
    /// At the beginning and end of its pass, at this index and the next.
    Pass(&'q wgpu::QuerySet, u32),
    /// With each dispatch in its own pass, at the beginning and end of
    /// each, from this index on.
    Stages(&'q wgpu::QuerySet, u32),
}

/// The dispatches of one step (`env_stage`; or the law stage, the output
/// stage) in one compute pass, or with [`Timestamps::Stages`] one pass
/// each.
fn record(
    ctx: &GpuContext,
    k: &Pipelines,
    dims: &Dims,
    encoder: &mut wgpu::CommandEncoder,
    group: &wgpu::BindGroup,
    timestamps: Timestamps<'_>,
) {
    let max = ctx.device().limits().max_compute_workgroups_per_dimension;
    // A pass over the step's bindings, timestamped at `writes` and the
    // index after it.
    fn begin<'e>(
        encoder: &'e mut wgpu::CommandEncoder,
        group: &wgpu::BindGroup,
        writes: Option<(&wgpu::QuerySet, u32)>,
    ) -> wgpu::ComputePass<'e> {
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("sinew step"),
            timestamp_writes: writes.map(|(query_set, at)| wgpu::ComputePassTimestampWrites {
                query_set,
                beginning_of_pass_write_index: Some(at),
                end_of_pass_write_index: Some(at + 1),
            }),
        });
        pass.set_bind_group(0, group, &[]);
        pass
    }
    let groups = |stage: Stage| match stage {
        Stage::Env => (dims.num_envs).div_ceil(ENV_WORKGROUP_SIZE / dims.num_ctrl.max(1)),
        Stage::Law => (dims.num_envs * dims.num_ctrl).div_ceil(WORKGROUP_SIZE),
        Stage::Output => dims.num_envs.div_ceil(WORKGROUP_SIZE),
    };
    let stages = k
        .stages
        .iter()
        .map(|(stage, pipeline)| (pipeline, groups(*stage)));
    let dispatch = |pass: &mut wgpu::ComputePass<'_>, pipeline, groups| {
        let (x, y) = workgroups(groups, max);
        pass.set_pipeline(pipeline);
        pass.dispatch_workgroups(x, y, 1);
    };
    let writes = match timestamps {
        Timestamps::Stages(set, first) => {
            for (i, (pipeline, groups)) in (0u32..).zip(stages) {
                let mut pass = begin(encoder, group, Some((set, first + 2 * i)));
                dispatch(&mut pass, pipeline, groups);
            }
            return;
        }
        Timestamps::Pass(set, at) => Some((set, at)),
        Timestamps::None => None,
    };
    let mut pass = begin(encoder, group, writes);
    for (pipeline, groups) in stages {
        dispatch(&mut pass, pipeline, groups);
    }
}

impl Backend for WgpuBackend {
    fn plan(&self) -> &Plan {
        &self.plan
    }

    fn step(&mut self, cmd: &dyn AsCmd) -> Result<(), Error> {
        let mut encoder = self
            .ctx
            .device()
            .create_command_encoder(&Default::default());
        self.upload_cmd(cmd, &mut encoder)?;
        record(
            &self.ctx,
            &self.pipelines,
            &self.dims,
            &mut encoder,
            &self.bind_group,
            Timestamps::None,
        );
        // The parts read after the last step, copied for the host.
        if self.readback.mapped {
            self.readback.buffer.unmap();
            self.readback.mapped = false;
        }
        let copied = self.readback.wanted;
        for part in Part::ALL {
            let range = self.readback.ranges[part as usize].clone();
            if copied[part as usize] && !range.is_empty() {
                let (dst, len) = (&self.readback.buffer, range.end - range.start);
                encoder.copy_buffer_to_buffer(&self.source(part), 0, dst, range.start, len);
            }
        }
        let submission = self.ctx.queue().submit([encoder.finish()]);
        self.upload.submitted(submission);
        self.after_step(false);
        self.readback.holds = copied;
        self.readback.wanted = [false; 3];
        Ok(())
    }

    fn nonfinite_envs(&mut self) -> Result<&[u32], Error> {
        if !self.nonfinite_fresh {
            // Read the per-env flags into the report's own storage, then
            // keep the envs whose flag is set.
            let num_envs = self.plan.num_envs();
            let mut flags = std::mem::take(&mut self.nonfinite);
            flags.resize(num_envs, 0);
            if let Err(e) = self.read_part(Part::Flags, &mut flags) {
                self.nonfinite.clear();
                return Err(e);
            }
            let mut kept = 0;
            for env in 0..num_envs {
                if flags[env] != 0 {
                    flags[kept] = env as u32;
                    kept += 1;
                }
            }
            flags.truncate(kept);
            self.nonfinite = flags;
            self.nonfinite_fresh = true;
        }
        Ok(&self.nonfinite)
    }

    fn read_ctrl(&mut self, out: &mut [f32]) -> Result<(), Error> {
        self.plan.check_ctrl_len(out.len())?;
        if self.output_external {
            return Err(Error::Gpu {
                what: "read_ctrl",
                message: "the last step was recorded with encode_step and wrote the caller's \
                          ctrl buffer; read that buffer"
                    .into(),
                source: None,
            });
        }
        self.read_part(Part::Ctrl, out)
    }

    fn reset(&mut self, env_ids: EnvIds<'_>) -> Result<(), Error> {
        let n = self.plan.check_env_ids(env_ids)?;
        if self.plan.num_state_slots() > 0 {
            self.reset_state(env_ids);
        }
        let nb = self.plan.buffers().len();
        if nb == 0 {
            return Ok(());
        }
        if env_ids == EnvIds::All {
            let mut states = vec![DelayState::default(); self.plan.num_envs() * nb];
            self.plan
                .reset_delay_states(env_ids, &mut states, self.step)?;
            self.write(&self.buffers.states, 0, &states);
            return Ok(());
        }
        let mut row = vec![DelayState::default(); nb];
        for i in 0..n {
            let env = Plan::env_at(env_ids, i);
            self.plan.reset_env(env, self.step, &mut row);
            self.write(&self.buffers.states, (env * nb) as u64 * STATE_BYTES, &row);
        }
        Ok(())
    }

    fn set_param_at(
        &mut self,
        param: ParamRef,
        env_ids: EnvIds<'_>,
        values: Values<'_>,
    ) -> Result<(), Error> {
        let num_ctrl = self.plan.num_ctrl();
        let len = self.plan.num_param_slots() * self.plan.num_envs() * num_ctrl;
        let table = &mut self.params_host[..len];
        let (g, slot) =
            (self.plan).write_param(param, env_ids, values, table, ColumnOrder::Ctrl)?;
        let at = slot * self.plan.num_envs() * num_ctrl;
        self.upload_rows(g, at, env_ids);
        Ok(())
    }

    fn read_param(&mut self, group: &str, name: &str, out: &mut [f32]) -> Result<(), Error> {
        let len = self.plan.num_param_slots() * self.plan.num_envs() * self.plan.num_ctrl();
        let table = &self.params_host[..len];
        (self.plan).read_param(group, name, table, out, ColumnOrder::Ctrl)
    }

    fn set_state(
        &mut self,
        group: &str,
        name: &str,
        env_ids: EnvIds<'_>,
        values: Values<'_>,
    ) -> Result<(), Error> {
        self.plan.group_state(group, name)?;
        let mut state = self.state_host()?;
        self.plan
            .write_state(group, name, env_ids, values, &mut state)?;
        self.write_state(0, &state);
        Ok(())
    }

    fn read_state(&mut self, group: &str, name: &str, out: &mut [f32]) -> Result<(), Error> {
        self.plan.group_state(group, name)?;
        let state = self.state_host()?;
        self.plan.read_state(group, name, &state, out)
    }

    fn set_input(&mut self, name: &str, values: &[f32]) -> Result<(), Error> {
        let k = self.plan.check_input(name, values.len())?;
        let at = self.inputs_offset() + k * values.len();
        self.write(&self.buffers.state, at as u64 * 4, values);
        Ok(())
    }

    fn read_output(&mut self, name: &str, out: &mut [f32]) -> Result<(), Error> {
        let k = self.plan.check_output(name, out.len())?;
        let at =
            self.inputs_offset() + self.plan.input_planes().len() * self.plane() + k * out.len();
        let src = self.buffers.state.clone();
        self.read_into(&src, at as u64 * 4, out)
    }

    fn set_lags(&mut self, group: &str, env_ids: EnvIds<'_>, lags: Lags<'_>) -> Result<(), Error> {
        let lag_offset = std::mem::offset_of!(DelayState, lag) as u64;
        let (queue, states) = (self.ctx.queue(), &self.buffers.states);
        self.plan.write_lags(group, env_ids, lags, |i, lag| {
            queue.write_buffer(
                states,
                i as u64 * STATE_BYTES + lag_offset,
                bytemuck::bytes_of(&lag),
            );
        })
    }

    fn read_joint_effort(&mut self, out: &mut [f32]) -> Result<(), Error> {
        self.plan.check_joint_effort_len(out.len())?;
        if self.plan.mj().effort_width() == 0 {
            out.fill(0.0);
            return Ok(());
        }
        self.read_part(Part::Effort, out)
    }

    fn read_delay_states(&mut self, group: &str, out: &mut [DelayState]) -> Result<(), Error> {
        let b = self
            .plan
            .per_env_buffer_of(group, "the delay-state buffer", out.len())?;
        let num_envs = self.plan.num_envs();
        let nb = self.plan.buffers().len();
        let mut all = vec![DelayState::default(); num_envs * nb];
        let src = self.buffers.states.clone();
        self.read_into(&src, 0, &mut all)?;
        for (o, row) in out.iter_mut().zip(all.chunks_exact(nb)) {
            *o = row[b];
        }
        Ok(())
    }
}
