//! The WGSL sources, from the repository's top-level `shaders/`. This is the
//! only place shader text enters the crate.

/// Every WGSL file as `(name, text)`, in the order the module concatenates
/// them: a file may use what the files before it define.
pub const FILES: [(&str, &str); 8] = [
    ("common.wgsl", include_str!("../../../shaders/common.wgsl")),
    ("delay.wgsl", include_str!("../../../shaders/delay.wgsl")),
    (
        "ideal_pd.wgsl",
        include_str!("../../../shaders/ideal_pd.wgsl"),
    ),
    (
        "dc_motor.wgsl",
        include_str!("../../../shaders/dc_motor.wgsl"),
    ),
    (
        "builtin.wgsl",
        include_str!("../../../shaders/builtin.wgsl"),
    ),
    ("mujoco.wgsl", include_str!("../../../shaders/mujoco.wgsl")),
    ("net.wgsl", include_str!("../../../shaders/net.wgsl")),
    ("step.wgsl", include_str!("../../../shaders/step.wgsl")),
];

/// The WGSL of the first `n` files of [`FILES`], concatenated.
pub fn source_of_first(n: usize) -> String {
    FILES[..n]
        .iter()
        .map(|(name, text)| format!("// ---- {name}\n{text}\n"))
        .collect()
}

/// The whole step module (all of [`FILES`]).
pub fn module_source() -> String {
    source_of_first(FILES.len())
}
