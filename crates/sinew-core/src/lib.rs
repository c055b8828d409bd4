//! Sinew's data model and scalar actuator laws: no threads, no GPU.
//!
//! The facade crate `sinew` re-exports everything here; backends
//! (`sinew-cpu`, later the GPU one) implement [`Backend`] over a [`Plan`].
//!
//! ```
//! use sinew_core::{ActuatorCmd, GroupCfg, IdealPdCfg, Plan, PlanOptions, Robot};
//!
//! let robot = Robot::from_joints(["hip", "knee"]);
//! let groups = vec![GroupCfg::new("leg", [".*"], IdealPdCfg::new(20.0, 0.5).with_effort_limit(10.0))];
//! let plan = Plan::new(&robot, groups, 4, PlanOptions::default())?;
//! assert_eq!((plan.num_envs(), plan.num_ctrl()), (4, 2));
//! // The scalar law every backend evaluates:
//! assert_eq!(sinew_core::ideal_pd_effort(20.0, 0.5, 10.0, 1.0, 0.0, 0.0, 0.0, 0.0), 10.0);
//! let _cmd = ActuatorCmd::zeros(4, robot.num_targets());
//! # Ok::<(), sinew_core::Error>(())
//! ```

pub use ndarray;

pub mod cmd;
pub mod delay;
pub mod error;
pub mod group;
pub mod kinds;
pub mod math;
pub mod memory;
pub mod net;
pub mod plan;
pub mod robot;
pub mod simd;

pub use cmd::{ActuatorCmd, AsCmd, CmdRef, CMD_FIELDS};
pub use delay::{DelayCfg, DelayShare, DelayState, Resample};
pub use error::{Error, ErrorKind, Source};
pub use group::GroupCfg;
pub use kinds::*;
pub use net::{LearnedColumn, LearnedStage, NetLayer};
pub use plan::{
    ColumnOrder, CtrlColumn, EnvIds, GroupInfo, Lags, MjDriver, MjMember, MjPathEntry, MjStage,
    MjTendonLimit, ParamRef, Plan, PlanOptions, Values, MJ_FROM_LAW,
};
pub use robot::{BiasType, DynType, FixedTendon, GainType, NativeActuator, Robot, Transmission};

/// What every backend does: step a batch, reset envs, write parameters and
/// lags in place, and read results back.
///
/// State (delay histories, lags, parameter tables) lives inside the backend.
pub trait Backend {
    /// The compiled actuator set.
    fn plan(&self) -> &Plan;

    /// One physics step: reads `cmd` (shape `(num_envs, num_targets)`),
    /// advances delay state and computes `ctrl`. An env with a non-finite
    /// value among the command columns its groups read gets an all-zero
    /// ctrl row and stores nothing in any history; an env with finite inputs
    /// and a non-finite output is zeroed too, its delay buffers keeping the
    /// finite command while its learned, activation and kind state do not
    /// advance. [`Backend::nonfinite_envs`] lists both.
    ///
    /// `cmd` is an [`ActuatorCmd`] or a borrowed [`CmdRef`] over the
    /// caller's own arrays.
    fn step(&mut self, cmd: &dyn AsCmd) -> Result<(), Error>;

    /// One step writing `ctrl` into the caller's `out` (`(num_envs,
    /// num_ctrl)` row-major): on the CPU the step writes there directly
    /// (the backend's own ctrl keeps the previous step's values); on the
    /// GPU it is the step followed by [`Backend::read_ctrl`].
    fn step_into(&mut self, cmd: &dyn AsCmd, out: &mut [f32]) -> Result<(), Error> {
        self.plan().check_ctrl_len(out.len())?;
        self.step(cmd)?;
        self.read_ctrl(out)
    }

    /// [`Backend::step_into`] into a `(num_envs, num_ctrl)` array view in
    /// standard layout (an `ndarray` array, or numpy's through its bindings).
    fn step_into_array(
        &mut self,
        cmd: &dyn AsCmd,
        mut out: ndarray::ArrayViewMut2<'_, f32>,
    ) -> Result<(), Error> {
        let shape = out.dim();
        let num_ctrl = self.plan().num_ctrl();
        let out = out
            .as_slice_mut()
            .filter(|_| shape == (self.plan().num_envs(), num_ctrl))
            .ok_or(Error::BufferShape {
                what: "ctrl array (num_envs, num_ctrl) in standard layout",
                got: shape.0 * shape.1,
                expected: self.plan().num_envs() * num_ctrl,
            })?;
        self.step_into(cmd, out)
    }

    /// The last step's `ctrl` as a new `(num_envs, num_ctrl)` array.
    fn ctrl_array(&mut self) -> Result<ndarray::Array2<f32>, Error> {
        let shape = (self.plan().num_envs(), self.plan().num_ctrl());
        let mut out = ndarray::Array2::zeros(shape);
        self.read_ctrl(out.as_slice_mut().expect("a new array is contiguous"))?;
        Ok(out)
    }

    /// The envs the last step zeroed for a non-finite input or output, ascending.
    fn nonfinite_envs(&mut self) -> Result<&[u32], Error>;

    /// Copies `ctrl`, `(num_envs, num_ctrl)` row-major, into `out`.
    fn read_ctrl(&mut self, out: &mut [f32]) -> Result<(), Error>;

    /// Clears the delay state of these envs (history, push count, lag, step
    /// count, phase) and writes every state slot's reset value (MuJoCo's
    /// activations [`MJ_ACT`] go to 0, as `mj_resetData`); parameters and
    /// other envs do not move.
    fn reset(&mut self, env_ids: EnvIds<'_>) -> Result<(), Error>;

    /// Writes a parameter (by name or mjlab alias) for some envs, in place.
    fn set_param(
        &mut self,
        group: &str,
        name: &str,
        env_ids: EnvIds<'_>,
        values: Values<'_>,
    ) -> Result<(), Error> {
        let param = self.plan().param_ref(group, name)?;
        self.set_param_at(param, env_ids, values)
    }

    /// [`Backend::set_param`] through a handle from [`Plan::param_ref`]:
    /// no name lookup, for randomizing every reset (the README shows it).
    fn set_param_at(
        &mut self,
        param: ParamRef,
        env_ids: EnvIds<'_>,
        values: Values<'_>,
    ) -> Result<(), Error>;

    /// Copies a parameter's `(num_envs, group targets)` values into `out`.
    fn read_param(&mut self, group: &str, name: &str, out: &mut [f32]) -> Result<(), Error>;

    /// Writes a state slot of a group (by name, see [`GroupInfo::state`]:
    /// its kind's slots, or MuJoCo's activation [`MJ_ACT`] for a
    /// MuJoCo-law group) for some envs; values must be finite. The next
    /// step reads it.
    fn set_state(
        &mut self,
        group: &str,
        name: &str,
        env_ids: EnvIds<'_>,
        values: Values<'_>,
    ) -> Result<(), Error>;

    /// Copies a state slot's `(num_envs, group targets)` values into `out`:
    /// after a step, the state that step left.
    fn read_state(&mut self, group: &str, name: &str, out: &mut [f32]) -> Result<(), Error>;

    /// Sets input plane `name` ([`Plan::input_planes`]): `values` is
    /// `(num_envs, num_targets)` row-major, column `j` the robot's target
    /// `j`, as a command field. It holds until set again; every step reads
    /// it. A non-finite value in a column some group claims zeroes that
    /// env at the next step, as a non-finite command does.
    fn set_input(&mut self, name: &str, values: &[f32]) -> Result<(), Error>;

    /// Copies output plane `name` ([`Plan::output_planes`]) as the last
    /// step left it into `out`, `(num_envs, num_ctrl)` row-major like
    /// `ctrl`: 0 in the columns of kinds that do not write it and in every
    /// column of an env the step zeroed.
    fn read_output(&mut self, name: &str, out: &mut [f32]) -> Result<(), Error>;

    /// Sets the lag of the group's delay buffer for some envs (clamped into
    /// `[min_lag, max_lag]`). Every group sharing the buffer moves with it,
    /// and with `hold_prob < 1` the next due step may draw a new lag.
    fn set_lags(&mut self, group: &str, env_ids: EnvIds<'_>, lags: Lags<'_>) -> Result<(), Error>;

    /// Copies the delay state (ring head, push count, lag, step count,
    /// phase) of every env for the group's delay buffer into `out`
    /// (`num_envs` long).
    fn read_delay_states(&mut self, group: &str, out: &mut [DelayState]) -> Result<(), Error>;

    /// Copies the last step's joint efforts, `(num_envs, num_joints)`, into
    /// `out`: MuJoCo's `qfrc_actuator` from the MuJoCo-law groups (the sum
    /// of `moment·actuator_force` clamped by each joint's
    /// `actuatorfrcrange`); zeros when the plan has none.
    fn read_joint_effort(&mut self, out: &mut [f32]) -> Result<(), Error>;

    /// Copies the current lag of every env for the group's delay buffer
    /// into `out` (`num_envs` long).
    fn read_lags(&mut self, group: &str, out: &mut [u32]) -> Result<(), Error> {
        self.plan()
            .per_env_buffer_of(group, "the lag buffer", out.len())?;
        let mut states = vec![DelayState::default(); out.len()];
        self.read_delay_states(group, &mut states)?;
        for (o, s) in out.iter_mut().zip(&states) {
            *o = s.lag;
        }
        Ok(())
    }

    /// mjlab's `set_gains`: `kp` and/or `kd`, checked together before either is written.
    fn set_gains(
        &mut self,
        group: &str,
        env_ids: EnvIds<'_>,
        kp: Option<Values<'_>>,
        kd: Option<Values<'_>>,
    ) -> Result<(), Error> {
        if let Some(kd) = kd {
            self.plan()
                .check_param_write(group, "damping", env_ids, kd)?;
        }
        if let Some(kp) = kp {
            self.set_param(group, "stiffness", env_ids, kp)?;
        }
        if let Some(kd) = kd {
            self.set_param(group, "damping", env_ids, kd)?;
        }
        Ok(())
    }

    /// mjlab's `set_effort_limit`.
    fn set_effort_limit(
        &mut self,
        group: &str,
        env_ids: EnvIds<'_>,
        values: Values<'_>,
    ) -> Result<(), Error> {
        self.set_param(group, "effort_limit", env_ids, values)
    }
}
