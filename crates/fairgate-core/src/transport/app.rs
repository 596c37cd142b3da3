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
use crate::config::error::{check, deserialize_nested, join, ScenarioError};
use crate::engine::Time;
use serde::{Deserialize, Serialize};

/// What the application above the transport does (`app = { kind = "..." }`). Read by its
/// `kind` like every tagged table, so an error inside names its field (`app.size`) and a field
/// of another kind (`{ kind = "bulk", size = 1 }`) is refused, not ignored.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AppSpec {
    /// An infinite FTP-like source.
    #[default]
    Bulk,
    /// One transfer of `size` bytes starting at the flow's start.
    File(FileApp),
    /// No transfers of its own: a workload owning the sender submits them
    /// ([`TcpSender::submit`](super::tcp::sender::TcpSender::submit)).
    Manual,
    /// `count` transfers of `size` bytes, each `gap` after the previous one completed.
    Requests(RequestsApp),
}

/// `app = { kind = "file", size = .. }`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FileApp {
    pub size: u64,
}

/// `app = { kind = "requests", count = .., size = .., gap = .. }`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RequestsApp {
    pub count: u64,
    pub size: SizeDist,
    #[serde(default)]
    pub gap: Option<DurationDist>,
}

/// `bulk` and `manual` take no field besides `kind`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NoFields {}

impl<'de> Deserialize<'de> for AppSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        const KINDS: &[&str] = &["bulk", "file", "manual", "requests"];
        let value = toml::Value::deserialize(d)?;
        let (kind, rest) = crate::config::tagged::split_kind::<D::Error>(value, KINDS)?;
        Ok(match kind.as_str() {
            "file" => AppSpec::File(deserialize_nested(rest)?),
            "requests" => AppSpec::Requests(deserialize_nested(rest)?),
            unit => {
                deserialize_nested::<NoFields, D::Error>(rest)?;
                if unit == "bulk" {
                    AppSpec::Bulk
                } else {
                    AppSpec::Manual
                }
            }
        })
    }
}

impl AppSpec {
    pub fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        match self {
            AppSpec::Bulk | AppSpec::Manual => Ok(()),
            AppSpec::File(FileApp { size }) => check::positive_int(path, "size", *size),
            AppSpec::Requests(RequestsApp { count, size, gap }) => {
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

    fn app(text: &str) -> Result<AppSpec, String> {
        let table: toml::Table = format!("app = {{ {text} }}").parse().unwrap();
        let value = crate::config::strict::Strict(table["app"].clone());
        AppSpec::deserialize(value).map_err(|e| e.message().to_string())
    }

    #[test]
    fn an_apps_errors_name_their_field_and_a_field_of_another_kind_is_refused() {
        let requests = app("kind = \"requests\", count = 2, size = 100, gap = 0.5").unwrap();
        assert!(matches!(
            requests,
            AppSpec::Requests(RequestsApp { count: 2, .. })
        ));
        assert_eq!(app("kind = \"bulk\"").unwrap(), AppSpec::Bulk);
        let (path, _) =
            crate::config::error::split_marked(&app("kind = \"file\", size = -1").unwrap_err());
        assert_eq!(path, "size");
        let (path, _) =
            crate::config::error::split_marked(&app("kind = \"bulk\", size = 5").unwrap_err());
        assert_eq!(path, "size", "bulk ignored a size before");
    }
}
