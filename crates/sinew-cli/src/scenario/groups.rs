//! One `[[groups]]` entry as a library group: the fields each kind
//! takes, presets, MJCF attributes.

use super::*;

pub(super) type Located = (std::ops::Range<usize>, String);

/// A group's BAM preset: its servo at the scenario's step and the fitted
/// rotor inertia.
pub(super) struct Preset {
    servo: sinew::bam::BamServo,
    armature: Option<f32>,
}

/// The servo of the preset a group names: one of BAM's shipped fits
/// (`xl330/m6`) or a parameter file in BAM's layout (`*.json`, relative to
/// the scenario; what `sinew fit` writes).
pub(super) fn preset_servo(
    p: &S<String>,
    group: &str,
    dir: &Path,
    dt: f64,
) -> Result<Preset, Located> {
    let name = p.get_ref();
    let located = |message: String| {
        (
            p.span(),
            format!("group `{group}`: field `preset`: {message}"),
        )
    };
    let params = match sinew::bam::bam_fit(name) {
        Some(fit) => crate::servo::BamParams::from_fit(fit),
        None if name.ends_with(".json") => {
            crate::servo::BamParams::read(&relative_to(dir, Path::new(name)), None)
                .map_err(located)?
        }
        None => {
            let known: Vec<String> = sinew::bam::BAM_FITS.iter().map(|f| f.name()).collect();
            return Err(located(format!(
                "no BAM fit `{name}`; the fits are {}, or name a parameter file (`*.json`)",
                known.join(", ")
            )));
        }
    };
    // eRob and Go1 take kp from the log: a preset starts them at 1, for the
    // group to set.
    let needs_kp = matches!(
        params.family,
        sinew::bam::BamFamily::Erob80x100
            | sinew::bam::BamFamily::Erob80x50
            | sinew::bam::BamFamily::UnitreeGo1
    );
    let settings = sinew::bam::BamSettings {
        kp: needs_kp.then_some(1.0),
        ..Default::default()
    };
    let servo = params
        .family
        .servo(group, &|n| params.get(n), settings, dt as f32)
        .map_err(|e| (p.span(), e.to_string()))?;
    Ok(Preset {
        servo,
        armature: params.get("armature").map(|a| a as f32),
    })
}

pub(super) fn servo_key(preset: &Preset) -> &'static str {
    preset.servo.clone().actuator().kind_id().spec().key
}

/// Writes `over`'s keys into `base`, table into table.
pub(super) fn merge(base: &mut toml::Table, over: toml::Table) {
    for (key, value) in over {
        match (base.get_mut(&key), value) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge(b, o),
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
}

/// The group fields kind `kind` takes besides [`COMMON_FIELDS`].
pub(super) fn allowed_fields(kind: KindToml) -> &'static [&'static str] {
    match kind {
        KindToml::Other(_) => group_keys(),
        KindToml::IdealPd => &["stiffness", "damping", "effort_limit", "gains"],
        KindToml::DcMotor => &[
            "stiffness",
            "damping",
            "effort_limit",
            "saturation_effort",
            "velocity_limit",
            "gains",
        ],
        KindToml::BuiltinPosition => &[
            "stiffness",
            "damping",
            "effort_limit",
            "gains",
            "compute_force",
        ],
        KindToml::BuiltinVelocity => &["damping", "effort_limit", "compute_force"],
        KindToml::BuiltinMotor => &["effort_limit", "gear", "compute_force"],
        KindToml::BuiltinMuscle => &[
            "compute_force",
            "acc0",
            "gear",
            "length_range",
            "timeconst",
            "tausmooth",
            "range",
            "force",
            "scale",
            "lmin",
            "lmax",
            "vmax",
            "fpmax",
            "fvmax",
        ],
        KindToml::Wrapped => &["command_field", "compute_force"],
        KindToml::MjGeneral => &[
            "command_field",
            "dyn_type",
            "dynprm",
            "gain_type",
            "gainprm",
            "bias_type",
            "biasprm",
            "ctrl_range",
            "force_range",
            "act_range",
            "act_early",
            "gear",
            "length_range",
            "acc0",
        ],
        KindToml::LearnedMlp => &[
            "effort_limit",
            "saturation_effort",
            "velocity_limit",
            "network",
            "layers",
            "activations",
            "history_length",
            "taps",
            "input_order",
            "history_init",
            "pos_scale",
            "vel_scale",
            "torque_scale",
        ],
        KindToml::LstmNet => &[
            "effort_limit",
            "saturation_effort",
            "velocity_limit",
            "network",
            "layers",
            "activations",
        ],
    }
}

/// Fields every kind takes.
pub(super) const COMMON_FIELDS: [&str; 4] =
    ["armature", "frictionloss", "viscous_damping", "delay"];

/// The fields a `[[groups]]` table of kind `id` may set besides `name`,
/// `targets`, `kind` and `transmission`: the kind's own, then the ones
/// every kind takes. What the Python package's config classes accept.
pub fn kind_fields(id: sinew::KindId) -> Vec<&'static str> {
    let key = id.spec().key;
    let known = KindToml::deserialize(
        serde::de::value::StrDeserializer::<serde::de::value::Error>::new(key),
    );
    let mut fields: Vec<&'static str> = match known {
        Ok(kind) => allowed_fields(kind).to_vec(),
        Err(_) => {
            let found = std::cell::Cell::new(&[][..]);
            let _ = id.from_fields(FieldNames(&found));
            found.get().to_vec()
        }
    };
    if matches!(id, sinew::KindId::MjPid | sinew::KindId::MjDcMotor) {
        // The MJCF element's attributes, compiled at the scenario's dt.
        fields.push("mjcf");
    }
    fields.extend(COMMON_FIELDS);
    fields
}

/// One `[[groups]]` entry as a library group, recording the line of each field.
pub(super) fn group_cfg(
    spanned: &S<GroupToml>,
    raw: Option<&toml::Table>,
    text: &str,
    dir: &Path,
    dt: f64,
    lines: &mut HashMap<(String, String), usize>,
) -> Result<GroupCfg, Located> {
    let g = spanned.get_ref();
    let name = g.name.get_ref().clone();
    // Group names become file names (`lags_<group>.npy`) and TSV cells.
    if name.is_empty()
        || name
            .chars()
            .any(|c| c.is_control() || c == '/' || c == '\\')
    {
        return Err((
            g.name.span(),
            format!(
                "field `name`: {name:?} cannot name a group: it must be non-empty, with no `/`, \
                 `\\` or control characters"
            ),
        ));
    }
    let mut note = |field: &str, span: std::ops::Range<usize>| {
        lines.insert((name.clone(), field.to_owned()), line_at(text, span.start));
    };
    note("", spanned.span());
    note("targets", g.targets.span());
    for t in g.targets.get_ref() {
        note(&format!("targets:{}", t.get_ref()), t.span());
    }
    // Every optional field with its span when set: their lines go into the
    // map, and those of the kind-specific ones are checked against the kind.
    macro_rules! spans {
        ($($field:ident),*) => {
            [$((stringify!($field), g.$field.as_ref().map(|v| v.span()))),*]
        };
    }
    let fields = spans!(
        stiffness,
        damping,
        effort_limit,
        saturation_effort,
        velocity_limit,
        gains,
        gear,
        command_field,
        length_range,
        timeconst,
        tausmooth,
        range,
        force,
        scale,
        lmin,
        lmax,
        vmax,
        fpmax,
        fvmax,
        acc0,
        compute_force,
        dyn_type,
        dynprm,
        gain_type,
        gainprm,
        bias_type,
        biasprm,
        ctrl_range,
        force_range,
        act_range,
        act_early,
        network,
        layers,
        activations,
        history_length,
        taps,
        input_order,
        history_init,
        pos_scale,
        vel_scale,
        torque_scale,
        armature,
        frictionloss,
        viscous_damping,
        delay
    );
    for (field, span) in &fields {
        if let Some(span) = span {
            note(field, span.clone());
        }
    }
    let err = |span: std::ops::Range<usize>, message: String| {
        Err((span, format!("group `{name}`: {message}")))
    };
    // A preset names the kind; a `kind` beside it must agree.
    let preset = match &g.preset {
        None => None,
        Some(p) => Some((preset_servo(p, &name, dir, dt)?, p.span())),
    };
    let preset_key = preset.as_ref().map(|(servo, _)| servo_key(servo));
    let (kind_text, kind_span) = match (&g.kind, preset_key) {
        (Some(k), Some(key)) if k.get_ref() != key => {
            return err(
                k.span(),
                format!(
                    "field `kind`: `{}` differs from the preset's kind `{key}`; leave `kind` out",
                    k.get_ref()
                ),
            )
        }
        (Some(k), _) => (k.get_ref().as_str(), k.span()),
        (None, Some(key)) => (key, spanned.span()),
        (None, None) => {
            return err(
                spanned.span(),
                "needs field `kind` (or a BAM servo `preset`)".into(),
            )
        }
    };
    let kind = match KindToml::deserialize(serde::de::value::StrDeserializer::<
        serde::de::value::Error,
    >::new(kind_text))
    {
        Ok(kind) => kind,
        Err(_) => match sinew::KindId::from_key(kind_text) {
            Some(id) => KindToml::Other(id),
            None => {
                let known: Vec<&str> = sinew::KindId::ALL.iter().map(|k| k.spec().key).collect();
                return err(
                    kind_span,
                    format!(
                        "field `kind`: unknown kind `{kind_text}`; the kinds are {}",
                        known.join(", ")
                    ),
                );
            }
        },
    };
    let kind_name = match kind {
        KindToml::Other(id) => id.spec().name.to_owned(),
        known => format!("{known:?}"),
    };
    let group_span = spanned.span();
    if let Some(raw) = raw {
        for key in raw.keys() {
            let offset = key_offset(text, &group_span, key);
            // Every key is noted, for messages about the kind's own fields.
            if let Some(offset) = offset {
                lines
                    .entry((name.clone(), key.clone()))
                    .or_insert(line_at(text, offset));
            }
            if !matches!(kind, KindToml::Other(_)) && !group_keys().contains(&key.as_str()) {
                let at = offset.map_or(group_span.clone(), |o| o..o + key.len());
                return err(
                    at,
                    format!(
                        "unknown field `{key}`, expected one of {}",
                        group_keys()
                            .iter()
                            .map(|k| format!("`{k}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                );
            }
        }
    }

    // Fields each kind takes; any other set field is an error.
    let allowed = allowed_fields(kind);
    for (field, span) in fields {
        if let Some(span) = span {
            if !COMMON_FIELDS.contains(&field) && !allowed.contains(&field) {
                return err(
                    span,
                    format!(
                        "field `{field}` does not apply to kind {}; it takes {}",
                        snake(&kind_name),
                        allowed.join(", ")
                    ),
                );
            }
        }
    }

    let armature = match g.armature.as_ref().map(|a| (a.get_ref(), a.span())) {
        // A preset's fitted rotor inertia, unless the group sets its own.
        None => preset.as_ref().and_then(|(preset, _)| preset.armature),
        Some((ArmatureToml::Value(v), _)) => Some(*v),
        Some((ArmatureToml::Planetary(p), span)) => {
            if p.gear_ratio[0] != 1.0 {
                return err(
                    span,
                    format!(
                        "field `armature`: gear_ratio[0] must be 1 (the rotor stage), got {}",
                        p.gear_ratio[0]
                    ),
                );
            }
            let [i0, i1, i2] = p.rotor_inertia;
            let [_, r1, r2] = p.gear_ratio;
            Some((i0 * (r1 * r2).powi(2) + i1 * r2 * r2 + i2) as f32)
        }
    };
    let value = |v: &Option<S<f32>>| v.as_ref().map(|s| *s.get_ref());
    let required = |field: &str, v: &Option<S<f32>>| -> Result<f32, Located> {
        value(v).ok_or_else(|| {
            (
                spanned.span(),
                format!(
                    "group `{name}`: kind {} needs field `{field}`",
                    snake(&kind_name)
                ),
            )
        })
    };
    // kp and kd: given, or from `gains` on the armature.
    let (stiffness, damping) = match g.gains.as_ref() {
        Some(gains) => {
            if g.stiffness.is_some() || g.damping.is_some() {
                return err(
                    gains.span(),
                    "give either `gains` or `stiffness`/`damping`, not both".into(),
                );
            }
            let Some(a) = armature else {
                return err(
                    gains.span(),
                    "field `gains` derives kp and kd from the armature: set `armature`".into(),
                );
            };
            let GainsToml {
                natural_frequency_hz: f,
                damping_ratio: zeta,
            } = *gains.get_ref();
            let w = 2.0 * std::f64::consts::PI * f;
            let a = f64::from(a);
            let (kp, kd) = ((a * w * w) as f32, (2.0 * zeta * a * w) as f32);
            // Name what the user wrote, not the kp and kd derived from it.
            for (what, v) in [("stiffness", kp), ("damping", kd)] {
                if !(v.is_finite() && v >= 0.0) {
                    return err(
                        gains.span(),
                        format!(
                            "field `gains`: natural_frequency_hz = {f} and damping_ratio = \
                             {zeta} on armature {a} give {what} = {v}; it must be finite and >= 0"
                        ),
                    );
                }
            }
            (Some(kp), Some(kd))
        }
        None => (value(&g.stiffness), value(&g.damping)),
    };
    let need = |field: &str, v: Option<f32>| {
        v.ok_or_else(|| {
            (
                spanned.span(),
                format!(
                    "group `{name}`: kind {} needs field `{field}` (or `gains`)",
                    snake(&kind_name)
                ),
            )
        })
    };
    let actuator: ActuatorCfg = match kind {
        KindToml::Other(id) => {
            let mut fields = raw.cloned().unwrap_or_default();
            fields.retain(|key: &str, _| !GROUP_OWN_KEYS.contains(&key));
            // A kind stepped at the physics timestep takes the scenario's.
            let timestep = id.spec().params.iter().any(|p| p.name == "timestep");
            if timestep && !fields.contains_key("timestep") {
                fields.insert("timestep".into(), toml::Value::Float(dt));
            }
            if let Some(mjcf) = fields.remove("mjcf") {
                mjcf_actuator(id, mjcf, &fields, dt).map_err(|e| {
                    (
                        group_span.clone(),
                        format!("group `{name}`: field `mjcf`: {e}"),
                    )
                })?
            } else {
                if let Some((servo, span)) = &preset {
                    let mut base = match toml::Value::try_from(&servo.servo) {
                        Ok(toml::Value::Table(t)) => t,
                        _ => {
                            return err(
                                span.clone(),
                                "field `preset`: cannot be written out".into(),
                            )
                        }
                    };
                    merge(&mut base, fields);
                    fields = base;
                }
                id.from_fields(toml::Value::Table(fields)).map_err(|e| {
                    (
                        group_span.clone(),
                        format!("group `{name}`: kind {}: {e}", id.spec().key),
                    )
                })?
            }
        }
        KindToml::IdealPd => IdealPdCfg {
            stiffness: need("stiffness", stiffness)?,
            damping: need("damping", damping)?,
            effort_limit: value(&g.effort_limit).unwrap_or(f32::INFINITY),
        }
        .into(),
        KindToml::DcMotor => DcMotorCfg {
            stiffness: need("stiffness", stiffness)?,
            damping: need("damping", damping)?,
            effort_limit: required("effort_limit", &g.effort_limit)?,
            saturation_effort: required("saturation_effort", &g.saturation_effort)?,
            velocity_limit: required("velocity_limit", &g.velocity_limit)?,
        }
        .into(),
        KindToml::BuiltinPosition => BuiltinPositionCfg {
            stiffness: need("stiffness", stiffness)?,
            damping: damping.unwrap_or(0.0),
            effort_limit: value(&g.effort_limit),
        }
        .into(),
        KindToml::BuiltinVelocity => BuiltinVelocityCfg {
            damping: required("damping", &g.damping)?,
            effort_limit: value(&g.effort_limit),
        }
        .into(),
        KindToml::BuiltinMotor => BuiltinMotorCfg {
            effort_limit: required("effort_limit", &g.effort_limit)?,
            gear: value(&g.gear).unwrap_or(1.0),
        }
        .into(),
        KindToml::BuiltinMuscle => {
            let d = BuiltinMuscleCfg::default();
            let pair =
                |v: &Option<S<(f32, f32)>>, default| v.as_ref().map_or(default, |s| *s.get_ref());
            BuiltinMuscleCfg {
                length_range: pair(&g.length_range, d.length_range),
                gear: value(&g.gear).unwrap_or(d.gear),
                timeconst: pair(&g.timeconst, d.timeconst),
                tausmooth: value(&g.tausmooth).unwrap_or(d.tausmooth),
                range: pair(&g.range, d.range),
                force: value(&g.force).unwrap_or(d.force),
                scale: value(&g.scale).unwrap_or(d.scale),
                lmin: value(&g.lmin).unwrap_or(d.lmin),
                lmax: value(&g.lmax).unwrap_or(d.lmax),
                vmax: value(&g.vmax).unwrap_or(d.vmax),
                fpmax: value(&g.fpmax).unwrap_or(d.fpmax),
                fvmax: value(&g.fvmax).unwrap_or(d.fvmax),
                acc0: value(&g.acc0).unwrap_or(d.acc0),
            }
            .into()
        }
        KindToml::Wrapped => WrappedCfg {
            command_field: g
                .command_field
                .as_ref()
                .map(|f| command_field(*f.get_ref())),
        }
        .into(),
        KindToml::MjGeneral => {
            let d = MjGeneralCfg::default();
            let prm = |v: &Option<S<Vec<f32>>>, default: [f32; 10]| match v {
                None => Ok(default),
                Some(s) if s.get_ref().len() > 10 => Err((
                    s.span(),
                    format!(
                        "group `{name}`: MuJoCo keeps 10 parameters; {} given",
                        s.get_ref().len()
                    ),
                )),
                Some(s) => {
                    let mut out = [0.0; 10];
                    out[..s.get_ref().len()].copy_from_slice(s.get_ref());
                    Ok(out)
                }
            };
            let range = |v: &Option<S<(f32, f32)>>| {
                v.as_ref().map(|s| {
                    let (lo, hi) = *s.get_ref();
                    [lo, hi]
                })
            };
            MjGeneralCfg {
                command_field: g
                    .command_field
                    .as_ref()
                    .map_or(d.command_field, |f| command_field(*f.get_ref())),
                dyn_type: g
                    .dyn_type
                    .as_ref()
                    .map_or(d.dyn_type, |t| dyn_type(*t.get_ref())),
                dynprm: prm(&g.dynprm, d.dynprm)?,
                gain_type: g
                    .gain_type
                    .as_ref()
                    .map_or(d.gain_type, |t| gain_type(*t.get_ref())),
                gainprm: prm(&g.gainprm, d.gainprm)?,
                bias_type: g
                    .bias_type
                    .as_ref()
                    .map_or(d.bias_type, |t| bias_type(*t.get_ref())),
                biasprm: prm(&g.biasprm, d.biasprm)?,
                ctrl_range: range(&g.ctrl_range),
                force_range: range(&g.force_range),
                act_range: range(&g.act_range),
                act_early: g.act_early.as_ref().is_some_and(|b| *b.get_ref()),
                gear: value(&g.gear).unwrap_or(d.gear),
                length_range: range(&g.length_range).unwrap_or(d.length_range),
                acc0: value(&g.acc0).unwrap_or(d.acc0),
            }
            .into()
        }
        KindToml::LearnedMlp | KindToml::LstmNet => {
            let Some(file) = &g.network else {
                return err(
                    spanned.span(),
                    format!(
                        "kind {} needs field `network` (a .safetensors file)",
                        snake(&kind_name)
                    ),
                );
            };
            let path = dir.join(file.get_ref());
            let mut spec = NetSpec {
                layers: g.layers.as_ref().map(|l| l.get_ref().clone()),
                activations: None,
            };
            if let Some(names) = &g.activations {
                let parsed: Option<Vec<Activation>> = names
                    .get_ref()
                    .iter()
                    .map(|n| Activation::from_name(n))
                    .collect();
                let Some(parsed) = parsed else {
                    return err(
                        names.span(),
                        format!(
                            "field `activations`: {:?} holds an unknown name; known: {}",
                            names.get_ref(),
                            Activation::known_names()
                        ),
                    );
                };
                spec.activations = Some(parsed);
            }
            let net_err = |e: sinew::Error| (file.span(), format!("group `{name}`: {e}"));
            let limits = (
                required("effort_limit", &g.effort_limit)?,
                required("saturation_effort", &g.saturation_effort)?,
                required("velocity_limit", &g.velocity_limit)?,
            );
            if kind == KindToml::LstmNet {
                let net = LstmNet::load(&path, &spec).map_err(net_err)?;
                LstmNetCfg::new(net, limits.0, limits.1, limits.2).into()
            } else {
                let net = Mlp::load(&path, &spec).map_err(net_err)?;
                if let (Some(h), Some(t)) = (&g.history_length, &g.taps) {
                    let span = h.span().start.max(t.span().start)..h.span().end.max(t.span().end);
                    return err(span, "give `history_length` or `taps`, not both".into());
                }
                if let Some(h) = g
                    .history_length
                    .as_ref()
                    .filter(|h| *h.get_ref() as usize > sinew::MAX_HISTORY)
                {
                    return err(
                        h.span(),
                        format!(
                            "field `history_length`: {} is more than the {} steps a history may hold",
                            h.get_ref(),
                            sinew::MAX_HISTORY
                        ),
                    );
                }
                let mut cfg = LearnedMlpCfg::new(net, limits.0, limits.1, limits.2)
                    .with_history_length(g.history_length.as_ref().map_or(3, |h| *h.get_ref()))
                    .with_scales(
                        value(&g.pos_scale).unwrap_or(1.0),
                        value(&g.vel_scale).unwrap_or(1.0),
                        value(&g.torque_scale).unwrap_or(1.0),
                    );
                if let Some(t) = &g.taps {
                    cfg = cfg.with_taps(t.get_ref().clone());
                }
                if let Some(o) = &g.input_order {
                    cfg = cfg.with_input_order(match o.get_ref() {
                        OrderToml::PosVel => InputOrder::PosVel,
                        OrderToml::VelPos => InputOrder::VelPos,
                    });
                }
                if let Some(i) = &g.history_init {
                    cfg = cfg.with_history_init(match i.get_ref() {
                        HistoryInitToml::Backfill => HistoryInit::Backfill,
                        HistoryInitToml::Zeros => HistoryInit::Zeros,
                    });
                }
                cfg.into()
            }
        }
    };
    let mut cfg = GroupCfg::new(
        name.clone(),
        g.targets.get_ref().iter().map(|t| t.get_ref().clone()),
        actuator,
    )
    .with_transmission(transmission(g.transmission));
    cfg.armature = armature;
    cfg.compute_force = g.compute_force.as_ref().is_some_and(|b| *b.get_ref());
    cfg.frictionloss = value(&g.frictionloss);
    cfg.viscous_damping = value(&g.viscous_damping);
    if let Some(d) = &g.delay {
        let d = d.get_ref();
        cfg.delay = Some(DelayCfg {
            min_lag: d.min_lag,
            max_lag: d.max_lag,
            hold_prob: d.hold_prob,
            update_period: d.update_period,
            per_env_phase: d.per_env_phase,
            resample: match d.resample {
                ResampleToml::EveryStep => Resample::EveryStep,
                ResampleToml::OnReset => Resample::OnReset,
            },
            share: match d.share.as_deref() {
                None | Some("auto") => DelayShare::Auto,
                Some("own") => DelayShare::Own,
                Some(buffer) => DelayShare::Named(buffer.to_owned()),
            },
        });
    }
    Ok(cfg)
}

/// `IdealPd` → `ideal_pd`.
pub(super) fn snake(camel: &str) -> String {
    let mut out = String::new();
    for (i, c) in camel.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            out.push('_');
        }
        out.extend(c.to_lowercase());
    }
    out
}

/// A MuJoCo 4 kind written as its MJCF element's attributes (`mjcf = {
/// motorconst = [0.05], resistance = 2, … }`), compiled as MuJoCo compiles
/// them at the group's `timestep` (the scenario's `dt` unless given).
/// `fields` are the group's other kind fields: only `timestep` may stand
/// beside `mjcf`.
pub(super) fn mjcf_actuator(
    id: sinew::KindId,
    mjcf: toml::Value,
    fields: &toml::Table,
    dt: f64,
) -> Result<ActuatorCfg, String> {
    if let Some(other) = fields.keys().find(|k| k.as_str() != "timestep") {
        return Err(format!(
            "`{other}` beside `mjcf`: write every attribute inside `mjcf`"
        ));
    }
    let dt = fields
        .get("timestep")
        .and_then(|t| t.as_float().or_else(|| t.as_integer().map(|i| i as f64)))
        .unwrap_or(dt);
    match id {
        sinew::KindId::MjDcMotor => {
            let attrs: sinew::DcMotorMjcf = mjcf.try_into().map_err(|e| e.to_string())?;
            Ok(attrs.compile(dt as f32).map_err(|e| e.to_string())?.into())
        }
        sinew::KindId::MjPid => {
            let attrs: sinew::PidMjcf = mjcf.try_into().map_err(|e| e.to_string())?;
            if attrs.kv.is_none() && attrs.dampratio.is_some() || attrs.inheritrange > 0.0 {
                return Err(
                    "`dampratio` and `inheritrange` need the model's inertia and joint \
                            range, which a scenario does not have: give `kv` and `posrange`"
                        .into(),
                );
            }
            Ok(attrs
                .compile(dt as f32, 0.0, [0.0, 0.0])
                .map_err(|e| e.to_string())?
                .into())
        }
        other => Err(format!(
            "kind {} has no MJCF element; `mjcf` is for mj_dcmotor and mj_pid",
            other.spec().key
        )),
    }
}
