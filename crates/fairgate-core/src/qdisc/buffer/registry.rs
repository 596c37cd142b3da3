//! The registry of buffer managers for per-flow schedulers: one line per algorithm
//! (`buffer = { kind = "...", ... }` inside a scheduler's config).

use super::{BufferConfig, BufferManager};
use crate::config::ScenarioError;

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

impl Default for BufferSpec {
    fn default() -> Self {
        BufferSpec::DropTail(Default::default())
    }
}
