//! The transfers table: one row per object (or page, or transfer) a workload fetched, with the
//! times a user of the network would see and the losses its connection suffered.

use crate::engine::Time;

/// One finished transfer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TransferRecord {
    /// The workload's data flow (its class: the flow's name and kind).
    pub flow: u32,
    /// Connection id, unique within the flow.
    pub conn: u32,
    /// Session (web) or user slot (HTTP) the transfer belongs to.
    pub session: u32,
    pub page: u64,
    pub client: u32,
    pub server: u32,
    pub bytes: u64,
    /// When the client asked for it.
    pub requested: Time,
    /// When its first response byte reached the client, and its last.
    pub first_byte: Option<Time>,
    pub last_byte: Option<Time>,
    /// When the server received the cumulative ACK of its last byte.
    pub completed: Option<Time>,
    pub retransmits: u64,
    pub timeouts: u64,
    /// A connection of the object gave up after its retries (the user moved on without it).
    pub aborted: bool,
}

/// Finished transfers, in completion order.
#[derive(Clone, Debug, Default)]
pub struct TransferTable {
    pub rows: Vec<TransferRecord>,
}

impl TransferTable {
    pub fn push(&mut self, row: TransferRecord) {
        self.rows.push(row);
    }

    pub fn append(&mut self, other: &mut TransferTable) {
        self.rows.append(&mut other.rows);
    }
}
