//! The per-step input: commands and joint state, `(num_envs, num_targets)` each.

use crate::error::Error;

/// One step's input, as mjlab's `ActuatorCmd`: five `(num_envs, num_targets)`
/// row-major `f32` arrays. Column `j` is [`Robot::column`](crate::Robot::column)'s
/// order: the joints, then the tendons, then the sites.
///
/// Keep one `ActuatorCmd` alive and overwrite its arrays every step: a step
/// allocates nothing.
///
/// ```
/// let mut cmd = sinew_core::ActuatorCmd::zeros(2, 3);
/// cmd.row_mut_position_target(1)[2] = 0.5;
/// assert_eq!(cmd.position_target[1 * 3 + 2], 0.5);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ActuatorCmd {
    num_envs: usize,
    num_targets: usize,
    /// Position targets (rad or m).
    pub position_target: Vec<f32>,
    /// Velocity targets (rad/s or m/s).
    pub velocity_target: Vec<f32>,
    /// Effort targets, feed-forward (N·m or N).
    pub effort_target: Vec<f32>,
    /// Current positions (joint position, tendon length).
    pub pos: Vec<f32>,
    /// Current velocities.
    pub vel: Vec<f32>,
}

/// The names of the five fields, in [`ActuatorCmd::fields`] order.
pub const CMD_FIELDS: [&str; 5] = [
    "position_target",
    "velocity_target",
    "effort_target",
    "pos",
    "vel",
];

impl ActuatorCmd {
    /// All zeros.
    ///
    /// # Panics
    ///
    /// When `num_envs × num_targets` overflows `usize` (as `vec!` does when
    /// the allocation cannot be made).
    pub fn zeros(num_envs: usize, num_targets: usize) -> Self {
        let n = num_envs
            .checked_mul(num_targets)
            .expect("ActuatorCmd::zeros: num_envs × num_targets overflows usize");
        ActuatorCmd {
            num_envs,
            num_targets,
            position_target: vec![0.0; n],
            velocity_target: vec![0.0; n],
            effort_target: vec![0.0; n],
            pos: vec![0.0; n],
            vel: vec![0.0; n],
        }
    }

    /// Rows.
    pub fn num_envs(&self) -> usize {
        self.num_envs
    }

    /// Columns.
    pub fn num_targets(&self) -> usize {
        self.num_targets
    }

    /// The five arrays in [`CMD_FIELDS`] order.
    pub fn fields(&self) -> [&[f32]; 5] {
        [
            &self.position_target,
            &self.velocity_target,
            &self.effort_target,
            &self.pos,
            &self.vel,
        ]
    }

    /// The five arrays in [`CMD_FIELDS`] order, writable.
    pub fn fields_mut(&mut self) -> [&mut [f32]; 5] {
        [
            &mut self.position_target,
            &mut self.velocity_target,
            &mut self.effort_target,
            &mut self.pos,
            &mut self.vel,
        ]
    }

    /// Row `env` of the position targets.
    ///
    /// # Panics
    ///
    /// When `env >= num_envs`, as slice indexing does.
    pub fn row_mut_position_target(&mut self, env: usize) -> &mut [f32] {
        assert!(
            env < self.num_envs,
            "ActuatorCmd::row_mut_position_target: env {env} is out of range: num_envs is {}",
            self.num_envs
        );
        let t = self.num_targets;
        &mut self.position_target[env * t..(env + 1) * t]
    }

    /// Checks that this command is `(num_envs, num_targets)` and that every
    /// array holds exactly that many values.
    pub fn check_shape(&self, num_envs: usize, num_targets: usize) -> Result<(), Error> {
        if self.num_envs != num_envs || self.num_targets != num_targets {
            return Err(Error::CmdDims {
                got_envs: self.num_envs,
                got_targets: self.num_targets,
                num_envs,
                num_targets,
            });
        }
        let expected = num_envs * num_targets;
        for (field, values) in CMD_FIELDS.iter().zip(self.fields()) {
            if values.len() != expected {
                return Err(Error::CmdShape {
                    field,
                    got: values.len(),
                    expected,
                    num_envs,
                    num_targets,
                });
            }
        }
        Ok(())
    }
}
