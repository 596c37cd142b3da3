//! Studies that map a cost or performance surface rather than run one scenario: Keshav's
//! buffer data structures for fair queueing [Keshav91, ch. 3] and Vaidyanathan's per-packet
//! cost model of fair-queueing overhead [Vaidyanathan99, §2.3-2.6]. `fairgate study` runs
//! them from Python.

pub mod cost_model;
pub mod keshav_buffers;
pub mod trace_gateway;

use crate::config::ScenarioError;
use std::fmt;

/// Why a study gave no results.
#[derive(Debug, Clone, PartialEq)]
pub enum StudyError {
    /// A value of its input: a parameter, a field of the scenario it runs, the trace.
    Input(ScenarioError),
    /// Its run stopped early or broke conservation, so its numbers would not be valid.
    Run(String),
    /// The caller's `interrupted` check answered yes (Ctrl-C, in the bindings).
    Interrupted,
}

impl From<ScenarioError> for StudyError {
    fn from(e: ScenarioError) -> Self {
        StudyError::Input(e)
    }
}

impl fmt::Display for StudyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StudyError::Input(e) => write!(f, "{e}"),
            StudyError::Run(why) => write!(f, "{why}"),
            StudyError::Interrupted => write!(f, "interrupted"),
        }
    }
}

impl std::error::Error for StudyError {}

/// An `interrupted` check for callers that never stop a study.
pub fn never_interrupted() -> bool {
    false
}
