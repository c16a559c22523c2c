//! A reflector that can be put under test: anything that talks through a `kube::Client` and reports
//! what it shows through a [`Show`]. kube-runtime is one ([`crate::KubeConfig`]). Implementing
//! [`UnderTest`] is all it takes: [`crate::Kube`] makes it the `Clients` every driver runs.

use std::time::Duration;

use listwatch_model::Config;

use crate::show::Show;

/// A reflector under test.
pub trait UnderTest {
    /// Its name in reports and trace files.
    fn name(&self) -> String;
    /// Start its tasks (`tokio::spawn`) on the current runtime. `client` reaches the model's API servers;
    /// the one collection is `ConfigMap`s in namespace `default`. Everything it shows goes through
    /// `show`: the events it applies, how to read its cache, readiness, and every delay it waits on.
    fn spawn(&self, client: kube::Client, show: Show);
    /// How long it waits on an open watch with nothing to read before giving up on it, if it does; the
    /// harness keeps that timer itself (it starts afresh at every line the reflector reads).
    fn watch_idle_timeout(&self) -> Option<Duration> {
        None
    }
    /// The seed of its own randomness, set before [`Self::spawn`] (fastrand's thread-local generator).
    fn seed(&self, seed: u64) {
        fastrand::seed(seed);
    }
    /// Itself as the reflectors of a world of `config` run it (kube-runtime lists in pages where the
    /// world's reflectors do).
    fn for_world(&self, _config: &Config) -> Self
    where
        Self: Clone,
    {
        self.clone()
    }
}
