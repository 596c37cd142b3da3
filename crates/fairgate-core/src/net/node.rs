//! Nodes: hosts (where agents live) and routers (which forward).

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum NodeKind {
    #[default]
    Host,
    Router,
}

pub struct Node {
    pub name: String,
    pub kind: NodeKind,
    /// Output ports, in the order the links were declared.
    pub ports: Vec<u32>,
}
