//! The scenario schema (serde, the single source of truth), its validation, and building a
//! simulation from it.

pub mod budget;
pub mod build;
pub mod dist;
pub mod error;
pub mod load;
pub mod schema;
pub mod tagged;
pub mod topology;
pub mod units;
pub mod validate;

pub use build::build;
pub use error::{check, ScenarioError};
pub use load::{parse, parse_json};
pub use schema::Scenario;
