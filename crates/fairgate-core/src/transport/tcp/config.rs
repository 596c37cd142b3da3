//! TCP's configuration: `source = { kind = "tcp", cc = "tahoe" | "reno" | "newreno" | "sack",
//! ... }`, its published defaults and validation. The sender is in [`super::sender`], the
//! receiver in [`super::receiver`]; the decisions are listed in [`super::sender`].

use super::receiver::{ReceiverParams, Reply, TcpReceiver};
use super::rto::RtoParams;
use super::sender::TcpSender;
use super::tcp_options::option_bytes;
use super::variant::Variant;
use super::{newreno::NewReno, reno::Reno, sack::Sack, tahoe::Tahoe};
use crate::config::error::{check, join, ScenarioError};
use crate::config::units::{Duration, Rate};
use crate::traffic::{AgentPair, SourceConfig, SourceEnv};
use crate::transport::app::AppSpec;
use serde::{Deserialize, Serialize};

/// The largest initial window and ABC limit, in segments: windows are kept in bytes (segments
/// x `mss`, at most 2^20), and 2^31 segments keep them, grown by any number of ACKs, far below
/// 2^64 (10^18 segments overflowed the product).
pub const MAX_WINDOW_SEGMENTS: u64 = 1 << 31;

/// The congestion-control variant.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CcKind {
    Tahoe,
    Reno,
    #[default]
    Newreno,
    Sack,
}

impl CcKind {
    pub(super) fn build(self, cfg: &TcpConfig) -> Variant {
        match self {
            CcKind::Tahoe => Variant::Tahoe(Tahoe),
            CcKind::Reno => Variant::Reno(Reno::default()),
            CcKind::Newreno => Variant::NewReno(NewReno::default()),
            CcKind::Sack => Variant::Sack(Box::new(Sack::new(
                cfg.rescue_retransmit(),
                cfg.keep_sack_on_rto(),
            ))),
        }
    }
}

/// The data RTO after a retransmitted SYN, until the first RTT sample (RFC 6298 §5.7).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LostSynRto {
    /// ns-3: the timeout of the last SYN sent (`syn_rto` doubled per retry) carries over.
    #[default]
    Ns3,
    /// RFC 6298 §5.7: re-initialised to 3 s when the initial RTO is below 3 s.
    Rfc6298,
    /// `initial_rto` with the SYN's backoff (fairgate before this option).
    Backoff,
}

/// How far an ECN-Echo can cut the window (RFC 3168 §6.1.2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EcnFloor {
    /// cwnd = ssthresh = max(cwnd / 2, 2 MSS), as ns-3 and Linux.
    #[default]
    TwoSegments,
    /// cwnd = max(cwnd / 2, 1 MSS); an ECE when cwnd is already 1 MSS restarts the
    /// retransmit timer and nothing new is sent before it expires.
    OneSegment,
}

/// `kind = "tcp"`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct TcpConfig {
    pub cc: CcKind,
    pub app: AppSpec,
    /// Payload bytes per segment.
    pub mss: u64,
    /// TCP/IP header bytes added to every segment; also the size of ACKs, SYNs and FINs.
    pub header: u32,
    /// Initial congestion window in segments.
    pub initial_window: u64,
    /// Receive buffer in bytes (the advertised window).
    pub rwnd: u64,
    /// RFC 7323 shift; the advertised window can reach 65535 << window_scale.
    pub window_scale: u8,
    /// Delayed ACKs (RFC 1122, RFC 5681 §4.2): one ACK per `ack_every` full segments or after
    /// `delack_timeout`; on, 2 and 200 ms by default as ns-3's `DelAckCount` and `DelAckTimeout`.
    pub delayed_ack: bool,
    /// None: not given, 2 ([`TcpConfig::ack_every`]); given beside `delayed_ack = false`, refused.
    pub ack_every: Option<u32>,
    /// None: not given, 200 ms; given beside `delayed_ack = false`, refused.
    pub delack_timeout: Option<Duration>,
    pub initial_rto: Duration,
    pub min_rto: Duration,
    pub max_rto: Duration,
    /// Timer granularity G of RFC 6298 (the RTO is a whole number of ticks); 1 ms as ns-3's
    /// `TcpSocketBase::ClockGranularity`.
    pub granularity: Duration,
    pub dupthresh: u32,
    /// Appropriate Byte Counting limit L in segments (RFC 3465); 1 = RFC 5681.
    pub abc_limit: u64,
    /// None: not given, 3; given beside a `cc` other than `sack`, refused.
    pub max_sack_blocks: Option<u32>,
    pub ecn: bool,
    /// Cap on the connection's sending rate (wire bytes).
    pub rate_cap: Option<Rate>,
    /// SYN / SYN-ACK before data and FIN / FIN-ACK after the last transfer.
    pub handshake: bool,
    /// Limited Transmit (RFC 3042): one new segment on each of the first dupthresh - 1
    /// duplicate ACKs. On by default, as in ns-3 and Linux.
    pub limited_transmit: bool,
    /// The timestamps option (RFC 7323): 12 option bytes on every segment and an RTT sample
    /// from every ACK of new data. On by default, as ns-3's `TcpSocketBase::Timestamp`.
    pub timestamps: bool,
    /// First retransmission timeout of the SYN (ns-3 `ConnTimeout` 3 s; RFC 6298 says 1 s).
    pub syn_rto: Duration,
    /// The connection aborts when the timer expires after this many retransmissions of one
    /// segment (SYN, data or FIN); ns-3 `DataRetries` and `ConnCount` are both 6.
    pub max_retries: u32,
    /// RFC 6675 NextSeg rule 4 (one rescue retransmission per recovery) for `cc = "sack"`.
    /// Off by default: ns-3's `TcpTxBuffer::NextSeg` leaves the SHOULD out.
    pub rescue_retransmit: Option<bool>,
    /// Keep the SACK scoreboard across a retransmission timeout (`cc = "sack"`): ns-3 keeps it
    /// (RFC 6675 §5.1 and its erratum 1610); false clears it as RFC 2018 §8 advises.
    pub keep_sack_on_rto: Option<bool>,
    /// Send buffer in bytes for data handed over and not yet sent (the `push` API); none =
    /// unlimited.
    pub send_buffer: Option<u64>,
    /// The data RTO after a retransmitted SYN (RFC 6298 §5.7); default as ns-3.
    pub lost_syn_rto: LostSynRto,
    /// The ECN response's floor (RFC 3168 §6.1.2); default as ns-3. Given beside `ecn = false`,
    /// refused.
    pub ecn_floor: Option<EcnFloor>,
}

impl Default for TcpConfig {
    /// docs/models/tcp.md gives each default with its source.
    fn default() -> Self {
        TcpConfig {
            cc: CcKind::Newreno,
            app: AppSpec::default(),
            mss: 1000,
            header: 40,
            initial_window: 1,
            rwnd: 65_535,
            window_scale: 0,
            delayed_ack: true,
            ack_every: None,
            delack_timeout: None,
            initial_rto: Duration::from_secs(1.0),
            min_rto: Duration::from_secs(1.0),
            max_rto: Duration::from_secs(60.0),
            granularity: Duration::from_secs(0.001),
            dupthresh: 3,
            abc_limit: 1,
            max_sack_blocks: None,
            ecn: false,
            rate_cap: None,
            handshake: false,
            limited_transmit: true,
            timestamps: true,
            syn_rto: Duration::from_secs(3.0),
            max_retries: 6,
            rescue_retransmit: None,
            keep_sack_on_rto: None,
            send_buffer: None,
            lost_syn_rto: LostSynRto::Ns3,
            ecn_floor: None,
        }
    }
}

impl TcpConfig {
    /// Full segments per delayed ACK: 2, as ns-3's `DelAckCount`.
    pub fn ack_every(&self) -> u32 {
        self.ack_every.unwrap_or(2)
    }

    /// The delayed-ACK timer: 200 ms, as ns-3's `DelAckTimeout`.
    pub fn delack_timeout(&self) -> Duration {
        self.delack_timeout.unwrap_or(Duration::from_secs(0.2))
    }

    /// SACK blocks an ACK carries at most: 3.
    pub fn max_sack_blocks(&self) -> u32 {
        self.max_sack_blocks.unwrap_or(3)
    }

    /// RFC 6675 NextSeg rule 4: off, as ns-3.
    pub fn rescue_retransmit(&self) -> bool {
        self.rescue_retransmit.unwrap_or(false)
    }

    /// The SACK scoreboard kept across a timeout: yes, as ns-3.
    pub fn keep_sack_on_rto(&self) -> bool {
        self.keep_sack_on_rto.unwrap_or(true)
    }

    /// The ECN response's floor: two segments, as ns-3 and Linux.
    pub fn ecn_floor(&self) -> EcnFloor {
        self.ecn_floor.unwrap_or(EcnFloor::TwoSegments)
    }

    /// The first sender key that differs from its default: a table only a receiver reads (a
    /// gateway's `lhs`) reads none of them. `app` and the receiver's keys (`header`, `rwnd`,
    /// `window_scale`, `cc` for SACK blocks, `max_sack_blocks`, the delayed-ACK keys,
    /// `timestamps`, `mss`) are not listed.
    pub fn sender_key_set(&self) -> Option<&'static str> {
        let default = TcpConfig::default();
        let set = [
            (
                "initial_window",
                self.initial_window != default.initial_window,
            ),
            ("initial_rto", self.initial_rto != default.initial_rto),
            ("min_rto", self.min_rto != default.min_rto),
            ("max_rto", self.max_rto != default.max_rto),
            ("granularity", self.granularity != default.granularity),
            ("dupthresh", self.dupthresh != default.dupthresh),
            ("abc_limit", self.abc_limit != default.abc_limit),
            ("ecn", self.ecn != default.ecn),
            ("rate_cap", self.rate_cap != default.rate_cap),
            ("handshake", self.handshake != default.handshake),
            (
                "limited_transmit",
                self.limited_transmit != default.limited_transmit,
            ),
            ("syn_rto", self.syn_rto != default.syn_rto),
            ("max_retries", self.max_retries != default.max_retries),
            ("rescue_retransmit", self.rescue_retransmit.is_some()),
            ("keep_sack_on_rto", self.keep_sack_on_rto.is_some()),
            ("send_buffer", self.send_buffer.is_some()),
            ("lost_syn_rto", self.lost_syn_rto != default.lost_syn_rto),
            ("ecn_floor", self.ecn_floor.is_some()),
        ];
        set.iter()
            .find(|(_, changed)| *changed)
            .map(|(key, _)| *key)
    }

    /// A key that a switch of the same table leaves unread is refused rather than ignored:
    /// the delayed-ACK keys beside `delayed_ack = false`, the SACK keys beside another `cc`,
    /// `ecn_floor` beside `ecn = false` (docs/models/tcp.md, "Keys read only with another").
    fn check_unread_keys(&self, path: &str) -> Result<(), ScenarioError> {
        if !self.delayed_ack {
            let keys = [
                ("ack_every", self.ack_every.is_some()),
                ("delack_timeout", self.delack_timeout.is_some()),
            ];
            check::unread(path, &keys, "delayed_ack = true", "`delayed_ack = false`")?;
        }
        if self.cc != CcKind::Sack {
            let keys = [
                ("max_sack_blocks", self.max_sack_blocks.is_some()),
                ("rescue_retransmit", self.rescue_retransmit.is_some()),
                ("keep_sack_on_rto", self.keep_sack_on_rto.is_some()),
            ];
            let cc = serde_json::to_value(self.cc).unwrap_or_default();
            check::unread(path, &keys, "cc = \"sack\"", &format!("`cc = {cc}`"))?;
        }
        if !self.ecn {
            let keys = [("ecn_floor", self.ecn_floor.is_some())];
            check::unread(path, &keys, "ecn = true", "`ecn = false`")?;
        }
        Ok(())
    }

    fn check_window(&self, path: &str) -> Result<(), ScenarioError> {
        if self.window_scale > 14 {
            return Err(ScenarioError::new(
                join(path, "window_scale"),
                format!("got {}, expected 0..=14 (RFC 7323)", self.window_scale),
            ));
        }
        let max = 65_535u64 << self.window_scale;
        if self.rwnd > max {
            let needed = (0..=14u8)
                .find(|&s| 65_535u64 << s >= self.rwnd)
                .unwrap_or(14);
            return Err(ScenarioError::new(
                join(path, "rwnd"),
                format!(
                    "got {}, expected at most 65535 << window_scale = {max}; set window_scale >= {needed}",
                    self.rwnd
                ),
            ));
        }
        check::positive_int(path, "rwnd", self.rwnd)
    }

    fn check_timers(&self, path: &str) -> Result<(), ScenarioError> {
        check::positive(path, "initial_rto", self.initial_rto.secs())?;
        check::positive(path, "min_rto", self.min_rto.secs())?;
        if self.max_rto.0 < self.min_rto.0 {
            return Err(ScenarioError::new(
                join(path, "max_rto"),
                format!(
                    "got {} s, expected at least min_rto = {} s",
                    self.max_rto.secs(),
                    self.min_rto.secs()
                ),
            ));
        }
        check::positive(path, "delack_timeout", self.delack_timeout().secs())?;
        check::positive(path, "syn_rto", self.syn_rto.secs())?;
        check::non_negative(path, "granularity", self.granularity.secs())
    }

    pub(super) fn rto_params(&self) -> RtoParams {
        RtoParams {
            initial: self.initial_rto.secs(),
            min: self.min_rto.secs(),
            max: self.max_rto.secs(),
            granularity: self.granularity.secs(),
        }
    }

    pub fn receiver_params(&self) -> ReceiverParams {
        ReceiverParams {
            header: self.header,
            rwnd: (self.rwnd >> self.window_scale) << self.window_scale,
            sack: self.cc == CcKind::Sack,
            max_sack_blocks: self.max_sack_blocks() as usize,
            delayed_ack: self.delayed_ack,
            ack_every: self.ack_every(),
            delack_timeout: self.delack_timeout().0,
            timestamps: self.timestamps,
        }
    }
}

impl TcpConfig {
    /// A full segment (mss, header and options) is a packet like any other: at most
    /// `MAX_PACKET_BYTES` (a header of 10^9 bytes aborted the cell network's segmentation, an
    /// mss of 2^32 wrapped the packet's size).
    fn check_segment_size(&self, path: &str) -> Result<(), ScenarioError> {
        let largest = crate::config::dist::MAX_PACKET_BYTES;
        let options = f64::from(option_bytes(self.timestamps, 0));
        let segment = self.mss as f64 + f64::from(self.header) + options;
        if segment <= largest {
            return Ok(());
        }
        let field = if self.mss as f64 >= f64::from(self.header) {
            "mss"
        } else {
            "header"
        };
        Err(ScenarioError::new(
            join(path, field),
            format!(
                "got a segment of {segment} bytes (mss {} + header {} + options {options}), \
                 expected at most {largest} bytes",
                self.mss, self.header
            ),
        ))
    }
}

impl SourceConfig for TcpConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        check::positive_int(path, "mss", self.mss)?;
        check::positive_int(path, "header", self.header as u64)?;
        self.check_segment_size(path)?;
        check::int_in_range(
            path,
            "initial_window",
            self.initial_window,
            1,
            MAX_WINDOW_SEGMENTS,
        )?;
        check::positive_int(path, "ack_every", self.ack_every() as u64)?;
        check::positive_int(path, "dupthresh", self.dupthresh as u64)?;
        check::int_in_range(path, "abc_limit", self.abc_limit, 1, MAX_WINDOW_SEGMENTS)?;
        check::in_range(
            path,
            "max_sack_blocks",
            self.max_sack_blocks() as f64,
            1.0,
            4.0,
        )?;
        check::positive_int(path, "max_retries", self.max_retries as u64)?;
        if let Some(bytes) = self.send_buffer {
            check::positive_int(path, "send_buffer", bytes)?;
        }
        if let Some(rate) = self.rate_cap {
            check::positive_int(path, "rate_cap", rate.bps())?;
        }
        self.check_window(path)?;
        self.check_timers(path)?;
        self.check_unread_keys(path)?;
        self.app.validate(&join(path, "app"))
    }

    fn has_reverse_flow(&self) -> bool {
        true
    }

    fn build(&self, env: &SourceEnv) -> AgentPair {
        let ack_flow = env.ack_flow.unwrap_or(env.flow);
        let reply = Reply {
            ack_flow,
            dst: env.src_node,
            dst_agent: env.sender_agent,
        };
        AgentPair {
            sender: Box::new(TcpSender::new(self, env)),
            receiver: Box::new(TcpReceiver::new(self.receiver_params(), reply)),
        }
    }
}

/// The TOML body `config` with the options the unit tests' hand-checked packet sequences
/// assume added where it does not set them: one ACK per segment, no option bytes, 10 ms ticks
/// (fairgate's defaults before they became ns-3's).
#[cfg(test)]
pub(crate) fn classic(config: &str) -> String {
    let pinned = [
        ("timestamps", "false"),
        ("delayed_ack", "false"),
        ("granularity", "\"10ms\""),
    ];
    let mut body = config.to_string();
    for (key, value) in pinned {
        let set = config
            .lines()
            .any(|line| line.trim_start().starts_with(&format!("{key} ")));
        if !set {
            body.push_str(&format!("\n{key} = {value}"));
        }
    }
    body
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(body: &str) -> String {
        let cfg: TcpConfig = toml::from_str(body).unwrap();
        cfg.validate("flows[0].source").unwrap_err().to_string()
    }

    #[test]
    fn a_key_its_switch_leaves_unread_is_refused_not_ignored() {
        for (body, key, words) in [
            (
                "delayed_ack = false\nack_every = 3",
                "ack_every",
                "`delayed_ack = true`",
            ),
            (
                "delayed_ack = false\ndelack_timeout = \"40ms\"",
                "delack_timeout",
                "beside `delayed_ack = false`",
            ),
            (
                "max_sack_blocks = 2",
                "max_sack_blocks",
                "beside `cc = \"newreno\"`",
            ),
            (
                "cc = \"reno\"\nrescue_retransmit = true",
                "rescue_retransmit",
                "`cc = \"sack\"`",
            ),
            (
                "keep_sack_on_rto = false",
                "keep_sack_on_rto",
                "or no `keep_sack_on_rto`",
            ),
            (
                "ecn_floor = \"one_segment\"",
                "ecn_floor",
                "only `ecn = true` reads",
            ),
        ] {
            let message = error(body);
            assert!(
                message.starts_with(&format!("`flows[0].source.{key}`")),
                "{message}"
            );
            assert!(message.contains(words), "{message}");
        }
        for read in [
            "ack_every = 3",
            "cc = \"sack\"\nmax_sack_blocks = 2\nkeep_sack_on_rto = false",
            "ecn = true\necn_floor = \"one_segment\"",
        ] {
            let cfg: TcpConfig = toml::from_str(read).unwrap();
            assert!(cfg.validate("f").is_ok(), "{read}");
        }
    }

    #[test]
    fn reference_options_have_ns3_defaults_and_are_checked() {
        let cfg: TcpConfig = toml::from_str("").unwrap();
        assert!(cfg.limited_transmit && cfg.timestamps && !cfg.rescue_retransmit());
        assert!(cfg.delayed_ack && cfg.ack_every() == 2);
        assert_eq!(
            (cfg.delack_timeout().secs(), cfg.granularity.secs()),
            (0.2, 0.001)
        );
        assert_eq!((cfg.initial_rto.secs(), cfg.min_rto.secs()), (1.0, 1.0));
        assert!(cfg.keep_sack_on_rto());
        assert_eq!((cfg.syn_rto.secs(), cfg.max_retries), (3.0, 6));
        assert_eq!(cfg.send_buffer, None);
        assert_eq!(
            (cfg.lost_syn_rto, cfg.ecn_floor()),
            (LostSynRto::Ns3, EcnFloor::TwoSegments)
        );
        let bad = toml::from_str::<TcpConfig>("ecn_floor = \"zero\"").unwrap_err();
        assert!(bad.to_string().contains("one_segment"));
        assert!(error("max_retries = 0").contains("flows[0].source.max_retries"));
        assert!(error("syn_rto = \"0s\"").contains("flows[0].source.syn_rto"));
        assert!(error("send_buffer = 0").contains("flows[0].source.send_buffer"));
    }

    #[test]
    fn a_segment_is_at_most_the_largest_packet() {
        assert!(error("mss = 4294967296").contains("flows[0].source.mss"));
        assert!(error("header = 1000000000").contains("flows[0].source.header"));
        let e = error("mss = 1048510\nheader = 40");
        assert!(e.contains("segment of 1048562 bytes"), "{e}");
        let fits: TcpConfig = toml::from_str("mss = 1048508\nheader = 40").unwrap();
        assert!(fits.validate("f").is_ok());
    }
}
