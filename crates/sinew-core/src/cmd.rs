//! The per-step input: commands and joint state, `(num_envs, num_targets)` each.

use ndarray::{ArrayView2, ArrayViewMut2};

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
        self.as_cmd().check_shape(num_envs, num_targets)
    }

    /// The five arrays as `(num_envs, num_targets)` views, writable, in
    /// [`CMD_FIELDS`] order.
    ///
    /// # Panics
    ///
    /// When an array no longer holds `num_envs × num_targets` values (its
    /// `Vec` was resized by hand).
    pub fn arrays_mut(&mut self) -> [ArrayViewMut2<'_, f32>; 5] {
        let shape = (self.num_envs, self.num_targets);
        self.fields_mut().map(|field| {
            ArrayViewMut2::from_shape(shape, field)
                .expect("ActuatorCmd::arrays_mut: an array was resized")
        })
    }
}

/// A borrowed command: five `(num_envs, num_targets)` row-major `f32`
/// arrays owned by the caller (a simulator's buffers, numpy arrays, torch
/// CPU tensors), stepped without a copy.
///
/// ```
/// use ndarray::Array2;
/// use sinew_core::CmdRef;
/// let zeros = Array2::<f32>::zeros((4, 2));
/// let target = Array2::<f32>::from_elem((4, 2), 0.5);
/// let cmd = CmdRef::from_arrays([target.view(), zeros.view(), zeros.view(), zeros.view(), zeros.view()])?;
/// assert_eq!((cmd.num_envs(), cmd.num_targets()), (4, 2));
/// assert_eq!(cmd.fields()[0][7], 0.5);
/// # Ok::<(), sinew_core::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CmdRef<'a> {
    num_envs: usize,
    num_targets: usize,
    fields: [&'a [f32]; 5],
}

impl<'a> CmdRef<'a> {
    /// Five row-major slices in [`CMD_FIELDS`] order, each of
    /// `num_envs × num_targets` values.
    pub fn new(num_envs: usize, num_targets: usize, fields: [&'a [f32]; 5]) -> Result<Self, Error> {
        let cmd = CmdRef {
            num_envs,
            num_targets,
            fields,
        };
        cmd.check_shape(num_envs, num_targets)?;
        Ok(cmd)
    }

    /// Five `(num_envs, num_targets)` views in [`CMD_FIELDS`] order, each
    /// in standard (C-contiguous, row-major) layout; no copy is made, so a
    /// transposed or strided view is an error naming the field.
    pub fn from_arrays(arrays: [ArrayView2<'a, f32>; 5]) -> Result<Self, Error> {
        let (num_envs, num_targets) = arrays[0].dim();
        let mut fields: [&'a [f32]; 5] = [&[]; 5];
        for (k, array) in arrays.into_iter().enumerate() {
            let (envs, targets) = array.dim();
            if (envs, targets) != (num_envs, num_targets) {
                return Err(Error::CmdDims {
                    got_envs: envs,
                    got_targets: targets,
                    num_envs,
                    num_targets,
                });
            }
            fields[k] = array.to_slice().ok_or(Error::CmdLayout {
                field: CMD_FIELDS[k],
            })?;
        }
        Ok(CmdRef {
            num_envs,
            num_targets,
            fields,
        })
    }

    /// Rows.
    pub fn num_envs(&self) -> usize {
        self.num_envs
    }

    /// Columns.
    pub fn num_targets(&self) -> usize {
        self.num_targets
    }

    /// The five slices in [`CMD_FIELDS`] order.
    pub fn fields(&self) -> [&'a [f32]; 5] {
        self.fields
    }

    /// Checks that this command is `(num_envs, num_targets)` and that every
    /// slice holds exactly that many values.
    pub fn check_shape(&self, num_envs: usize, num_targets: usize) -> Result<(), Error> {
        if self.num_envs != num_envs || self.num_targets != num_targets {
            return Err(Error::CmdDims {
                got_envs: self.num_envs,
                got_targets: self.num_targets,
                num_envs,
                num_targets,
            });
        }
        let expected = num_envs.checked_mul(num_targets);
        for (field, values) in CMD_FIELDS.iter().zip(self.fields) {
            if Some(values.len()) != expected {
                return Err(Error::CmdShape {
                    field,
                    got: values.len(),
                    expected: expected.unwrap_or(usize::MAX),
                    num_envs,
                    num_targets,
                });
            }
        }
        Ok(())
    }
}

/// What [`Backend::step`](crate::Backend::step) reads: anything that lends
/// the five command arrays, an owned [`ActuatorCmd`] or a borrowed
/// [`CmdRef`].
pub trait AsCmd {
    /// The command as borrowed slices (their lengths are checked by the step).
    fn as_cmd(&self) -> CmdRef<'_>;
}

impl AsCmd for ActuatorCmd {
    fn as_cmd(&self) -> CmdRef<'_> {
        CmdRef {
            num_envs: self.num_envs,
            num_targets: self.num_targets,
            fields: self.fields(),
        }
    }
}

impl AsCmd for CmdRef<'_> {
    fn as_cmd(&self) -> CmdRef<'_> {
        *self
    }
}
