//! Configuration primitives every algorithm's config uses: units (`"10Mb/s"`, `"20ms"`),
//! distributions, tagged (`kind = "..."`) deserialisation, and [`ScenarioError`] with the
//! `check` helpers that name the offending field path. The scenario schema built from them is
//! in [`crate::scenario`].

pub mod cgroup_memory;
pub mod dist;
pub mod error;
pub mod host_memory;
pub mod memory_limit;
pub mod strict;
pub mod tagged;
pub mod units;

pub use error::{check, ScenarioError};
