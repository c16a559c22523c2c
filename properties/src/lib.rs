//! The guarantees a list/watch cache must keep, each stated once.
//!
//! Every property is judged only through the model's observation surface: what a reflector did
//! (requests, cancels) and showed (events received, the RV it claims, its cache, its notifications),
//! the client manager's locks and waits, and the store's ground truth. Nothing here reads how the
//! model's reflector is built, so the same judgements can be applied to a foreign reflector.
//!
//! Two kinds of judgement: a [`Monitor`] folds each step's observations and keeps the first violation
//! of a history property (`no-rv-regression`, `no-needless-relist`, `no-busy-loop`, the watch-stream
//! ones); [`violation`] judges a state (`cache-is-snapshot`, `converges`, ...). Each property has a
//! witness ([`witnessed`]) that a checker must reach, so that a pass is never vacuous.

pub mod judge;
pub mod monitor;
pub mod property;
pub mod truth;

pub use judge::{first_violation, violation, witnessed};
pub use monitor::Monitor;
pub use property::{Property, Violation};
