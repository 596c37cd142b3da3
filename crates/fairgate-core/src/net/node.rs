//! Nodes: hosts (where agents live), routers (which forward) and gateways (routers that split
//! the TCP connections crossing them, see [`crate::gateway`]).

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum NodeKind {
    #[default]
    Host,
    Router,
    Gateway,
}

pub struct Node {
    pub name: String,
    pub kind: NodeKind,
    /// Output ports, in the order the links were declared.
    pub ports: Vec<u32>,
}
