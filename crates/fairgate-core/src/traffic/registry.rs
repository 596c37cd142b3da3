//! The registry of traffic sources and transports: one line per kind.
//!
//! To add a source or a transport protocol, write its file (a config struct implementing
//! [`SourceConfig`] and its agents) and add one line below.

use super::{AgentPair, SourceConfig, SourceEnv};
use crate::config::ScenarioError;

macro_rules! source_registry {
    ($( $kind:literal => $variant:ident($config:ty) ),* $(,)?) => {
        /// A flow's source as written in a scenario (`source = { kind = "...", ... }`).
        #[derive(Clone, Debug, serde::Serialize)]
        #[serde(tag = "kind")]
        pub enum SourceSpec {
            $( #[serde(rename = $kind)] $variant($config), )*
        }

        impl<'de> serde::Deserialize<'de> for SourceSpec {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let value = <toml::Value as serde::Deserialize>::deserialize(d)?;
                let (kind, rest) = crate::config::tagged::split_kind::<D::Error>(value, Self::KINDS)?;
                match kind.as_str() {
                    $( $kind => crate::config::error::deserialize_nested(rest).map(Self::$variant), )*
                    _ => unreachable!("split_kind checked the kind"),
                }
            }
        }

        impl SourceSpec {
            pub const KINDS: &'static [&'static str] = &[$($kind),*];

            pub fn kind(&self) -> &'static str {
                match self { $( Self::$variant(_) => $kind, )* }
            }

            pub fn validate(&self, path: &str) -> Result<(), ScenarioError> {
                match self { $( Self::$variant(c) => c.validate(path), )* }
            }

            pub fn has_reverse_flow(&self) -> bool {
                match self { $( Self::$variant(c) => c.has_reverse_flow(), )* }
            }

            pub fn population(&self) -> Vec<super::Population> {
                match self { $( Self::$variant(c) => c.population(), )* }
            }

            pub fn records_transfers(&self) -> bool {
                match self { $( Self::$variant(c) => c.records_transfers(), )* }
            }

            pub fn build(&self, env: &SourceEnv) -> AgentPair {
                match self { $( Self::$variant(c) => c.build(env), )* }
            }

            pub fn host_pools(&self) -> super::pool::PoolSpecs<'_> {
                match self { $( Self::$variant(c) => c.host_pools(), )* }
            }

            pub fn build_pooled(
                &self,
                env: &SourceEnv,
                pools: &super::pool::Pools,
            ) -> (AgentPair, Vec<Box<dyn crate::net::Agent>>) {
                match self { $( Self::$variant(c) => c.build_pooled(env, pools), )* }
            }
        }
    };
}

source_registry! {
    "cbr" => Cbr(super::open_loop::CbrConfig),
    "poisson" => Poisson(super::open_loop::PoissonConfig),
    "onoff" => OnOff(super::open_loop::OnOffConfig),
    "malicious" => Malicious(super::open_loop::MaliciousConfig),
    "telnet" => Telnet(super::open_loop::TelnetConfig),
    "tcp" => Tcp(crate::transport::tcp::config::TcpConfig),
    "generic" => Generic(crate::transport::keshav::generic::GenericConfig),
    "decbit" => Decbit(crate::transport::keshav::decbit::DecbitConfig),
    "packet_pair" => PacketPair(crate::transport::keshav::packet_pair::PacketPairConfig),
    "pp_cth" => PpCth(crate::transport::keshav::pp_cth::PpCthConfig),
    "web" => Web(super::web::WebConfig),
    "http" => Http(super::http::HttpConfig),
}
