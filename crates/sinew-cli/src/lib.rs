//! The `sinew` command as a library: scenario files ([`scenario`]), their
//! command sources ([`command`]), runs that write `.npy` ([`run`]), the
//! benchmark suite ([`mod@bench`]) and the shipped robot presets ([`presets`]).
//!
//! ```
//! use sinew_cli::{presets, run};
//!
//! let g1 = presets::preset("g1").expect("a shipped preset")?;
//! assert_eq!(g1.robot.joints.len(), 29);
//! let summary = run::run(&g1, run::BackendChoice::Cpu, Some(8), Some(3), None, false)?;
//! assert_eq!((summary.num_ctrl, summary.nonfinite_envs), (29, 0));
//! # Ok::<(), sinew_cli::CliError>(())
//! ```

pub mod bench;
pub mod cmaes;
pub mod command;
pub mod fit;
pub mod npy;
pub mod presets;
pub mod run;
pub mod scenario;
pub mod servo;
pub mod svg;
pub mod verify;

use std::path::PathBuf;

pub use scenario::Scenario;

/// Everything the command can report.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// A scenario file is wrong: where, and what.
    #[error("{origin}{}: {message}", line.map(|l| format!(":{l}")).unwrap_or_default())]
    Scenario {
        /// The file (or preset).
        origin: String,
        /// 1-based line, when known.
        line: Option<usize>,
        /// What is wrong, naming the field.
        message: String,
    },
    /// A file could not be read or written.
    #[error("{}: {message}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        message: String,
    },
    /// An `.npy` file is not what the scenario needs.
    #[error("{}: {message}", path.display())]
    Npy {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A library error while running.
    #[error(transparent)]
    Sinew(#[from] sinew::Error),
    /// A command-line argument is wrong.
    #[error("{0}")]
    Usage(String),
}
