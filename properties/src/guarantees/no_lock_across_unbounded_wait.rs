//! `no-lock-across-unbounded-wait`: locks taken and waits entered, as a tracer sees them: no request
//! holds a lock while it waits with no bound (C8; seed 004).

use listwatch_model::manager::{ClusterId, LockMode, RequestId};
use listwatch_model::{Millis, Observed};
use litemap::LiteMap;

use crate::guarantees::{Found, Guarantee};
use crate::history::History;
use crate::observations::Observations;

#[derive(Debug, Default, PartialEq, Eq, Hash)]
pub struct State {
    pub held: LiteMap<RequestId, LockMode>,
    /// The waits entered and not left: for which cluster, with which bound (`None`: none).
    pub waiting: LiteMap<RequestId, (ClusterId, Option<Millis>)>,
    pub unreachable: LiteMap<ClusterId, ()>,
    /// A request was served while a cluster was unreachable.
    pub served_while_unreachable: bool,
}
listwatch_model::clone_by_field!(State {
    held: map,
    waiting: map,
    unreachable: map,
    served_while_unreachable
});

impl Guarantee for State {
    const NAME: &'static str = "no-lock-across-unbounded-wait";
    const GUARANTEE: &'static str = "nobody holds a lock while in a wait that has no bound";
    const WITNESS: &'static str = "a request is served while another cluster is unreachable";

    fn observe(&mut self, _obs: &impl Observations, seen: &Observed) -> Option<Found> {
        match *seen {
            Observed::LockTaken { request, mode } => {
                self.held.insert(request, mode);
            }
            Observed::LockReleased { request, .. } => {
                self.held.remove(&request);
            }
            Observed::WaitEntered { request, cluster, bound_ms } => {
                self.waiting.insert(request, (cluster, bound_ms));
            }
            Observed::WaitLeft { request } => {
                self.waiting.remove(&request);
            }
            Observed::ClusterUnreachable { cluster } => {
                self.unreachable.insert(cluster, ());
            }
            Observed::ClusterReachable { cluster } => {
                self.unreachable.remove(&cluster);
            }
            Observed::ManagerDone { served: true, .. } if !self.unreachable.is_empty() => {
                self.served_while_unreachable = true;
            }
            _ => {}
        }
        None
    }

    fn after_step(&mut self, _obs: &impl Observations) -> Option<Found> {
        self.held.iter().find_map(|(id, mode)| match self.waiting.get(id) {
            Some((cluster, None)) => Some(Found::anyone(format!(
                "{id} holds the {mode:?} lock while waiting with no bound for {cluster}"
            ))),
            _ => None,
        })
    }

    fn witnessed(&self, _obs: &impl Observations, _history: &History) -> bool {
        self.served_while_unreachable
    }
}
