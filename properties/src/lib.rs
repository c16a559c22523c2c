//! The guarantees a list/watch cache must keep, each stated once.
//!
//! Every property is judged only through the observation interface ([`Observations`]): what a client
//! did (requests, cancels, locks taken, waits entered with their bound) and showed (events received, the
//! RV it claims, its cache, its notifications, its readiness), the environment's state, and the store's
//! ground truth. Nothing here reads how a client is built, so the model reflector, a recorded stream
//! ([`recording`]) and a foreign client library are judged by the same code.
//!
//! Each guarantee is one file of [`guarantees`], registered by one line there: it judges a history
//! event by event and after each step, and a state ([`violation`]); a [`Monitor`] folds each step's
//! observations into every guarantee's history and into the [`history`] several share, and keeps the
//! first violation of each property. The modules stand in layers, each using only those below it:
//! `property` (the shared types), `history`, `guarantees`, `monitor`, then `judge` and `recording`. Each property has a witness ([`witnessed`]) that a checker must reach, so that a
//! pass is never vacuous.

pub mod guarantees;
pub mod history;
pub mod judge;
pub mod key_set;
pub mod monitor;
pub mod observations;
pub mod property;
pub mod recording;
pub mod truth;

pub use guarantees::Guarantee;
pub use judge::{first_violation, violation, witnessed};
pub use monitor::Monitor;
pub use observations::{Environment, Observations, Truth, Viewed};
pub use property::{Property, Violation};
pub use recording::{judge_frames, Frame, Shown};
