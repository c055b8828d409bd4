//! The robot presets shipped with Sinew (`presets/*.toml` at the repository
//! root), embedded so that `sinew run g1` works from anywhere.

use crate::scenario::Scenario;
use crate::CliError;

/// `(name, aliases, file name, text)` of every preset.
pub const PRESETS: [(&str, &[&str], &str, &str); 4] = [
    (
        "unitree_g1",
        &["g1", "humanoid"],
        "unitree_g1.toml",
        include_str!("../../../presets/unitree_g1.toml"),
    ),
    (
        "unitree_go1",
        &["go1", "quadruped"],
        "unitree_go1.toml",
        include_str!("../../../presets/unitree_go1.toml"),
    ),
    (
        "so_arm100",
        &["so100", "servo", "arm"],
        "so_arm100.toml",
        include_str!("../../../presets/so_arm100.toml"),
    ),
    (
        "mimo",
        &["infant", "muscle"],
        "mimo.toml",
        include_str!("../../../presets/mimo.toml"),
    ),
];

/// The preset named `name` (or one of its aliases), parsed.
pub fn preset(name: &str) -> Option<Result<Scenario, CliError>> {
    PRESETS
        .iter()
        .find(|(n, aliases, _, _)| *n == name || aliases.contains(&name))
        .map(|(n, _, file, text)| {
            Scenario::parse(text, &format!("preset {n} (presets/{file})")).map(|mut s| {
                if s.name.is_empty() {
                    s.name = (*n).to_owned();
                }
                s
            })
        })
}

/// Every preset name with its aliases, for messages.
pub fn names() -> String {
    PRESETS
        .iter()
        .map(|(n, aliases, _, _)| format!("{n} ({})", aliases.join(", ")))
        .collect::<Vec<_>>()
        .join(", ")
}
