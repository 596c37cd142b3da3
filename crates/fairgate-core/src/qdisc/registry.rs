//! The registry of queue disciplines: one line per algorithm.
//!
//! A scenario names a discipline with `kind = "..."`; the remaining keys are that discipline's
//! config struct. To add an algorithm, write its file (config struct implementing
//! [`QdiscConfig`] plus the [`Qdisc`]) and add one line below.

use super::{Qdisc, QdiscConfig, QdiscEnv};
use crate::config::ScenarioError;

macro_rules! qdisc_registry {
    ($( $kind:literal => $variant:ident($config:ty) ),* $(,)?) => {
        /// A queue discipline as written in a scenario (`queue = { kind = "...", ... }`).
        #[derive(Clone, Debug, serde::Serialize)]
        #[serde(tag = "kind")]
        pub enum QdiscSpec {
            $( #[serde(rename = $kind)] $variant($config), )*
        }

        impl<'de> serde::Deserialize<'de> for QdiscSpec {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let value = <toml::Value as serde::Deserialize>::deserialize(d)?;
                let (kind, rest) = crate::config::tagged::split_kind::<D::Error>(value, Self::KINDS)?;
                match kind.as_str() {
                    $( $kind => crate::config::error::deserialize_nested(rest).map(Self::$variant), )*
                    _ => unreachable!("split_kind checked the kind"),
                }
            }
        }

        impl QdiscSpec {
            /// Every registered `kind`.
            pub const KINDS: &'static [&'static str] = &[$($kind),*];

            pub fn kind(&self) -> &'static str {
                match self { $( Self::$variant(_) => $kind, )* }
            }

            pub fn validate(&self, path: &str) -> Result<(), ScenarioError> {
                match self { $( Self::$variant(c) => c.validate(path), )* }
            }

            pub fn periods(&self) -> Vec<super::Period> {
                match self { $( Self::$variant(c) => c.periods(), )* }
            }

            pub fn build(&self, env: &QdiscEnv) -> Box<dyn Qdisc> {
                match self { $( Self::$variant(c) => c.build(env), )* }
            }
        }
    };
}

qdisc_registry! {
    "fifo" => Fifo(super::fifo::FifoConfig),
    "drop_from_front" => DropFromFront(super::fifo::DropFromFrontConfig),
    "step_mark" => StepMark(super::aqm::step_mark::StepMarkConfig),
    "sfg" => Sfg(super::filter::sfg::SfgConfig),
    "dfba" => Dfba(super::buffer::dfba::DfbaConfig),
    "epd" => Epd(super::buffer::epd::EpdConfig),
    "ppd" => Ppd(super::buffer::ppd::PpdConfig),
    "selective_drop" => SelectiveDrop(super::buffer::selective_drop::SelectiveDropConfig),
    "fba" => Fba(super::buffer::fba::FbaConfig),
    "red" => Red(super::aqm::red::RedConfig),
    "pi" => Pi(super::aqm::pi::PiConfig),
    "choke" => Choke(super::aqm::choke::ChokeConfig),
    "blue" => Blue(super::aqm::blue::BlueConfig),
    "sfb" => Sfb(super::aqm::sfb::SfbConfig),
    "red_pd" => RedPd(super::aqm::red_pd::RedPdConfig),
    "avq" => Avq(super::aqm::avq::AvqConfig),
    "avqred" => AvqRed(super::aqm::avqred::AvqRedConfig),
    "pfavqred" => PfAvqRed(super::aqm::pfavqred::PfAvqRedConfig),
    "sred" => Sred(super::aqm::sred::SredConfig),
    "fred" => Fred(super::aqm::fred::FredConfig),
    "random_drop" => RandomDrop(super::aqm::random_drop::RandomDropConfig),
    "early_random_drop" => EarlyRandomDrop(super::aqm::early_random_drop::EarlyRandomDropConfig),
    "yellow" => Yellow(super::aqm::yellow::YellowConfig),
    "vrc" => Vrc(super::aqm::vrc::VrcConfig),
    "vq_red" => VqRed(super::aqm::vq_red::VqRedConfig),
    "redfc" => RedFc(super::aqm::redfc::RedFcConfig),
    "fcfs" => Fcfs(super::fifo::FifoConfig),
    "fq" => Fq(super::sched::fq::FqConfig),
    "fqbit" => Fqbit(super::sched::fqbit::FqbitConfig),
    "wfq" => Wfq(super::sched::wfq::WfqConfig),
    "scfq" => Scfq(super::sched::scfq::ScfqConfig),
    "stfq" => Stfq(super::sched::stfq::StfqConfig),
    "stochastic_fq" => StochasticFq(super::sched::stochastic_fq::StochasticFqConfig),
    "selective_decbit" => SelectiveDecbit(super::sched::selective_decbit::SelectiveDecbitConfig),
    "drr" => Drr(super::sched::drr::DrrConfig),
    "wrr" => Wrr(super::sched::wrr::WrrConfig),
    "nagle" => Nagle(super::sched::nagle::NagleConfig),
    "test_leak" => TestLeak(super::leak::LeakConfig),
    "test_corrupt" => TestCorrupt(super::corrupt::CorruptConfig),
}

impl Default for QdiscSpec {
    fn default() -> Self {
        QdiscSpec::Fifo(Default::default())
    }
}
