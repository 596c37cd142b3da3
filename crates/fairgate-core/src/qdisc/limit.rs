//! The buffer limit every bounded discipline shares: `limit` packets and, optionally,
//! `limit_bytes` bytes; an arrival must fit both. A config declares it with
//! `limited_config!`, which keeps the two flat scenario keys and serde's exact unknown-key
//! error (docs/scenarios.md, "Buffer limits", gives the reasons).

use super::buffer::FlowQueues;
use super::fifo::PacketFifo;
use crate::config::{check, ScenarioError};
use serde::Serialize;

/// A buffer's capacity in packets and, optionally, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Limit {
    #[serde(rename = "limit")]
    pub packets: u64,
    #[serde(rename = "limit_bytes")]
    pub bytes: Option<u64>,
}

impl Default for Limit {
    /// 50 packets, ns-2's `Queue/DropTail` default.
    fn default() -> Self {
        Limit::packets(50)
    }
}

impl Limit {
    /// A limit in packets only.
    pub const fn packets(packets: u64) -> Self {
        Limit {
            packets,
            bytes: None,
        }
    }

    /// A limit in packets and in bytes.
    pub const fn packets_and_bytes(packets: u64, bytes: u64) -> Self {
        Limit {
            packets,
            bytes: Some(bytes),
        }
    }

    /// Both parts must be positive; errors name `limit` or `limit_bytes` under `path`.
    pub fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        check::positive_int(path, "limit", self.packets)?;
        if let Some(bytes) = self.bytes {
            check::positive_int(path, "limit_bytes", bytes)?;
        }
        Ok(())
    }

    /// True when an arrival of `size` bytes would not fit in `queue`.
    pub fn overflows(&self, queue: &PacketFifo, size: u32) -> bool {
        self.refuses(queue.len() as u64, queue.bytes(), size)
    }

    /// True when an arrival of `size` bytes would not fit beside `packets` and `bytes` held.
    pub fn refuses(&self, packets: u64, bytes: u64, size: u32) -> bool {
        packets >= self.packets || self.bytes.is_some_and(|b| bytes + size as u64 > b)
    }

    /// True when what `queues` hold (the arrival included) is over the limit.
    pub fn exceeded(&self, queues: &dyn FlowQueues) -> bool {
        queues.total_packets() as u64 > self.packets
            || self.bytes.is_some_and(|b| queues.total_bytes() > b)
    }
}

/// Declares a discipline config whose first field is `pub limit: Limit`, read from the flat
/// keys `limit` and `limit_bytes` beside the config's own. Deserialisation goes through a
/// private struct with the same flat keys, so serde's `deny_unknown_fields` error ("unknown
/// field `x`, expected one of `limit`, `limit_bytes`, ...") and its field paths stay exact,
/// which `#[serde(flatten)]` would lose. The config must implement `Default`.
macro_rules! limited_config {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $( $(#[$field_meta:meta])* pub $field:ident : $ty:ty ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(serde::Serialize)]
        pub struct $name {
            /// The buffer: `limit` packets, and optionally `limit_bytes` bytes.
            #[serde(flatten)]
            pub limit: $crate::qdisc::limit::Limit,
            $( $(#[$field_meta])* pub $field: $ty, )*
        }

        const _: () = {
            // The private twin carries the config's own name, so serde's messages name it.
            mod keys {
                #[allow(unused_imports)]
                use super::*;

                #[derive(serde::Deserialize)]
                #[serde(deny_unknown_fields, default)]
                pub struct $name {
                    pub limit: u64,
                    pub limit_bytes: Option<u64>,
                    $( $(#[$field_meta])* pub $field: $ty, )*
                }

                impl Default for $name {
                    fn default() -> Self {
                        let defaults = <super::$name as Default>::default();
                        $name {
                            limit: defaults.limit.packets,
                            limit_bytes: defaults.limit.bytes,
                            $( $field: defaults.$field, )*
                        }
                    }
                }
            }

            impl<'de> serde::Deserialize<'de> for $name {
                fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                    let keys = <keys::$name as serde::Deserialize>::deserialize(d)?;
                    Ok($name {
                        limit: $crate::qdisc::limit::Limit {
                            packets: keys.limit,
                            bytes: keys.limit_bytes,
                        },
                        $( $field: keys.$field, )*
                    })
                }
            }
        };
    };
}
pub(crate) use limited_config;

#[cfg(test)]
mod tests {
    use crate::config::error::deserialize_nested;
    use crate::qdisc::aqm::red::RedConfig;
    use crate::qdisc::aqm::red_pd::RedPdConfig;
    use crate::qdisc::buffer::droptail::DropTailConfig;
    use crate::qdisc::Limit;

    fn parse<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, String> {
        let value: toml::Value = toml::from_str(text).unwrap();
        deserialize_nested::<T, toml::de::Error>(value)
            .map_err(|e| e.message().replace('\u{1}', "|"))
    }

    #[test]
    fn flat_keys_fill_the_shared_limit_and_absent_keys_keep_the_config_default() {
        let red: RedConfig = parse("limit = 40\nlimit_bytes = 60000\nmin_th = 3.0").unwrap();
        assert_eq!(red.limit, Limit::packets_and_bytes(40, 60000));
        assert_eq!(red.min_th, 3.0);
        let red: RedConfig = parse("min_th = 3.0").unwrap();
        assert_eq!(red.limit, Limit::packets(25));
        let tail: DropTailConfig = parse("").unwrap();
        assert_eq!(tail.limit, Limit::packets(50));
    }

    #[test]
    fn unknown_and_mistyped_keys_name_their_path_and_the_expected_keys() {
        let err = parse::<RedConfig>("limt = 5").unwrap_err();
        assert!(
            err.starts_with(
                "|limt|unknown field `limt`, expected one of `limit`, `limit_bytes`, `min_th`"
            ),
            "{err}"
        );
        let err = parse::<RedConfig>("limit_bytes = \"x\"").unwrap_err();
        assert_eq!(err, "|limit_bytes|invalid type: string \"x\", expected u64");
        let err = parse::<RedPdConfig>("red = { limt = 3 }").unwrap_err();
        assert!(err.starts_with("|red.limt|unknown field `limt`"), "{err}");
        let err = parse::<RedPdConfig>("red = 5").unwrap_err();
        assert!(err.ends_with("expected struct RedConfig"), "{err}");
        let err = parse::<DropTailConfig>("extra = 1").unwrap_err();
        assert_eq!(
            err,
            "|extra|unknown field `extra`, expected `limit` or `limit_bytes`"
        );
    }

    #[test]
    fn a_config_writes_the_two_flat_keys_first() {
        let red = RedConfig {
            limit: Limit::packets_and_bytes(40, 60000),
            ..RedConfig::default()
        };
        let json = serde_json::to_string(&red).unwrap();
        assert!(
            json.starts_with(r#"{"limit":40,"limit_bytes":60000,"min_th":5.0"#),
            "{json}"
        );
    }

    #[test]
    fn both_parts_must_be_positive() {
        assert_eq!(Limit::packets(0).validate("q").unwrap_err().path, "q.limit");
        let zero_bytes = Limit::packets_and_bytes(5, 0).validate("q").unwrap_err();
        assert_eq!(zero_bytes.path, "q.limit_bytes");
    }
}
