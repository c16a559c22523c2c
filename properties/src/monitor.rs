//! A monitor of a run: each client's [`History`] (the facts several guarantees judge by) and each
//! guarantee's own history ([`States`]), folded from what was observed step by step, with the first
//! violation of every property found. The first is kept apart, so that a checker sees it as part of
//! the state and stops there; a run that goes on reports the others too.
//!
//! It reads only [`Observed`] events and [`Observations`]: never a component's internals.

use listwatch_model::Observed;

use crate::guarantees::States;
use crate::history::History;
use crate::observations::{Observations, Viewed};
use crate::property::{Property, Violation};

#[derive(Debug, PartialEq, Eq, Hash)]
pub struct Monitor {
    /// What is remembered of each client's history ([`crate::history`]).
    pub history: History,
    /// What each guarantee keeps of the history itself ([`crate::guarantees`]).
    pub guarantees: States,
    /// The first violation found: a checker stops there.
    pub violation: Option<Violation>,
    /// The first violation of each other property found after it, in the order found: a run that goes
    /// on after its first violation reports every property it breaks.
    pub later: Vec<Violation>,
    /// The properties the clients cannot be judged by ([`Observations::not_judged`]): never found
    /// broken, never witnessed.
    pub not_judged: Vec<Property>,
}
listwatch_model::clone_by_field!(Monitor { history, guarantees, violation, later, not_judged });

impl Monitor {
    /// A monitor of a system just started, given what starting it observed.
    pub fn new(obs: &impl Observations, seen: &[Observed]) -> Self {
        let mut m = Monitor {
            history: History::new(obs),
            guarantees: States::default(),
            violation: None,
            later: Vec::new(),
            not_judged: obs.not_judged().into_iter().map(|(p, _)| p).collect(),
        };
        m.observe(obs, seen);
        m
    }

    /// Fold one step's observations; `obs` shows the state after the step. Each event goes to every
    /// guarantee, then to the shared history; then the state after the step is judged client by
    /// client, then by every guarantee.
    pub fn observe(&mut self, obs: &impl Observations, seen: &[Observed]) {
        let obs = &Viewed::of(obs);
        for o in seen {
            let found = self.guarantees.observe(obs, o);
            self.keep(found);
            self.history.observe_one(obs, o);
            self.keep_history();
        }
        let env = obs.environment();
        for client in obs.client_ids() {
            self.history.after_step(obs, client, env);
            self.keep_history();
        }
        let found = self.guarantees.after_step(obs);
        self.keep(found);
    }

    /// Whether `property` judges these clients.
    pub fn judges(&self, property: Property) -> bool {
        !self.not_judged.contains(&property)
    }

    /// The first violation of `property` this history showed, if any.
    pub fn found(&self, property: Property) -> Option<&Violation> {
        self.violation.iter().chain(&self.later).find(|v| v.property == property)
    }

    fn keep_history(&mut self) {
        for v in self.history.take_found() {
            self.keep(Some(v));
        }
    }

    fn keep(&mut self, found: Option<Violation>) {
        let Some(found) = found.filter(|f| self.judges(f.property)) else { return };
        if self.violation.is_none() {
            self.violation = Some(found);
        } else if self.found(found.property).is_none() {
            self.later.push(found);
        }
    }
}
