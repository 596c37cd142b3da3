//! Applications on top of a reliable transport: bulk (FTP), one finite file, and a sequence of
//! request/response transfers; plus the transfer record a later HTTP or web workload reads.
//!
//! Sources: [Keshav91, §6.2] (FTP: an infinite source); [Chung06, §4.1] and [Byun07, §2.13]
//! (finite web transfers whose completion times are measured).
//!
//! Decisions where the sources are silent:
//! - A transfer is complete when the sender receives the cumulative ACK of its last byte
//!   (the sender is where completion is known without extra signalling).
//! - In `requests`, the next transfer is submitted `gap` after the previous one completed.

use crate::config::dist::{DurationDist, SizeDist};
use crate::config::error::{check, join, ScenarioError};
use crate::engine::Time;
use serde::{Deserialize, Serialize};

/// What the application above the transport does (`app = { kind = "..." }`).
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum AppSpec {
    /// An infinite FTP-like source.
    #[default]
    Bulk,
    /// One transfer of `size` bytes starting at the flow's start.
    File { size: u64 },
    /// No transfers of its own: a workload owning the sender submits them
    /// ([`TcpSender::submit`](super::tcp::sender::TcpSender::submit)).
    Manual,
    /// `count` transfers of `size` bytes, each `gap` after the previous one completed.
    Requests {
        count: u64,
        size: SizeDist,
        #[serde(default)]
        gap: Option<DurationDist>,
    },
}

impl AppSpec {
    pub fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        match self {
            AppSpec::Bulk | AppSpec::Manual => Ok(()),
            AppSpec::File { size } => check::positive_int(path, "size", *size),
            AppSpec::Requests { count, size, gap } => {
                check::positive_int(path, "count", *count)?;
                size.validate(&join(path, "size"))?;
                match gap {
                    Some(g) => g.0.validate(&join(path, "gap")),
                    None => Ok(()),
                }
            }
        }
    }
}

/// One application transfer: bytes `[start, end)` of the connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transfer {
    pub start: u64,
    pub end: u64,
    pub submitted: Time,
    pub completed: Option<Time>,
}

impl Transfer {
    pub fn bytes(&self) -> u64 {
        self.end - self.start
    }
}

/// The transfers of one connection, in submission order.
#[derive(Clone, Debug, Default)]
pub struct TransferLog {
    transfers: Vec<Transfer>,
    first_open: usize,
}

impl TransferLog {
    /// Records a transfer of `bytes` after `app_end`; returns its id.
    pub fn submit(&mut self, app_end: u64, bytes: u64, now: Time) -> usize {
        self.transfers.push(Transfer {
            start: app_end,
            end: app_end + bytes,
            submitted: now,
            completed: None,
        });
        self.transfers.len() - 1
    }

    /// Marks every transfer whose last byte is acknowledged; returns how many completed now.
    pub fn acknowledge(&mut self, snd_una: u64, now: Time) -> usize {
        let before = self.first_open;
        while let Some(t) = self.transfers.get_mut(self.first_open) {
            if t.end > snd_una {
                break;
            }
            t.completed = Some(now);
            self.first_open += 1;
        }
        self.first_open - before
    }

    pub fn all(&self) -> &[Transfer] {
        &self.transfers
    }

    pub fn open(&self) -> usize {
        self.transfers.len() - self.first_open
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transfers_complete_in_order_when_acknowledged() {
        let mut log = TransferLog::default();
        assert_eq!(log.submit(0, 3000, 5), 0);
        assert_eq!(log.submit(3000, 1000, 6), 1);
        assert_eq!(log.acknowledge(2999, 10), 0);
        assert_eq!(log.acknowledge(4000, 20), 2);
        assert_eq!(log.all()[0].completed, Some(20));
        assert_eq!(log.all()[1].bytes(), 1000);
        assert_eq!(log.open(), 0);
    }
}
