//! Sinew's one integration-test binary: golden episodes from real systems,
//! CPU–GPU parity, the kernels' float helpers, shader checks, the command line, property tests, error
//! messages and step semantics.

mod bam;
mod cli;
mod errors;
mod fit;
mod golden;
mod gpu_math;
mod learned;
mod mimo;
mod mujoco;
mod mujoco4;
mod parity;
mod properties;
mod reliability;
mod semantics;
mod shaders;
mod soak;
mod support;
