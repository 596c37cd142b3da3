//! Time, the event queue and random-number streams.

pub mod events;
pub mod prefetch;
pub mod rng;
pub mod time;

pub use events::{Event, EventQueue};
pub use rng::Rng;
pub use time::{secs, to_secs, tx_time, Time, PS_PER_SEC};
