//! kube-runtime's `watcher` and reflector `Store`, unmodified, under test: the pipeline a controller
//! builds, reporting through a [`Show`].
//!
//! kube-runtime has two timers, and the harness knows each without touching its code: the watch's idle
//! timeout (`watcher::Config::timeout` + 5 s, as its documentation gives it) and the backoff of
//! `WatchStreamExt::default_backoff()`, whose delays a pass-through `Backoff` shows as it hands them out.
//! The backoff's jitter comes from fastrand's thread-local generator (through backon), seeded per run.

use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::runtime::reflector;
use kube::runtime::watcher::{self, DefaultBackoff};
use kube::runtime::WatchStreamExt;
use kube::Api;

use crate::client::Harnessed;
use crate::config::KubeConfig;
use crate::show::Show;
use crate::under_test::UnderTest;

/// kube-runtime under test.
pub type KubeRuntime = Harnessed<KubeConfig>;

impl UnderTest for KubeConfig {
    fn name(&self) -> String {
        self.spec()
    }

    fn spawn(&self, client: kube::Client, show: Show) {
        let api: Api<ConfigMap> = Api::namespaced(client, "default");
        let (reader, writer) = reflector::store::<ConfigMap>();
        show.readiness_waiters(self.waiters);
        for i in 0..self.waiters {
            let (reader, show) = (reader.clone(), show.clone());
            tokio::spawn(async move {
                if reader.wait_until_ready().await.is_ok() {
                    show.ready(i);
                }
            });
        }
        let cache = reader.clone();
        show.cache_from(move || cache.state().iter().map(|cm| (**cm).clone()).collect());
        let watcher = watcher::watcher(api, self.watcher_config());
        let stream = if self.backoff {
            watcher.backoff(show.backoff(DefaultBackoff::default())).reflect(writer).boxed()
        } else {
            watcher.reflect(writer).boxed()
        };
        tokio::spawn(async move {
            let mut stream = stream;
            while let Some(item) = stream.next().await {
                // An error item is what the stream tells its user of a failure (C12); what caused it
                // shows on the wire.
                match &item {
                    Ok(event) => show.event(event),
                    Err(_) => show.told_failure(),
                }
            }
        });
    }

    fn watch_idle_timeout(&self) -> Option<Duration> {
        Some(Duration::from_secs(u64::from(self.watch_timeout_secs()) + 5))
    }

    fn for_world(&self, config: &listwatch_model::Config) -> Self {
        // A world whose reflectors list in pages has kube-runtime list in pages of the same size.
        KubeConfig { page_size: config.reflector.page_size.map(u32::from), ..*self }
    }
}
