//! The guarantees, one file each, and the one list that registers them.
//!
//! A guarantee is a [`Guarantee`]: its words (a name, the sentence a violation quotes, the witness a
//! checker must reach for a pass to mean something), what it remembers of a history (its `State`), and
//! how it judges one: event by event ([`Guarantee::observe`]), after each step
//! ([`Guarantee::after_step`]) and in a state ([`Guarantee::violation`]). It reads only [`Observed`]
//! events, [`Observations`] and, for the bookkeeping several guarantees share (the RV a client
//! claimed, the stream it reads, what it owes after a failure), the [`History`].
//!
//! Adding one: a file in this directory with `pub struct State` implementing [`Guarantee`], and one
//! line `pub mod file_name;` below, where its violations should be looked for. The [`Property`] enum
//! (variant `FileName`, in [`crate::property`]), its names, the checker's and simulator's judgement,
//! `check`'s table and the witness report follow from that line.

use std::fmt::Debug;
use std::hash::Hash;

use listwatch_model::{ClientId, Observed};

use crate::history::History;
use crate::observations::Observations;
use crate::property::{Property, Violation};

/// What a guarantee found broken: by which client (none for the manager) and what was seen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    pub client: Option<ClientId>,
    pub detail: String,
}

impl Found {
    /// Broken by `client`.
    pub fn by(client: ClientId, detail: String) -> Found {
        Found { client: Some(client), detail }
    }

    /// Broken by no one client (the manager, the environment's shared parts).
    pub fn anyone(detail: String) -> Found {
        Found { client: None, detail }
    }

    fn of(self, property: Property) -> Violation {
        Violation { property, client: self.client, detail: self.detail }
    }
}

/// One entry per client of `obs`, for a guarantee that remembers something of each: sized on every
/// step, so that two histories that know the same have the same state.
pub fn per_client<T: Default>(entries: &mut Vec<T>, obs: &impl Observations) {
    entries.resize_with(usize::from(obs.clients()), T::default);
}

/// One guarantee a list/watch cache must keep (see the module's documentation).
pub trait Guarantee: Clone + Debug + Default + Eq + Hash {
    /// The name used on the command line, in traces and in reports.
    const NAME: &'static str;
    /// The guarantee, as a violation quotes it.
    const GUARANTEE: &'static str;
    /// What must be reachable for a pass to mean something.
    const WITNESS: &'static str;

    /// Fold one observed event; `obs` shows the state after the step.
    fn observe(&mut self, _obs: &impl Observations, _seen: &Observed) -> Option<Found> {
        None
    }

    /// Judge the state after a step, once its events are folded.
    fn after_step(&mut self, _obs: &impl Observations) -> Option<Found> {
        None
    }

    /// Whether the guarantee is broken in this state, with the history kept so far.
    fn violation(&self, _obs: &impl Observations, _history: &History) -> Option<Found> {
        None
    }

    /// Whether the witness is reached in this state.
    fn witnessed(&self, obs: &impl Observations, history: &History) -> bool;
}

macro_rules! guarantees {
    ($($variant:ident($module:ident),)*) => {

        impl Property {
            /// The name used on the command line, in traces and in reports.
            pub fn name(self) -> &'static str {
                match self {
                    $(Property::$variant => <$module::State as Guarantee>::NAME,)*
                }
            }

            /// The guarantee, as a violation quotes it.
            pub fn guarantee(self) -> &'static str {
                match self {
                    $(Property::$variant => <$module::State as Guarantee>::GUARANTEE,)*
                }
            }

            /// What must be reachable for a pass to mean something.
            pub fn witness(self) -> &'static str {
                match self {
                    $(Property::$variant => <$module::State as Guarantee>::WITNESS,)*
                }
            }
        }

        /// What every guarantee remembers of a history, one field each.
        #[derive(Debug, Default, PartialEq, Eq, Hash)]
        pub struct States {
            $(pub $module: $module::State,)*
        }
        listwatch_model::clone_by_field!(States { $($module),* });

        impl States {
            /// Fold one event into every guarantee; the first violation found, if any.
            pub(crate) fn observe(&mut self, obs: &impl Observations, seen: &Observed) -> Option<Violation> {
                let mut first = None;
                $(
                    if let Some(found) = self.$module.observe(obs, seen) {
                        first = first.or(Some(found.of(Property::$variant)));
                    }
                )*
                first
            }

            /// Judge the state after a step in every guarantee; the first violation found, if any.
            pub(crate) fn after_step(&mut self, obs: &impl Observations) -> Option<Violation> {
                let mut first = None;
                $(
                    if let Some(found) = self.$module.after_step(obs) {
                        first = first.or(Some(found.of(Property::$variant)));
                    }
                )*
                first
            }

            pub(crate) fn violation(
                &self,
                property: Property,
                obs: &impl Observations,
                history: &History,
            ) -> Option<Violation> {
                match property {
                    $(Property::$variant => self.$module.violation(obs, history).map(|f| f.of(property)),)*
                }
            }

            pub(crate) fn witnessed(&self, property: Property, obs: &impl Observations, history: &History) -> bool {
                match property {
                    $(Property::$variant => self.$module.witnessed(obs, history),)*
                }
            }
        }
    };
}

// The guarantees, one line each, in the order violations are looked for: `build.rs` makes each line
// `pub mod name;` the entry `Name(name),` of the `guarantees!` list and the variant `Name` of
// `Property` (and fails the build on a file here with no line). Plain `mod` items, so that tools that read the module tree without expanding macros
// (cargo-mutants, rustfmt) see every file; `reorder_modules = false` in rustfmt.toml keeps the order.
pub mod no_resurrected_delete;
pub mod no_rv_regression;
pub mod cache_is_snapshot;
pub mod converges;
pub mod no_lock_across_unbounded_wait;
pub mod no_needless_relist;
pub mod no_busy_loop;
pub mod watch_ordered;
pub mod watch_reliable;
pub mod backoff;
pub mod notifications_match_cache;
pub mod stale_bounded;
pub mod ready_means_listed;
pub mod requests_answered;
pub mod reads_fresh;
pub mod no_leaked_connection;
pub mod failures_told;

include!(concat!(env!("OUT_DIR"), "/guarantees.rs"));
