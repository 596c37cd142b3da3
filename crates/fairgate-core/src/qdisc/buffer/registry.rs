//! The registry of buffer managers for per-flow schedulers: one line per algorithm
//! (`buffer = { kind = "...", ... }` inside a scheduler's config).

use super::{BufferConfig, BufferManager};
use crate::config::ScenarioError;
use crate::qdisc::Limit;

macro_rules! buffer_registry {
    ($( $kind:literal => $variant:ident($config:ty) ),* $(,)?) => {
        /// A buffer manager as written in a scenario.
        #[derive(Clone, Debug, serde::Serialize)]
        #[serde(tag = "kind")]
        pub enum BufferSpec {
            $( #[serde(rename = $kind)] $variant($config), )*
        }

        impl<'de> serde::Deserialize<'de> for BufferSpec {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let value = <toml::Value as serde::Deserialize>::deserialize(d)?;
                let (kind, rest) = crate::config::tagged::split_kind::<D::Error>(value, Self::KINDS)?;
                match kind.as_str() {
                    $( $kind => crate::config::error::deserialize_nested(rest).map(Self::$variant), )*
                    _ => unreachable!("split_kind checked the kind"),
                }
            }
        }

        impl BufferSpec {
            pub const KINDS: &'static [&'static str] = &[$($kind),*];

            pub fn kind(&self) -> &'static str {
                match self { $( Self::$variant(_) => $kind, )* }
            }

            pub fn validate(&self, path: &str) -> Result<(), ScenarioError> {
                match self { $( Self::$variant(c) => c.validate(path), )* }
            }

            pub fn build(&self) -> Box<dyn BufferManager> {
                match self { $( Self::$variant(c) => c.build(), )* }
            }

            /// The manager's shared buffer (`limit`, `limit_bytes`).
            pub fn limit(&self) -> Limit {
                match self { $( Self::$variant(c) => c.limit, )* }
            }
        }
    };
}

buffer_registry! {
    "droptail" => DropTail(super::droptail::DropTailConfig),
    "drop_from_front" => DropFromFront(super::drop_front::DropFromFrontConfig),
    "lqd" => Lqd(super::lqd::LqdConfig),
    "rnd" => Rnd(super::rnd::RndConfig),
    "red" => Red(super::fq_red::FqRedConfig),
    "pfd" => Pfd(super::pfd::PfdConfig),
    "quasi_pushout_pfd" => QuasiPushoutPfd(super::quasi_pushout::QuasiPushoutConfig),
}

impl BufferSpec {
    /// The manager a scheduler asks with `drop = "buffer"`: its `buffer`, else drop-tail over
    /// the scheduler's own `limit`.
    pub fn given_or_drop_tail(buffer: Option<&BufferSpec>, limit: Limit) -> BufferSpec {
        let drop_tail = || BufferSpec::DropTail(super::droptail::DropTailConfig { limit });
        buffer.cloned().unwrap_or_else(drop_tail)
    }
}

impl Default for BufferSpec {
    fn default() -> Self {
        BufferSpec::DropTail(Default::default())
    }
}

/// The keys of a scheduler that asks its manager only with `drop = "buffer"` (FQ, WFQ, FQbit,
/// Nagle). A `buffer` table beside another drop rule would go unused, and the scheduler's own
/// `limit` beside a `buffer` table is not the limit that holds the queue; both are refused
/// rather than lost. `own` is the scheduler's limit, and its default (50 packets) is taken as
/// not given: it cannot be told apart from `limit = 50` written out.
pub fn check_manager_keys(
    path: &str,
    asks_manager: bool,
    buffer: Option<&BufferSpec>,
    own: Limit,
) -> Result<(), ScenarioError> {
    match buffer {
        Some(_) if !asks_manager => Err(ScenarioError::new(
            format!("{path}.buffer"),
            "got a `buffer` table, which only `drop = \"buffer\"` asks (the drop rule in use \
             chooses its own victims); expected `drop = \"buffer\"` beside it, or no `buffer`",
        )),
        Some(spec) if own != Limit::default() && own != spec.limit() => Err(ScenarioError::new(
            format!("{path}.limit"),
            format!(
                "got {} beside a `buffer` table with {}: with `drop = \"buffer\"` the buffer \
                 manager's limit holds the queue; expected the limit inside `buffer` only",
                limit_keys(own),
                limit_keys(spec.limit()),
            ),
        )),
        _ => Ok(()),
    }
}

/// `limit = 20` or `limit = 20, limit_bytes = 30000`.
fn limit_keys(limit: Limit) -> String {
    match limit.bytes {
        Some(bytes) => format!("limit = {}, limit_bytes = {bytes}", limit.packets),
        None => format!("limit = {}", limit.packets),
    }
}
