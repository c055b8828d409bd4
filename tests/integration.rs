//! Sinew's one integration-test binary: golden episodes from real systems,
//! property tests, error messages and step semantics.

mod errors;
mod golden_mjlab;
mod parity;
mod properties;
mod semantics;
mod shaders;
mod support;
