//! The `[slot][env][column]` tables of parameters and state (columns in
//! ctrl order; a backend may keep its parameters in command order,
//! [`ColumnOrder`]): env selections, values, handles, and the checked reads
//! and writes every backend shares.

use super::*;

/// A parameter of one group of a plan, resolved by [`Plan::param_ref`].
#[derive(Debug, Clone, Copy)]
pub struct ParamRef {
    group: usize,
    slot: usize,
    spec: &'static ParamSpec,
}

impl ParamRef {
    /// The parameter's spec (name, unit, domain).
    pub fn spec(&self) -> &'static ParamSpec {
        self.spec
    }
}

/// The column order of a backend's `[slot][env][column]` parameter table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnOrder {
    /// Column `c` is ctrl column `c` (every state table, and every
    /// parameter table unless its backend says otherwise).
    Ctrl,
    /// Column `j` is command column `j`: for a plan whose ctrl columns are
    /// the command columns in another order ([`Plan::ctrl_permutes_cmd`]),
    /// so a law can run over the command's rows as they are.
    Cmd,
}

/// Which envs a setter or reset touches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnvIds<'a> {
    /// Every env.
    All,
    /// These envs, in this order (values follow it).
    List(&'a [u32]),
}

impl<'a> From<&'a [u32]> for EnvIds<'a> {
    fn from(ids: &'a [u32]) -> Self {
        EnvIds::List(ids)
    }
}

impl<'a, const N: usize> From<&'a [u32; N]> for EnvIds<'a> {
    fn from(ids: &'a [u32; N]) -> Self {
        EnvIds::List(ids)
    }
}

/// Values for a parameter setter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Values<'a> {
    /// One value for every selected (env, target).
    Scalar(f32),
    /// One value per selected env, broadcast over the group's targets.
    PerEnv(&'a [f32]),
    /// One value per (selected env, group target), row-major.
    PerEnvTarget(&'a [f32]),
}

impl Values<'_> {
    /// Checks that the values fit `num_envs` selected envs × `num_targets`
    /// targets and returns them as given (one for a scalar).
    pub(super) fn checked(
        &self,
        group: &str,
        field: &str,
        num_envs: usize,
        num_targets: usize,
    ) -> Result<&[f32], Error> {
        let (given, expected) = match self {
            Values::Scalar(v) => (std::slice::from_ref(v), 1),
            Values::PerEnv(v) => (*v, num_envs),
            Values::PerEnvTarget(v) => (*v, num_envs * num_targets),
        };
        if given.len() != expected {
            return Err(Error::ValuesShape {
                group: group.to_owned(),
                field: field.to_owned(),
                got: given.len(),
                num_envs,
                num_targets,
            });
        }
        Ok(given)
    }

    /// The value of the `i`-th selected env's target `t` (of `num_targets`).
    #[inline]
    pub(super) fn at(&self, i: usize, t: usize, num_targets: usize) -> f32 {
        match self {
            Values::Scalar(v) => *v,
            Values::PerEnv(v) => v[i],
            Values::PerEnvTarget(v) => v[i * num_targets + t],
        }
    }
}

impl From<f32> for Values<'_> {
    fn from(v: f32) -> Self {
        Values::Scalar(v)
    }
}

/// Lags for `set_lags`, in physics steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lags<'a> {
    /// One lag for every selected env.
    Scalar(u32),
    /// One lag per selected env.
    PerEnv(&'a [u32]),
}

impl From<u32> for Lags<'_> {
    fn from(v: u32) -> Self {
        Lags::Scalar(v)
    }
}

impl Plan {
    /// The index of a group by name.
    pub fn group_index(&self, name: &str) -> Result<usize, Error> {
        self.groups
            .iter()
            .position(|g| g.cfg.name == name)
            .ok_or_else(|| Error::UnknownGroup {
                name: name.to_owned(),
                known: self
                    .groups
                    .iter()
                    .map(|g| g.cfg.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }

    /// Looks up a parameter of a group by name (or mjlab alias): the
    /// group's index, the slot and the spec.
    pub fn group_param(
        &self,
        group: &str,
        name: &str,
    ) -> Result<(usize, usize, &'static ParamSpec), Error> {
        let g = self.group_index(group)?;
        let actuator = &self.groups[g].cfg.actuator;
        let params = actuator.params();
        match params.iter().position(|p| p.answers_to(name)) {
            Some(k) => Ok((g, k, &params[k])),
            None => Err(Error::UnknownParam {
                group: group.to_owned(),
                kind: actuator.kind_name(),
                name: name.to_owned(),
                known: names_of(params.iter().map(|p| p.name)),
            }),
        }
    }

    /// A group's parameter resolved once, for [`Backend::set_param_at`](crate::Backend::set_param_at):
    /// randomizing per reset then costs no name lookup.
    pub fn param_ref(&self, group: &str, name: &str) -> Result<ParamRef, Error> {
        let (group, slot, spec) = self.group_param(group, name)?;
        Ok(ParamRef { group, slot, spec })
    }

    /// Checks that `param` names a parameter of this plan.
    fn resolve_param(&self, param: ParamRef) -> Result<(usize, usize, &'static ParamSpec), Error> {
        let ParamRef { group, slot, spec } = param;
        let ours = self
            .groups
            .get(group)
            .and_then(|g| g.cfg.actuator.params().get(slot))
            .is_some_and(|s| std::ptr::eq(s, spec));
        if ours {
            Ok((group, slot, spec))
        } else {
            Err(Error::ForeignParam {
                name: spec.name,
                group,
            })
        }
    }

    /// Looks up a state slot of a group by name: the group's index, the
    /// slot and the spec.
    pub fn group_state(
        &self,
        group: &str,
        name: &str,
    ) -> Result<(usize, usize, &StateSpec), Error> {
        let g = self.group_index(group)?;
        let actuator = &self.groups[g].cfg.actuator;
        let state = self.groups[g].state();
        match state.iter().position(|s| s.name == name) {
            Some(k) => Ok((g, k, &state[k])),
            None if name == crate::MJ_ACT.name => Err(Error::NoActivation {
                group: group.to_owned(),
            }),
            None => Err(Error::UnknownState {
                group: group.to_owned(),
                kind: actuator.kind_name(),
                name: name.to_owned(),
                known: names_of(state.iter().map(|s| s.name)),
            }),
        }
    }

    /// Checks a [`Backend::set_input`](crate::Backend::set_input) call:
    /// returns the plane's index.
    pub fn check_input(&self, name: &str, len: usize) -> Result<usize, Error> {
        let k = self.input_index(name)?;
        Self::check_len(
            "the input plane (num_envs × num_targets)",
            len,
            self.num_envs * self.num_targets,
        )?;
        Ok(k)
    }

    /// Checks a [`Backend::read_output`](crate::Backend::read_output) call:
    /// returns the plane's index.
    pub fn check_output(&self, name: &str, len: usize) -> Result<usize, Error> {
        let k = self.output_index(name)?;
        Self::check_len(
            "the output plane (num_envs × num_ctrl)",
            len,
            self.num_envs * self.num_ctrl(),
        )?;
        Ok(k)
    }

    /// Checks env ids and returns how many are selected.
    pub fn check_env_ids(&self, env_ids: EnvIds<'_>) -> Result<usize, Error> {
        match env_ids {
            EnvIds::All => Ok(self.num_envs),
            EnvIds::List(ids) => {
                if let Some(&env) = ids.iter().find(|&&e| e as usize >= self.num_envs) {
                    return Err(Error::EnvOutOfRange {
                        env: env as usize,
                        num_envs: self.num_envs,
                    });
                }
                Ok(ids.len())
            }
        }
    }

    /// Checks one env index.
    pub fn check_env(&self, env: usize) -> Result<(), Error> {
        if env < self.num_envs {
            Ok(())
        } else {
            Err(Error::EnvOutOfRange {
                env,
                num_envs: self.num_envs,
            })
        }
    }

    /// The env at position `i` of a checked selection.
    #[inline]
    pub fn env_at(env_ids: EnvIds<'_>, i: usize) -> usize {
        match env_ids {
            EnvIds::All => i,
            EnvIds::List(ids) => ids[i] as usize,
        }
    }

    /// Checks a parameter write without doing it: env ids, shape, and every
    /// value against the parameter's domain. Returns the group and the slot.
    pub fn check_param_write(
        &self,
        group: &str,
        name: &str,
        env_ids: EnvIds<'_>,
        values: Values<'_>,
    ) -> Result<(usize, usize), Error> {
        let (g, slot, spec) = self.group_param(group, name)?;
        self.check_write(g, spec.name, env_ids, values, |v| spec.domain.check(v))?;
        Ok((g, slot))
    }

    /// Checks env ids, the values' shape and each value.
    fn check_write(
        &self,
        g: usize,
        field: &str,
        env_ids: EnvIds<'_>,
        values: Values<'_>,
        check: impl Fn(f32) -> Result<(), &'static str>,
    ) -> Result<(), Error> {
        let group = self.groups[g].cfg.name.as_str();
        let num_envs = self.check_env_ids(env_ids)?;
        let num_targets = self.groups[g].targets.len();
        let given = values.checked(group, field, num_envs, num_targets)?;
        if let Some((bad, reason)) = given.iter().find_map(|&v| check(v).err().map(|r| (v, r))) {
            return Err(crate::kinds::invalid(group, field, bad, reason));
        }
        Ok(())
    }

    /// Writes a parameter into a `[slot][env][column]` table (every slot)
    /// whose columns are in `order`, after checking env ids, shape and
    /// every value against the parameter's domain; nothing is written on
    /// error. Returns the group and the slot.
    ///
    /// # Panics
    /// With [`ColumnOrder::Cmd`] on a plan whose ctrl columns do not
    /// permute its command columns ([`Plan::ctrl_permutes_cmd`]).
    pub fn write_param(
        &self,
        param: ParamRef,
        env_ids: EnvIds<'_>,
        values: Values<'_>,
        table: &mut [f32],
        order: ColumnOrder,
    ) -> Result<(usize, usize), Error> {
        let (g, slot, spec) = self.resolve_param(param)?;
        self.check_write(g, spec.name, env_ids, values, |v| spec.domain.check(v))?;
        self.scatter(g, slot, env_ids, values, table, order);
        Ok((g, slot))
    }

    /// Writes a state slot of a group into a `[slot][env][ctrl]` state table
    /// after checking everything (finite values, shape, env ids); nothing is
    /// written on error. Returns the group and the slot.
    pub fn write_state(
        &self,
        group: &str,
        name: &str,
        env_ids: EnvIds<'_>,
        values: Values<'_>,
        table: &mut [f32],
    ) -> Result<(usize, usize), Error> {
        let (g, slot, spec) = self.group_state(group, name)?;
        self.check_write(g, spec.name, env_ids, values, |v| {
            crate::kinds::Domain::Finite.check(v)
        })?;
        self.scatter(g, slot, env_ids, values, table, ColumnOrder::Ctrl);
        Ok((g, slot))
    }

    /// The table columns of group `g`'s targets in a table in `order`.
    fn table_columns(&self, g: usize, order: ColumnOrder) -> &[usize] {
        match order {
            ColumnOrder::Ctrl => &self.groups[g].ctrl_columns,
            ColumnOrder::Cmd => {
                assert!(self.ctrl_permutes_cmd(), "a table in command order");
                &self.groups[g].cmd_columns
            }
        }
    }

    /// True when the ctrl columns are the command columns, each once (in
    /// any order): a `[slot][env][column]` table can then also be in
    /// [`ColumnOrder::Cmd`].
    pub fn ctrl_permutes_cmd(&self) -> bool {
        self.num_ctrl() == self.num_targets && self.claimed == [(0, self.num_targets)]
    }

    /// A `[slot][ctrl]` table of per-column values (such as
    /// [`Plan::param_defaults`]) with its columns in `order`.
    ///
    /// # Panics
    /// As [`Plan::write_param`].
    pub fn in_order(&self, values: &[f32], order: ColumnOrder) -> Vec<f32> {
        let nc = self.num_ctrl().max(1);
        let mut out = values.to_vec();
        if order == ColumnOrder::Cmd {
            assert!(self.ctrl_permutes_cmd(), "a table in command order");
            for (dst, src) in out.chunks_exact_mut(nc).zip(values.chunks_exact(nc)) {
                for (column, &v) in self.ctrl.iter().zip(src) {
                    dst[column.cmd_column] = v;
                }
            }
        }
        out
    }

    /// Writes checked values into slot `slot` of a `[slot][env][column]`
    /// table in `order`.
    fn scatter(
        &self,
        g: usize,
        slot: usize,
        env_ids: EnvIds<'_>,
        values: Values<'_>,
        table: &mut [f32],
        order: ColumnOrder,
    ) {
        let columns = self.table_columns(g, order);
        let num_ctrl = self.num_ctrl();
        let plane = &mut table[slot * self.num_envs * num_ctrl..][..self.num_envs * num_ctrl];
        for i in 0..self.selected(env_ids) {
            let env = Self::env_at(env_ids, i);
            for (t, &c) in columns.iter().enumerate() {
                plane[env * num_ctrl + c] = values.at(i, t, columns.len());
            }
        }
    }

    /// Copies a group's parameter from a `[slot][env][column]` table in
    /// `order` into `out`, `(num_envs, group targets)` row-major.
    ///
    /// # Panics
    /// As [`Plan::write_param`].
    pub fn read_param(
        &self,
        group: &str,
        name: &str,
        table: &[f32],
        out: &mut [f32],
        order: ColumnOrder,
    ) -> Result<(), Error> {
        let (g, slot, _) = self.group_param(group, name)?;
        self.gather(g, slot, "the parameter buffer", table, out, order)
    }

    /// Copies a group's state slot from a `[slot][env][ctrl]` state table
    /// into `out`, `(num_envs, group targets)` row-major.
    pub fn read_state(
        &self,
        group: &str,
        name: &str,
        table: &[f32],
        out: &mut [f32],
    ) -> Result<(), Error> {
        let (g, slot, _) = self.group_state(group, name)?;
        self.gather(g, slot, "the state buffer", table, out, ColumnOrder::Ctrl)
    }

    fn gather(
        &self,
        g: usize,
        slot: usize,
        what: &'static str,
        table: &[f32],
        out: &mut [f32],
        order: ColumnOrder,
    ) -> Result<(), Error> {
        let columns = self.table_columns(g, order);
        Self::check_len(what, out.len(), self.num_envs * columns.len())?;
        let num_ctrl = self.num_ctrl();
        let plane = &table[slot * self.num_envs * num_ctrl..][..self.num_envs * num_ctrl];
        for (row, table_row) in out
            .chunks_exact_mut(columns.len())
            .zip(plane.chunks_exact(num_ctrl))
        {
            for (o, &c) in row.iter_mut().zip(columns) {
                *o = table_row[c];
            }
        }
        Ok(())
    }

    /// Writes every state slot's reset value for the selected envs into a
    /// `[slot][env][ctrl]` state table (env ids already checked).
    pub fn reset_state(&self, env_ids: EnvIds<'_>, table: &mut [f32]) {
        let num_ctrl = self.num_ctrl();
        let plane = self.num_envs * num_ctrl;
        for (k, resets) in self.state_resets.chunks_exact(num_ctrl.max(1)).enumerate() {
            for i in 0..self.selected(env_ids) {
                let env = Self::env_at(env_ids, i);
                table[k * plane + env * num_ctrl..][..num_ctrl].copy_from_slice(resets);
            }
        }
    }

    /// How many envs a (checked) selection holds.
    fn selected(&self, env_ids: EnvIds<'_>) -> usize {
        match env_ids {
            EnvIds::All => self.num_envs,
            EnvIds::List(ids) => ids.len(),
        }
    }

    /// `set_lags` on the buffer of `group` (every group sharing it moves),
    /// clamped into `[min_lag, max_lag]`: checks everything, then calls
    /// `write(state_index, lag)` for each selected env, where `state_index`
    /// indexes a `(num_envs, num_buffers)` state table. Nothing is written on error.
    pub fn write_lags(
        &self,
        group: &str,
        env_ids: EnvIds<'_>,
        lags: Lags<'_>,
        mut write: impl FnMut(usize, u32),
    ) -> Result<(), Error> {
        let b = self.buffer_of(group)?;
        let n = self.check_env_ids(env_ids)?;
        if let Lags::PerEnv(values) = lags {
            if values.len() != n {
                let num_targets = self.groups[self.group_index(group)?].targets.len();
                return Err(Error::ValuesShape {
                    group: group.to_owned(),
                    field: "lags".into(),
                    got: values.len(),
                    num_envs: n,
                    num_targets,
                });
            }
        }
        let params = &self.buffers[b].params;
        for i in 0..n {
            let env = Self::env_at(env_ids, i);
            let lag = match lags {
                Lags::Scalar(l) => l,
                Lags::PerEnv(v) => v[i],
            };
            write(env * self.buffers.len() + b, params.clamp_lag(lag));
        }
        Ok(())
    }
}
