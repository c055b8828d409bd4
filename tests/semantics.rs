//! semantics
