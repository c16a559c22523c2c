//! A reflector under test as the `Clients` of listwatch's drivers: the one thing that turns an
//! [`UnderTest`] (kube-runtime, or your own) into the clients of a world.

use listwatch_model::manager::Manager;
use listwatch_model::{ClientId, Clients, Config, ManagerConfig};

use crate::client::Harnessed;
use crate::under_test::UnderTest;

/// A reflector under test over a `kube::Client`, as the clients of a world: one per reflector, each on
/// its own paused-time runtime, its randomness seeded from the run's seed and its number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kube<U>(pub U);

impl<U: UnderTest + Clone> Clients for Kube<U> {
    type C = Harnessed<U>;
    type M = Manager;
    fn name(&self) -> String {
        self.0.name()
    }
    fn make(&self, config: &Config, seed: u64, id: ClientId) -> Harnessed<U> {
        Harnessed::new(self.0.for_world(config), seed ^ (u64::from(id.0) << 56))
    }
    fn make_manager(&self, config: &Config, _seed: u64, m: ManagerConfig) -> Manager {
        Manager::new(m.clusters, m.requests, config.flaws)
    }
    fn over_the_wire(&self) -> bool {
        true
    }
}
