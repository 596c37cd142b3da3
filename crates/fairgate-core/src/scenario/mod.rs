//! The scenario schema (serde, the single source of truth), its validation, and building a
//! simulation from it.

pub mod atm;
pub mod budget;
pub mod build;
pub mod in_flight;
pub mod load;
pub mod phases;
pub mod pools;
pub mod schema;
pub mod timers;
pub mod topology;
pub mod validate;

// The configuration primitives moved to the ground layer; these names keep working.
pub use crate::config::{check, dist, error, tagged, units, ScenarioError};
pub use build::build;
pub use load::{parse, parse_document, parse_for_build, parse_plain_document};
pub use schema::Scenario;
