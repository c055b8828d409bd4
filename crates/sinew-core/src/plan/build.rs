//! How a plan is built: groups resolved against the robot, ctrl columns,
//! delay buffers, the layout of every table and the runs the step takes.

use super::*;

impl Plan {
    /// Resolves `groups` against `robot` for `num_envs` envs.
    ///
    /// Every error is typed and names the group, field and value: a
    /// config out of its domain, a regex that does not parse or resolve,
    /// a target claimed twice, and [`Error::TooLarge`] when the backend
    /// tables for `num_envs` envs ([`Plan::memory_bytes`]) would not fit in
    /// the memory the machine has available.
    ///
    /// ```
    /// use sinew_core::{GroupCfg, IdealPdCfg, Plan, PlanOptions, Robot};
    /// let robot = Robot::from_joints(["hip", "knee"]);
    /// let plan = Plan::new(&robot, vec![GroupCfg::new("leg", [".*"], IdealPdCfg::new(20.0, 0.5))], 8, PlanOptions::default())?;
    /// assert_eq!(plan.num_ctrl(), 2);
    /// assert_eq!(plan.ctrl_columns()[1].target, "knee");
    /// # Ok::<(), sinew_core::Error>(())
    /// ```
    pub fn new(
        robot: &Robot,
        groups: Vec<GroupCfg>,
        num_envs: usize,
        options: PlanOptions,
    ) -> Result<Plan, Error> {
        if num_envs == 0 {
            return Err(Error::NoEnvs);
        }
        if !(options.timestep.is_finite() && options.timestep > 0.0) {
            return Err(Error::InvalidParam {
                group: "(plan options)".into(),
                field: "timestep".into(),
                value: options.timestep.to_string(),
                reason: "the physics step must be finite and > 0",
            });
        }
        robot.validate()?;
        let mut infos: Vec<GroupInfo> = Vec::with_capacity(groups.len());
        let mut warnings = Vec::new();
        let mut group_data = Vec::new();
        // (transmission, index) -> the first group that claimed it (all
        // claimants of a target are MuJoCo-law groups, or there is one).
        let mut claims: HashMap<(Transmission, usize), usize> = HashMap::new();
        let mut group_names = HashSet::new();
        let mut name_index = NameIndex::default();
        for cfg in groups {
            if !group_names.insert(cfg.name.clone()) {
                return Err(Error::DuplicateGroup { name: cfg.name });
            }
            cfg.validate()?;
            let mut ids =
                robot.resolve_in(&mut name_index, &cfg.name, &cfg.targets, cfg.transmission)?;
            let names = robot.names(cfg.transmission);
            let field = match &cfg.actuator {
                ActuatorCfg::Wrapped(w) => {
                    let (kept, field) = resolve_wrapped(robot, &cfg, w.command_field, &ids)?;
                    ids = kept;
                    field
                }
                other => other
                    .command_field()
                    .expect("only wrapped groups detect their command field"),
            };
            let stage = if cfg.compute_force {
                Stage::MuJoCo
            } else {
                cfg.actuator.stage()
            };
            let coupled = |stage: Stage, actuator: &ActuatorCfg| {
                stage == Stage::MuJoCo || mujoco::couples_by_law(actuator.kind_id())
            };
            let shares = coupled(stage, &cfg.actuator);
            for &id in &ids {
                // Groups the MuJoCo stage couples may share a target, as
                // MuJoCo actuators share a joint: their efforts add up.
                let first = *claims.entry((cfg.transmission, id)).or_insert(infos.len());
                if first != infos.len()
                    && !(shares && coupled(infos[first].stage, &infos[first].cfg.actuator))
                {
                    let regex = cfg
                        .targets
                        .iter()
                        .find(|re| {
                            TargetRegex::new(&cfg.name, re).is_ok_and(|r| r.is_match(&names[id]))
                        })
                        .cloned()
                        .unwrap_or_default();
                    return Err(Error::TargetClaimed {
                        transmission: cfg.transmission,
                        name: names[id].clone(),
                        first: infos[first].cfg.name.clone(),
                        second: cfg.name,
                        regex,
                    });
                }
            }
            warnings.extend(cfg.actuator.warnings(&cfg.name));
            let data = cfg.actuator.group_data();
            infos.push(GroupInfo {
                targets: ids.iter().map(|&i| names[i].clone()).collect(),
                cmd_columns: ids
                    .iter()
                    .map(|&i| robot.column(cfg.transmission, i))
                    .collect(),
                ctrl_columns: Vec::new(),
                delay_buffer: None,
                input_planes: Vec::new(),
                output_planes: Vec::new(),
                state: match stage {
                    Stage::MuJoCo => vec![crate::kinds::MJ_ACT],
                    Stage::Law | Stage::Learned => cfg.actuator.state().into_owned(),
                },
                field,
                stage,
                data_offset: group_data.len(),
                data_len: data.len(),
                cfg,
            });
            group_data.extend(data);
        }

        // Ctrl order: declaration order, then target order; or mjlab's sort.
        let mut order: Vec<(usize, usize)> = infos
            .iter()
            .enumerate()
            .flat_map(|(g, info)| (0..info.targets.len()).map(move |t| (g, t)))
            .collect();
        if options.sort_actuators {
            let wrapped = |g: usize| matches!(infos[g].cfg.actuator, ActuatorCfg::Wrapped(_));
            order.sort_by_key(|&(g, t)| {
                if wrapped(g) {
                    (0, 0, 0, g, t)
                } else {
                    (
                        1,
                        infos[g].cfg.transmission as usize,
                        infos[g].cmd_columns[t],
                        0,
                        0,
                    )
                }
            });
        }
        let mut ctrl = Vec::with_capacity(order.len());
        for (column, &(g, t)) in order.iter().enumerate() {
            let info = &mut infos[g];
            info.ctrl_columns.push(column);
            let (ctrl_range, force_range) = info.cfg.actuator.ranges();
            ctrl.push(CtrlColumn {
                group: g,
                target: info.targets[t].clone(),
                transmission: info.cfg.transmission,
                cmd_column: info.cmd_columns[t],
                meaning: match info.stage {
                    Stage::MuJoCo => CtrlMeaning::ActuatorForce,
                    Stage::Law | Stage::Learned => info.cfg.actuator.meaning(info.field),
                },
                ctrl_range,
                force_range,
            });
        }
        // With sorting, a group's ctrl columns were pushed in sorted order,
        // which is its target order too (targets are in definition order).

        let buffers = assign_buffers(&mut infos)?;
        let mj = mj_stage(robot, &infos, &ctrl, options.timestep)?;
        let learned = LearnedStage::compile(&infos, &ctrl);
        let mut plan = Plan {
            num_envs,
            num_targets: robot.num_targets(),
            seed: options.seed,
            groups: infos,
            ctrl,
            buffers,
            runs: Vec::new(),
            gathered_runs: Vec::new(),
            ring_stride: 0,
            claimed: Vec::new(),
            param_defaults: Vec::new(),
            state_resets: Vec::new(),
            inputs: Vec::new(),
            outputs: Vec::new(),
            group_data,
            warnings,
            mj,
            learned,
            timestep: options.timestep,
        };
        plan.layout();
        crate::memory::check_bytes("(plan)", "num_envs", num_envs, plan.memory_bytes())?;
        Ok(plan)
    }

    /// Ring columns, runs, claimed command ranges and parameter defaults.
    fn layout(&mut self) {
        // Ring columns in ctrl order, so delayed runs stay contiguous.
        let mut ring_column = vec![usize::MAX; self.ctrl.len()];
        for (c, column) in self.ctrl.iter().enumerate() {
            if let Some(b) = self.groups[column.group].delay_buffer {
                ring_column[c] = self.buffers[b].cmd_columns.len();
                self.buffers[b].cmd_columns.push(column.cmd_column);
            }
        }
        let mut offset = 0;
        for buffer in &mut self.buffers {
            buffer.ring_offset = offset;
            offset += buffer.ring_len();
        }
        self.ring_stride = offset;

        let mut runs: Vec<Run> = Vec::new();
        for (c, column) in self.ctrl.iter().enumerate() {
            let group = &self.groups[column.group];
            let next = Run {
                kind: group.kind(),
                field: group.field,
                group: column.group,
                ctrl_start: c,
                cmd_start: column.cmd_column,
                len: 1,
                targets: match group.delay_buffer {
                    Some(buffer) => TargetSource::Ring {
                        buffer,
                        column: ring_column[c],
                    },
                    None => TargetSource::Cmd,
                },
            };
            match runs.last_mut() {
                Some(last) if self.continues(last, &next) => last.len += 1,
                _ => runs.push(next),
            }
        }
        self.runs = runs;
        // The same columns over command rows gathered into ctrl order, the
        // delayed targets already in place.
        let mut gathered: Vec<Run> = Vec::new();
        for run in &self.runs {
            let next = Run {
                cmd_start: run.ctrl_start,
                targets: TargetSource::Cmd,
                ..*run
            };
            match gathered.last_mut() {
                Some(last) if self.continues(last, &next) => last.len += next.len,
                _ => gathered.push(next),
            }
        }
        self.gathered_runs = gathered;

        let mut cols: Vec<usize> = self.ctrl.iter().map(|c| c.cmd_column).collect();
        cols.sort_unstable();
        cols.dedup();
        let mut claimed: Vec<(usize, usize)> = Vec::new();
        for c in cols {
            match claimed.last_mut() {
                Some((start, len)) if *start + *len == c => *len += 1,
                _ => claimed.push((c, 1)),
            }
        }
        self.claimed = claimed;

        // Parameter and state slots: `[slot][ctrl]`, a group's slot k at k.
        let slots = |of: fn(&GroupInfo) -> usize| self.groups.iter().map(of).max().unwrap_or(0);
        let num_params = slots(|g| g.cfg.actuator.params().len());
        let num_state = slots(|g| g.state().len());
        let num_ctrl = self.ctrl.len();
        self.param_defaults = vec![0.0; num_params * num_ctrl];
        self.state_resets = vec![0.0; num_state * num_ctrl];
        for (c, column) in self.ctrl.iter().enumerate() {
            let group = &self.groups[column.group];
            let actuator = &group.cfg.actuator;
            for k in 0..actuator.params().len() {
                self.param_defaults[k * num_ctrl + c] = actuator.param_value(k);
            }
            for (k, state) in group.state().iter().enumerate() {
                self.state_resets[k * num_ctrl + c] = state.reset;
            }
        }

        // Input and output planes: the union over the plan's kinds, and the
        // MuJoCo stage's `act_dot`.
        (self.inputs, self.outputs) = crate::kinds::planes_of(&self.kinds());
        let raw = (self.outputs.iter()).position(|p| p.name == crate::RAW_FORCE.name);
        self.mj.raw_plane = raw.unwrap_or(0) as u32;
        if !self.mj.actuators.is_empty() {
            self.mj.act_dot_plane = self.outputs.len() as u32;
            self.outputs.push(crate::kinds::ACT_DOT);
        }
        for group in &mut self.groups {
            let spec = group.kind().spec();
            group.input_planes = crate::kinds::spec::plane_map(spec.inputs, &self.inputs);
            group.output_planes = crate::kinds::spec::plane_map(spec.outputs, &self.outputs);
        }
    }

    /// Whether `next` (one or more columns) extends run `last`: the same
    /// law (kind, command field, stage, group data) on the columns right
    /// after it, in ctrl, command and delayed-target order.
    fn continues(&self, last: &Run, next: &Run) -> bool {
        let (a, b) = (&self.groups[last.group], &self.groups[next.group]);
        let targets = match (last.targets, next.targets) {
            (TargetSource::Cmd, TargetSource::Cmd) => true,
            (
                TargetSource::Ring {
                    buffer: a,
                    column: ca,
                },
                TargetSource::Ring {
                    buffer: b,
                    column: cb,
                },
            ) => a == b && cb == ca + last.len,
            _ => false,
        };
        last.kind == next.kind
            && last.field == next.field
            && a.stage == b.stage
            && self.data_of(a) == self.data_of(b)
            && next.ctrl_start == last.ctrl_start + last.len
            && next.cmd_start == last.cmd_start + last.len
            && targets
    }
}

/// Keeps the targets that have a native actuator and decides the law.
fn resolve_wrapped(
    robot: &Robot,
    cfg: &GroupCfg,
    field: Option<crate::kinds::CommandField>,
    ids: &[usize],
) -> Result<(Vec<usize>, CommandField), Error> {
    let names = robot.names(cfg.transmission);
    let mut kept = Vec::new();
    let mut detected: Option<(String, crate::kinds::CommandField)> = None;
    for &id in ids {
        let Some(native) = robot
            .native_actuators
            .iter()
            .find(|a| a.transmission == cfg.transmission && a.target == names[id])
        else {
            continue;
        };
        kept.push(id);
        if field.is_some() {
            continue;
        }
        let this = detect_command_field(native).ok_or_else(|| Error::UndetectedCommandField {
            group: cfg.name.clone(),
            actuator: native.name.clone(),
            gain: native.gain,
            bias: native.bias,
        })?;
        match &detected {
            Some((first, f)) if *f != this => {
                return Err(Error::MixedCommandFields {
                    group: cfg.name.clone(),
                    first: first.clone(),
                    first_field: *f,
                    second: native.name.clone(),
                    second_field: this,
                })
            }
            Some(_) => {}
            None => detected = Some((native.name.clone(), this)),
        }
    }
    if kept.is_empty() {
        return Err(Error::NoNativeActuator {
            group: cfg.name.clone(),
            targets: ids
                .iter()
                .map(|&i| names[i].as_str())
                .collect::<Vec<_>>()
                .join(", "),
        });
    }
    let field = field
        .or(detected.map(|(_, f)| f))
        .expect("a kept target was detected");
    Ok((kept, field))
}

/// Gives every delayed group its buffer, by its `DelayShare` rule.
fn assign_buffers(infos: &mut [GroupInfo]) -> Result<Vec<DelayBuffer>, Error> {
    let mut buffers: Vec<DelayBuffer> = Vec::new();
    for g in 0..infos.len() {
        let Some(delay) = infos[g].cfg.delay.clone() else {
            continue;
        };
        let kind = infos[g].cfg.actuator.kind_id();
        let transmission = infos[g].cfg.transmission;
        let (auto_key, name) = match &delay.share {
            // mjlab gives wrapped and learned actuators a buffer of their own.
            DelayShare::Auto
                if !matches!(kind, KindId::Wrapped | KindId::LearnedMlp | KindId::LstmNet) =>
            {
                (Some((kind, transmission)), None)
            }
            DelayShare::Auto | DelayShare::Own => (None, None),
            DelayShare::Named(n) => (None, Some(n.clone())),
        };
        let existing = buffers.iter().position(|b| match (&name, &auto_key) {
            (Some(n), _) => b.name.as_ref() == Some(n),
            (None, Some(key)) => b.auto_key == Some(*key) && b.cfg.same_schedule(&delay),
            (None, None) => false,
        });
        let b = match existing {
            Some(b) => {
                if !buffers[b].cfg.same_schedule(&delay) {
                    return Err(Error::DelayShareMismatch {
                        buffer: name.unwrap_or_default(),
                        first: infos[buffers[b].groups[0]].cfg.name.clone(),
                        second: infos[g].cfg.name.clone(),
                    });
                }
                buffers[b].groups.push(g);
                b
            }
            None => {
                let index = buffers.len();
                buffers.push(DelayBuffer {
                    params: DelayParams::new(&delay, index as u32),
                    cfg: delay,
                    groups: vec![g],
                    cmd_columns: Vec::new(),
                    ring_offset: 0,
                    auto_key,
                    name,
                });
                index
            }
        };
        infos[g].delay_buffer = Some(b);
    }
    Ok(buffers)
}
