//! The robot as Sinew sees it: the names of its joints, tendons and sites,
//! and the simulator-native actuators it already declares.

use std::fmt;

use regex::Regex;
use std::collections::{HashMap, HashSet};

use crate::error::Error;

/// What an actuator acts through (mjlab's `TransmissionType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Transmission {
    /// A joint: `pos`/`vel` are joint position and velocity.
    Joint,
    /// A fixed tendon: `pos`/`vel` are tendon length and velocity.
    Tendon,
    /// A site: only the effort target means anything.
    Site,
}

impl Transmission {
    /// All transmissions, in command-column order.
    pub const ALL: [Transmission; 3] = [
        Transmission::Joint,
        Transmission::Tendon,
        Transmission::Site,
    ];

    /// Lower-case name, as in mjlab (`"joint"`, `"tendon"`, `"site"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Transmission::Joint => "joint",
            Transmission::Tendon => "tendon",
            Transmission::Site => "site",
        }
    }
}

impl fmt::Display for Transmission {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// MuJoCo's gain type of a native actuator (`mjtGain`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum GainType {
    /// `gain = gainprm[0]`.
    Fixed = 0,
    /// `gain = gainprm[0] + gainprm[1]·length + gainprm[2]·velocity`.
    Affine = 1,
    /// Muscle force–length–velocity gain.
    Muscle = 2,
    /// User-defined.
    User = 3,
    /// MuJoCo 4's DC motor gain (a `<general>` form; `gainprm = [R, K, …]`):
    /// `K` when `dynprm[0] > 0` (an electrical time constant), else `K/R`
    /// with the control as its input.
    DcMotor = 4,
}

/// MuJoCo's bias type of a native actuator (`mjtBias`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum BiasType {
    /// No bias.
    None = 0,
    /// `bias = biasprm[0] + biasprm[1]·length + biasprm[2]·velocity`.
    Affine = 1,
    /// Muscle passive force.
    Muscle = 2,
    /// User-defined.
    User = 3,
    /// MuJoCo 4's DC motor bias (a `<general>` form): the back-EMF
    /// `−gain·gainprm[1]·velocity` when `dynprm[0] ≤ 0`, and the cogging
    /// torque `biasprm[0]·sin(biasprm[1]·length + biasprm[2])` added after
    /// the force-range clamp.
    DcMotor = 4,
}

/// MuJoCo's activation dynamics type of a native actuator (`mjtDyn`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum DynType {
    /// No activation state.
    None = 0,
    /// Integrator.
    Integrator = 1,
    /// First-order filter, Euler.
    Filter = 2,
    /// First-order filter, exact.
    FilterExact = 3,
    /// Muscle activation dynamics.
    Muscle = 4,
    /// User-defined.
    User = 5,
}

/// An actuator the simulator model already declares (an XML `<actuator>`),
/// described the way MuJoCo stores it, so that a [`Wrapped`](crate::kinds::WrappedCfg)
/// group can tell which command it takes.
#[derive(Debug, Clone, PartialEq)]
pub struct NativeActuator {
    /// The actuator's own name.
    pub name: String,
    /// What it acts through.
    pub transmission: Transmission,
    /// The joint, tendon or site it drives.
    pub target: String,
    /// Gain type.
    pub gain: GainType,
    /// Bias type.
    pub bias: BiasType,
    /// Activation dynamics type.
    pub dyn_type: DynType,
    /// The first three gain parameters (`gainprm[0..3]`).
    pub gainprm: [f32; 3],
    /// The first three bias parameters (`biasprm[0..3]`).
    pub biasprm: [f32; 3],
    /// Every compiled field, for a wrapped group that computes the force
    /// itself ([`GroupCfg::compute_force`](crate::GroupCfg::compute_force));
    /// `None` when only the command is forwarded.
    pub general: Option<crate::kinds::MjGeneralCfg>,
}

/// A MuJoCo fixed tendon: `length = Σ coef·q` over its joints, and the
/// moment of an actuator on it is `gear·coef` at each joint.
#[derive(Debug, Clone, PartialEq)]
pub struct FixedTendon {
    /// The tendon's name (one of [`Robot::tendons`]).
    pub name: String,
    /// `(joint name, coefficient)` pairs.
    pub joints: Vec<(String, f32)>,
    /// The tendon's `actuatorfrcrange`: when the summed force of the
    /// actuators on it leaves the range, every one of them is scaled back.
    pub actuator_force_range: Option<[f32; 2]>,
}

/// The names Sinew resolves target regexes against, per transmission, in
/// definition order, plus the native actuators the model declares.
///
/// Command arrays have one column per name: the joints, then the tendons,
/// then the sites ([`Robot::column`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Robot {
    /// Joint names in definition order (free joints excluded, as in mjlab).
    pub joints: Vec<String>,
    /// Fixed-tendon names in definition order.
    pub tendons: Vec<String>,
    /// Site names in definition order.
    pub sites: Vec<String>,
    /// Actuators the model already declares (used by wrapped groups only).
    pub native_actuators: Vec<NativeActuator>,
    /// Fixed-tendon paths, for MuJoCo-law groups on tendons: with a path the
    /// tendon's length and velocity come from its joints and its force
    /// reaches them as joint effort; without one, from the tendon's own
    /// command column, and no joint effort.
    pub fixed_tendons: Vec<FixedTendon>,
    /// Joints' `actuatorfrcrange`, `(joint name, [lo, hi])`: the summed
    /// joint effort of the MuJoCo-law groups is clamped to it.
    pub joint_actuator_force_ranges: Vec<(String, [f32; 2])>,
}

impl Robot {
    /// A robot with these joints and nothing else.
    ///
    /// ```
    /// let robot = sinew_core::Robot::from_joints(["hip", "knee"]);
    /// assert_eq!(robot.num_targets(), 2);
    /// ```
    pub fn from_joints<S: Into<String>>(joints: impl IntoIterator<Item = S>) -> Self {
        Robot {
            joints: joints.into_iter().map(Into::into).collect(),
            ..Robot::default()
        }
    }

    /// The names of one namespace, in definition order.
    pub fn names(&self, transmission: Transmission) -> &[String] {
        match transmission {
            Transmission::Joint => &self.joints,
            Transmission::Tendon => &self.tendons,
            Transmission::Site => &self.sites,
        }
    }

    /// Number of command columns: joints + tendons + sites.
    pub fn num_targets(&self) -> usize {
        self.joints.len() + self.tendons.len() + self.sites.len()
    }

    /// The command column of the `index`-th name of a namespace.
    pub fn column(&self, transmission: Transmission, index: usize) -> usize {
        match transmission {
            Transmission::Joint => index,
            Transmission::Tendon => self.joints.len() + index,
            Transmission::Site => self.joints.len() + self.tendons.len() + index,
        }
    }

    /// The index of a joint by name.
    pub fn joint_index(&self, name: &str) -> Option<usize> {
        self.joints.iter().position(|j| j == name)
    }

    /// Rejects a name listed twice in one namespace, and mechanics that
    /// name unknown joints or tendons or hold bad numbers.
    pub fn validate(&self) -> Result<(), Error> {
        let bad = |item: String, reason: &str| Error::InvalidMechanics {
            item,
            reason: reason.to_owned(),
        };
        let check_range = |item: String, [lo, hi]: [f32; 2]| {
            if lo.is_nan() || hi.is_nan() || lo > hi {
                Err(bad(
                    format!("{item} [{lo}, {hi}]"),
                    "a force range needs lo <= hi (±inf allowed)",
                ))
            } else {
                Ok(())
            }
        };
        for (t, tendon) in self.fixed_tendons.iter().enumerate() {
            let item = format!("fixed tendon `{}`", tendon.name);
            if !self.tendons.contains(&tendon.name) {
                return Err(bad(item, "is not one of the robot's tendons"));
            }
            if self.fixed_tendons[..t]
                .iter()
                .any(|o| o.name == tendon.name)
            {
                return Err(bad(item, "is defined twice"));
            }
            for (joint, coef) in &tendon.joints {
                if self.joint_index(joint).is_none() {
                    return Err(bad(
                        format!("{item} joint `{joint}`"),
                        "is not one of the robot's joints",
                    ));
                }
                if !coef.is_finite() {
                    return Err(bad(
                        format!("{item} joint `{joint}` coef {coef}"),
                        "must be finite",
                    ));
                }
            }
            if let Some(range) = tendon.actuator_force_range {
                check_range(format!("{item} actuator_force_range"), range)?;
            }
        }
        for (joint, range) in &self.joint_actuator_force_ranges {
            if self.joint_index(joint).is_none() {
                return Err(bad(
                    format!("actuator_force_range of joint `{joint}`"),
                    "is not one of the robot's joints",
                ));
            }
            check_range(format!("actuator_force_range of joint `{joint}`"), *range)?;
        }
        for transmission in Transmission::ALL {
            let mut seen = HashSet::with_capacity(self.names(transmission).len());
            if let Some(name) = self.names(transmission).iter().find(|n| !seen.insert(*n)) {
                return Err(Error::DuplicateTarget {
                    transmission,
                    name: name.clone(),
                });
            }
        }
        Ok(())
    }

    /// Resolves a group's regexes (full match) in one namespace and returns
    /// the indices of the matched names in definition order, whatever the
    /// order of the regexes (mjlab's `resolve_matching_names`).
    ///
    /// Errors: a regex that does not compile, a name matched by two regexes,
    /// a regex that matches nothing (with a hint when it matches in another
    /// namespace).
    pub fn resolve(
        &self,
        group: &str,
        regexes: &[String],
        transmission: Transmission,
    ) -> Result<Vec<usize>, Error> {
        self.resolve_in(&mut NameIndex::default(), group, regexes, transmission)
    }

    /// [`Robot::resolve`] with an index of the names kept across groups,
    /// so that literal targets cost one lookup each.
    pub(crate) fn resolve_in<'a>(
        &'a self,
        index: &mut NameIndex<'a>,
        group: &str,
        regexes: &[String],
        transmission: Transmission,
    ) -> Result<Vec<usize>, Error> {
        if regexes.is_empty() {
            return Err(Error::NoTargets {
                group: group.to_owned(),
            });
        }
        // One regex alive at a time: each gives the set of names it
        // matches, so hundreds of heavy regexes never sit in memory together.
        let names = self.names(transmission);
        // Name index -> the regex that matched it; work in matches, not names.
        let mut owner: HashMap<usize, usize> = HashMap::new();
        for (r, re) in regexes.iter().enumerate() {
            let matcher = TargetRegex::new(group, re)?;
            let mut hit = false;
            let mut claim = |index: usize| -> Result<(), Error> {
                hit = true;
                match owner.get(&index) {
                    Some(&f) => Err(Error::AmbiguousMatch {
                        group: group.to_owned(),
                        transmission,
                        name: names[index].clone(),
                        first: regexes[f].clone(),
                        second: re.clone(),
                    }),
                    None => {
                        owner.insert(index, r);
                        Ok(())
                    }
                }
            };
            match &matcher {
                TargetRegex::Literal(text) => {
                    if let Some(i) = index.get(names, transmission, text) {
                        claim(i)?;
                    }
                }
                TargetRegex::Regex(_) => {
                    for (i, name) in names.iter().enumerate() {
                        if matcher.is_match(name) {
                            claim(i)?;
                        }
                    }
                }
            }
            if !hit {
                let hint = Transmission::ALL
                    .into_iter()
                    .filter(|&other| other != transmission)
                    .filter_map(|other| {
                        let found: Vec<&str> = self
                            .names(other)
                            .iter()
                            .filter(|n| matcher.is_match(n))
                            .map(String::as_str)
                            .collect();
                        (!found.is_empty()).then(|| {
                            format!(
                                "; it matches {other}s [{}]: is the transmission right?",
                                found.join(", ")
                            )
                        })
                    })
                    .collect::<String>();
                return Err(Error::NoMatch {
                    group: group.to_owned(),
                    regex: re.clone(),
                    transmission,
                    available: names.join(", "),
                    hint,
                });
            }
        }
        let mut matched: Vec<usize> = owner.into_keys().collect();
        matched.sort_unstable();
        Ok(matched)
    }
}

/// Name → index maps of a robot's namespaces, built on first use.
#[derive(Debug, Default)]
pub(crate) struct NameIndex<'a> {
    maps: [Option<HashMap<&'a str, usize>>; 3],
}

impl<'a> NameIndex<'a> {
    /// The index of `name` among `names` (the namespace `transmission`).
    fn get(
        &mut self,
        names: &'a [String],
        transmission: Transmission,
        name: &str,
    ) -> Option<usize> {
        let map = self.maps[transmission as usize].get_or_insert_with(|| {
            let mut map = HashMap::with_capacity(names.len());
            for (i, n) in names.iter().enumerate() {
                map.entry(n.as_str()).or_insert(i);
            }
            map
        });
        map.get(name).copied()
    }
}

/// The most a target regex may compile to (bytes). Joint and tendon name
/// patterns are tiny; the cap keeps a hostile file from costing gigabytes.
pub(crate) const TARGET_REGEX_SIZE_LIMIT: usize = 1 << 20;

/// One target regex, matched against a whole name.
#[derive(Debug, Clone)]
pub(crate) enum TargetRegex {
    /// A regex without metacharacters: the name itself.
    Literal(String),
    /// Any other regex, anchored at both ends.
    Regex(Regex),
}

impl TargetRegex {
    /// Compiles `re` as written by the user for `group`. The text is parsed
    /// on its own before it is anchored, so that `a)|(?:.*` is the syntax
    /// error it is rather than a pattern that matches everything.
    pub fn new(group: &str, re: &str) -> Result<TargetRegex, Error> {
        let invalid = |message: String| Error::InvalidRegex {
            group: group.to_owned(),
            regex: re.to_owned(),
            message,
        };
        if !re.chars().any(regex_syntax::is_meta_character) {
            return Ok(TargetRegex::Literal(re.to_owned()));
        }
        regex_syntax::ast::parse::Parser::new()
            .parse(re)
            .map_err(|e| invalid(e.to_string()))?;
        regex::RegexBuilder::new(&format!("^(?:{re})$"))
            .size_limit(TARGET_REGEX_SIZE_LIMIT)
            .dfa_size_limit(TARGET_REGEX_SIZE_LIMIT)
            .build()
            .map(TargetRegex::Regex)
            .map_err(|e| invalid(e.to_string()))
    }

    /// Whether the regex matches all of `name`.
    pub fn is_match(&self, name: &str) -> bool {
        match self {
            TargetRegex::Literal(text) => text == name,
            TargetRegex::Regex(re) => re.is_match(name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn robot() -> Robot {
        Robot {
            joints: vec!["FL_hip".into(), "FL_thigh".into(), "FR_hip".into()],
            tendons: vec!["t_sum".into()],
            ..Robot::default()
        }
    }

    #[test]
    fn resolution_follows_definition_order_and_full_match() {
        let r = robot();
        let ids = r
            .resolve("g", &["FR_.*".into(), "FL_hip".into()], Transmission::Joint)
            .unwrap();
        assert_eq!(ids, vec![0, 2]);
        // `FL` alone is not a full match of any name.
        assert!(matches!(
            r.resolve("g", &["FL".into()], Transmission::Joint),
            Err(Error::NoMatch { .. })
        ));
    }

    #[test]
    fn no_match_hints_at_other_namespace() {
        let err = robot()
            .resolve("g", &["t_.*".into()], Transmission::Joint)
            .unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("`t_.*`") && msg.contains("tendons [t_sum]"),
            "{msg}"
        );
    }

    #[test]
    fn ambiguous_and_invalid() {
        let err = robot()
            .resolve(
                "legs",
                &["FL_.*".into(), ".*hip".into()],
                Transmission::Joint,
            )
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "group `legs`: joint `FL_hip` is matched by two of its regexes, `FL_.*` and `.*hip`"
        );
        let err = robot()
            .resolve("legs", &["(".into()], Transmission::Joint)
            .unwrap_err();
        assert!(matches!(err, Error::InvalidRegex { ref regex, .. } if regex == "("));
    }

    #[test]
    fn a_regex_that_does_not_parse_alone_is_an_error_even_when_anchored() {
        // `^(?:a)|(?:.*)$` would compile and match every joint.
        for re in ["FL_hip)|(?:.*", "FL_hip)|(FR_hip", "FL)|(?:FL"] {
            let err = robot()
                .resolve("g", &[re.into()], Transmission::Joint)
                .unwrap_err();
            assert!(matches!(err, Error::InvalidRegex { .. }), "{re}: {err}");
        }
    }

    #[test]
    fn literals_and_regexes_resolve_alike_and_heavy_regexes_are_capped() {
        let r = robot();
        let ids = r
            .resolve(
                "g",
                &["FR_hip".into(), "FL_(hip)".into()],
                Transmission::Joint,
            )
            .unwrap();
        assert_eq!(ids, vec![0, 2]);
        let err = r
            .resolve(
                "g",
                &["FL_hip".into(), "FL_h.p".into()],
                Transmission::Joint,
            )
            .unwrap_err();
        assert!(matches!(err, Error::AmbiguousMatch { .. }), "{err}");
        // 120 Unicode word characters compile past the 1 MiB cap.
        let err = r
            .resolve("g", &[r"(?:\w{120}|hip)".into()], Transmission::Joint)
            .unwrap_err();
        assert!(matches!(err, Error::InvalidRegex { .. }), "{err}");
    }

    #[test]
    fn duplicate_names_are_found_among_many() {
        let mut r = Robot {
            joints: (0..60_000).map(|i| format!("j{i}")).collect(),
            ..Robot::default()
        };
        r.validate().unwrap();
        r.joints.push("j59999".into());
        assert!(matches!(r.validate(), Err(Error::DuplicateTarget { .. })));
    }
}
