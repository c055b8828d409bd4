//! # Sinew
//!
//! Batched robot actuator models for reinforcement learning: every physics
//! step, hand Sinew the commands and joint state of all your envs, shaped
//! `(num_envs, num_targets)`, and apply the `ctrl` it returns. Semantics follow
//! mjlab 1.6.0 (bit for bit on its golden episodes) with Isaac Lab's options
//! where they differ.
//!
//! ```
//! use sinew::{ActuatorCmd, Backend, DcMotorCfg, DelayCfg, Engine, GroupCfg, PlanOptions, Robot};
//!
//! // A leg with two DC-motor joints, commands delayed by 0–2 physics steps.
//! let robot = Robot::from_joints(["hip", "knee"]);
//! let motor = DcMotorCfg { stiffness: 20.0, damping: 0.5, effort_limit: 23.7,
//!                          saturation_effort: 23.7, velocity_limit: 30.1 };
//! let groups = vec![GroupCfg::new("leg", [".*"], motor).with_delay(DelayCfg::new(0, 2))];
//! let mut engine = Engine::auto(&robot, groups, 1024, PlanOptions::default())?;
//!
//! let mut cmd = ActuatorCmd::zeros(1024, robot.num_targets());
//! cmd.position_target.fill(0.3);
//! engine.step(&cmd)?;
//!
//! let mut ctrl = vec![0.0; 1024 * engine.plan().num_ctrl()];
//! engine.read_ctrl(&mut ctrl)?;
//! assert!(ctrl.iter().all(|&tau| (tau - 6.0).abs() < 1e-6)); // 20 · 0.3
//! assert!(engine.nonfinite_envs()?.is_empty());
//! # Ok::<(), sinew::Error>(())
//! ```
//!
//! The pieces: [`Robot`] names the joints, tendons and sites; [`GroupCfg`]
//! applies one [`ActuatorCfg`] kind to the targets its regexes match, with an
//! optional [`DelayCfg`]; a [`Plan`] compiles the groups (ctrl column order in
//! [`Plan::ctrl_columns`]); a backend behind [`Backend`] steps it.
//!
//! Two backends: [`CpuBackend`] (rayon, the reference) and [`WgpuBackend`]
//! (WGSL compute kernels through wgpu, state resident on the device, with
//! [`WgpuBackend::encode_step`] for simulators that never leave the GPU).
//! [`Engine::auto`] takes a hardware GPU when there is one.

pub use sinew_core::*;

/// The README's Rust examples, compiled and run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
pub use sinew_cpu::{par_rows_mut, CpuBackend};
pub use sinew_wgpu::{Dispatches, GpuContext, StageTimes, WgpuBackend};

/// The engine: one of the backends, chosen at construction.
#[derive(Debug)]
#[non_exhaustive]
#[allow(
    clippy::large_enum_variant,
    reason = "a program holds one or two engines, never arrays of them"
)]
pub enum Engine {
    /// The CPU reference backend (rayon).
    Cpu(CpuBackend),
    /// The GPU backend (wgpu compute kernels).
    Gpu(WgpuBackend),
}

/// Runs `$e` with `$b` bound to the backend inside `$engine`.
macro_rules! each_backend {
    ($engine:expr, $b:ident => $e:expr) => {
        match $engine {
            Engine::Cpu($b) => $e,
            Engine::Gpu($b) => $e,
        }
    };
}

impl Engine {
    /// The best backend on this machine, with a plan compiled from `groups`:
    /// the GPU when a hardware adapter exists (the process-wide
    /// [`GpuContext::shared`]), otherwise the CPU. A software adapter (Mesa's
    /// llvmpipe) is passed over, since the rayon backend outruns it; ask for
    /// it with [`Engine::gpu`]. [`Engine::description`] says what was taken,
    /// [`gpu_status`] why.
    pub fn auto(
        robot: &Robot,
        groups: Vec<GroupCfg>,
        num_envs: usize,
        options: PlanOptions,
    ) -> Result<Engine, Error> {
        let plan = Plan::new(robot, groups, num_envs, options)?;
        match GpuContext::shared() {
            Ok(ctx) if !ctx.is_software() => Ok(Engine::Gpu(WgpuBackend::new(&ctx, plan)?)),
            _ => Ok(Engine::Cpu(CpuBackend::new(plan))),
        }
    }

    /// The CPU backend.
    pub fn cpu(
        robot: &Robot,
        groups: Vec<GroupCfg>,
        num_envs: usize,
        options: PlanOptions,
    ) -> Result<Engine, Error> {
        Ok(Engine::Cpu(CpuBackend::new(Plan::new(
            robot, groups, num_envs, options,
        )?)))
    }

    /// The GPU backend on the process-wide adapter, software ones included;
    /// [`Error::NoGpuAdapter`] when there is none.
    pub fn gpu(
        robot: &Robot,
        groups: Vec<GroupCfg>,
        num_envs: usize,
        options: PlanOptions,
    ) -> Result<Engine, Error> {
        let plan = Plan::new(robot, groups, num_envs, options)?;
        Ok(Engine::Gpu(WgpuBackend::new(&GpuContext::shared()?, plan)?))
    }

    /// Runs `op` over the env rows of `tables` (each `(num_envs, width)`
    /// row-major, e.g. [`ActuatorCmd::fields_mut`]) in parallel: on the CPU
    /// each part on the thread that will step those envs
    /// ([`CpuBackend::par_rows_mut`]), so the next command written here
    /// waits in the caches of the cores that read it; on the GPU in one
    /// part per thread of rayon's pool ([`par_rows_mut`]).
    /// `op(envs, rows)` gets its part's envs and each table's rows of them.
    ///
    /// # Errors
    /// [`Error::RowsShape`] for a table whose length is not a multiple of
    /// `num_envs`.
    ///
    /// ```
    /// use sinew::{ActuatorCmd, Backend, Engine, GroupCfg, IdealPdCfg, PlanOptions, Robot};
    ///
    /// let robot = Robot::from_joints(["hip", "knee"]);
    /// let pd = IdealPdCfg { stiffness: 20.0, damping: 0.5, effort_limit: 50.0 };
    /// let mut engine = Engine::auto(&robot, vec![GroupCfg::new("leg", [".*"], pd)], 256,
    ///                               PlanOptions::default())?;
    /// let mut cmd = ActuatorCmd::zeros(256, 2);
    /// engine.par_rows_mut(cmd.fields_mut(), |envs, [target, ..]| {
    ///     for (env, row) in envs.zip(target.chunks_mut(2)) {
    ///         row.fill(if env % 2 == 0 { 0.1 } else { -0.1 });
    ///     }
    /// })?;
    /// engine.step(&cmd)?;
    /// let ctrl = engine.ctrl_array()?;
    /// assert!((ctrl[[3, 1]] + 2.0).abs() < 1e-6);
    /// # Ok::<(), sinew::Error>(())
    /// ```
    pub fn par_rows_mut<const N: usize>(
        &self,
        tables: [&mut [f32]; N],
        op: impl Fn(std::ops::Range<usize>, [&mut [f32]; N]) + Sync,
    ) -> Result<(), Error> {
        match self {
            Engine::Cpu(b) => b.par_rows_mut(tables, op),
            Engine::Gpu(b) => sinew_cpu::par_rows_mut(b.plan().num_envs(), tables, op),
        }
    }

    /// Which backend this is, in words (e.g. `cpu (rayon, 2 threads, avx2
    /// loops)`, with [`simd::form`]'s name, or `wgpu on NVIDIA H100
    /// (Vulkan, DiscreteGpu, driver …)`).
    pub fn description(&self) -> String {
        match self {
            Engine::Cpu(_) => format!(
                "cpu (rayon, {} threads, {} loops)",
                rayon::current_num_threads(),
                crate::simd::form().name()
            ),
            Engine::Gpu(b) => format!("wgpu on {}", b.context().description()),
        }
    }
}

/// What [`Engine::auto`] finds on this machine, in one line: the adapter it
/// would take, the software adapter it passes over, or why there is none.
pub fn gpu_status() -> String {
    match GpuContext::shared() {
        Ok(ctx) if ctx.is_software() => format!(
            "software adapter {} (auto prefers the CPU backend)",
            ctx.description()
        ),
        Ok(ctx) => format!("GPU adapter {}", ctx.description()),
        Err(e) => e.to_string(),
    }
}

impl Backend for Engine {
    fn plan(&self) -> &Plan {
        each_backend!(self, b => b.plan())
    }
    fn step(&mut self, cmd: &dyn AsCmd) -> Result<(), Error> {
        each_backend!(self, b => b.step(cmd))
    }
    fn step_into(&mut self, cmd: &dyn AsCmd, out: &mut [f32]) -> Result<(), Error> {
        each_backend!(self, b => b.step_into(cmd, out))
    }
    fn nonfinite_envs(&mut self) -> Result<&[u32], Error> {
        each_backend!(self, b => b.nonfinite_envs())
    }
    fn read_ctrl(&mut self, out: &mut [f32]) -> Result<(), Error> {
        each_backend!(self, b => b.read_ctrl(out))
    }
    fn reset(&mut self, env_ids: EnvIds<'_>) -> Result<(), Error> {
        each_backend!(self, b => b.reset(env_ids))
    }
    fn set_param_at(
        &mut self,
        param: ParamRef,
        env_ids: EnvIds<'_>,
        values: Values<'_>,
    ) -> Result<(), Error> {
        each_backend!(self, b => b.set_param_at(param, env_ids, values))
    }
    fn read_param(&mut self, group: &str, name: &str, out: &mut [f32]) -> Result<(), Error> {
        each_backend!(self, b => b.read_param(group, name, out))
    }
    fn set_state(
        &mut self,
        group: &str,
        name: &str,
        env_ids: EnvIds<'_>,
        values: Values<'_>,
    ) -> Result<(), Error> {
        each_backend!(self, b => b.set_state(group, name, env_ids, values))
    }
    fn read_state(&mut self, group: &str, name: &str, out: &mut [f32]) -> Result<(), Error> {
        each_backend!(self, b => b.read_state(group, name, out))
    }
    fn set_input(&mut self, name: &str, values: &[f32]) -> Result<(), Error> {
        each_backend!(self, b => b.set_input(name, values))
    }
    fn read_output(&mut self, name: &str, out: &mut [f32]) -> Result<(), Error> {
        each_backend!(self, b => b.read_output(name, out))
    }
    fn set_lags(&mut self, group: &str, env_ids: EnvIds<'_>, lags: Lags<'_>) -> Result<(), Error> {
        each_backend!(self, b => b.set_lags(group, env_ids, lags))
    }
    fn read_delay_states(&mut self, group: &str, out: &mut [DelayState]) -> Result<(), Error> {
        each_backend!(self, b => b.read_delay_states(group, out))
    }
    fn read_joint_effort(&mut self, out: &mut [f32]) -> Result<(), Error> {
        each_backend!(self, b => b.read_joint_effort(out))
    }
}
