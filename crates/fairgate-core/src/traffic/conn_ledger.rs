//! Byte conservation per connection of a request/response workload (web, http): each of an
//! object's two TCP connections (request, response) must account for its bytes.
//!
//! - Closed (retired after its response was received whole and both connections were
//!   acknowledged): handed to TCP = acknowledged = delivered in order to the receiver.
//! - Open (still running at the end of the run, or aborted after `max_retries`): acknowledged
//!   <= sent and delivered in order <= sent; an aborted or cut connection is not a violation.
//!   Acknowledged <= delivered is not required: a split-connection gateway on the path
//!   acknowledges bytes the receiver has not yet got (the gateway checks those bytes itself).
//!
//! The receiver's `rcv_nxt` counts the bytes it delivered in order, each once (duplicates and
//! overlaps do not advance it). A broken law is kept as a sentence naming the flow, the
//! connection and the direction; the first `KEPT` are kept whole, the rest only counted,
//! so a systematic fault cannot grow memory with the number of connections.

use crate::transport::tcp::receiver::TcpReceiver;
use crate::transport::tcp::sender::TcpSender;

/// Sentences kept in full; further violations are counted.
const KEPT: usize = 8;

/// The byte counts of one direction of an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LegBytes {
    /// Bytes the application handed to TCP.
    pub handed: u64,
    /// Highest byte sent (`snd_max`).
    pub sent: u64,
    /// Cumulatively acknowledged (`snd_una`).
    pub acked: u64,
    /// Delivered in order to the receiving application (`rcv_nxt`).
    pub delivered: u64,
}

impl LegBytes {
    /// The counts of `tx` (None: the response sender was never created) and `rx`.
    pub fn of(tx: Option<&TcpSender>, rx: &TcpReceiver) -> Self {
        let (handed, sent, acked) = tx.map_or((0, 0, 0), |tx| {
            let s = tx.state();
            (s.app_end, s.snd_max, s.snd_una)
        });
        LegBytes {
            handed,
            sent,
            acked,
            delivered: rx.rcv_nxt(),
        }
    }

    /// The law of a closed connection: everything handed was acknowledged and delivered.
    pub fn closed_ok(&self) -> bool {
        self.handed == self.acked && self.acked == self.delivered
    }

    /// The law of an open connection: acknowledged <= sent and delivered <= sent.
    pub fn open_ok(&self) -> bool {
        self.acked <= self.sent && self.delivered <= self.sent
    }
}

/// The violations found in one flow's connections.
#[derive(Debug, Default)]
pub struct ConnLedger {
    kept: Vec<String>,
    more: u64,
}

impl ConnLedger {
    /// Checks the request and the response of connection `conn` of `flow`; `closed` selects
    /// the law (closed: accounting must close; open or aborted: the inequalities).
    pub fn check(&mut self, flow: u32, conn: u32, legs: [(&str, LegBytes); 2], closed: bool) {
        for (direction, bytes) in legs {
            if let Some(sentence) = violation(flow, conn, direction, &bytes, closed) {
                self.keep(sentence);
            }
        }
    }

    fn keep(&mut self, sentence: String) {
        if self.kept.len() < KEPT {
            self.kept.push(sentence);
        } else {
            self.more += 1;
        }
    }

    /// The sentences, plus one counting those not kept.
    pub fn sentences(&self) -> Vec<String> {
        let mut out = self.kept.clone();
        if self.more > 0 {
            out.push(format!(
                "... and {} more connection byte-accounting violations",
                self.more
            ));
        }
        out
    }
}

/// The sentence for a broken law, if one is broken.
pub fn violation(
    flow: u32,
    conn: u32,
    direction: &str,
    b: &LegBytes,
    closed: bool,
) -> Option<String> {
    let (ok, law) = if closed {
        (b.closed_ok(), "closed: handed = acknowledged = delivered")
    } else {
        (b.open_ok(), "open: acknowledged <= sent, delivered <= sent")
    };
    (!ok).then(|| {
        format!(
            "flow {flow}, connection {conn}, {direction}: handed to TCP {} B, sent {} B, acknowledged {} B, delivered in order {} B ({law})",
            b.handed, b.sent, b.acked, b.delivered
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(handed: u64, sent: u64, acked: u64, delivered: u64) -> LegBytes {
        LegBytes {
            handed,
            sent,
            acked,
            delivered,
        }
    }

    #[test]
    fn closed_law_needs_every_handed_byte_acknowledged_and_delivered_once() {
        assert!(bytes(5000, 5000, 5000, 5000).closed_ok());
        assert!(!bytes(5000, 5000, 5000, 6000).closed_ok());
        assert!(!bytes(5000, 5000, 4000, 4000).closed_ok());
    }

    #[test]
    fn open_law_bounds_acknowledged_and_delivered_by_sent() {
        assert!(bytes(9000, 4000, 2000, 3000).open_ok());
        // A split-connection gateway acknowledged bytes the receiver does not hold yet.
        assert!(bytes(9000, 4000, 3000, 2000).open_ok());
        assert!(!bytes(9000, 4000, 2000, 5000).open_ok());
        assert!(!bytes(9000, 4000, 5000, 2000).open_ok());
    }

    #[test]
    fn sentence_names_flow_connection_and_direction() {
        let s = violation(3, 17, "response", &bytes(10, 10, 10, 11), true).expect("broken");
        assert!(s.starts_with("flow 3, connection 17, response:"), "{s}");
        assert!(violation(3, 17, "response", &bytes(10, 10, 10, 10), true).is_none());
    }

    #[test]
    fn only_the_first_sentences_are_kept_the_rest_counted() {
        let mut ledger = ConnLedger::default();
        let bad = bytes(1, 1, 1, 2);
        for conn in 0..20 {
            ledger.check(0, conn, [("request", bad), ("response", bad)], true);
        }
        let out = ledger.sentences();
        assert_eq!(out.len(), KEPT + 1);
        assert!(out[KEPT].contains("32 more"), "{}", out[KEPT]);
    }
}
