//! Putting your own reflector under test.
//!
//! Anything that talks to the API server through a `kube::Client` can be run against listwatch's model
//! of etcd and the API servers, with all their faults, and judged by the same properties as kube-runtime
//! and the model reflector. Implement one trait, `UnderTest`: start your tasks with the client the
//! harness gives you, and report through `Show` what your reflector shows its users (the events it
//! applies, how to read its cache, readiness, the failures it tells them of, and every delay it waits
//! on, so that time can pass for it).
//! `Kube(your_reflector)` is then a client every driver runs: the simulator and its shrinker here, and
//! `replay` and the bounded exhaustive mode the same way.
//!
//! This one is a plain list-then-watch loop, written the way many home-grown caches are. Run it:
//!
//! ```sh
//! cargo run --release --features kube --example own_reflector
//! ```
//!
//! It prints, per property it breaks, the first seed and the shrunk trace. Expect three: `backoff` (it
//! relists at once after a watch's 410), `stale-bounded` (it waits on a LIST or a watch over a dead
//! connection for ever: no timeout of its own) and `converges` (it resumes from the last event's RV,
//! in the middle of a revision, kubernetes#110210).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use listwatch_harness::sim::run::{run_seed_with, End};
use listwatch_harness::sim::shrink::shrink_with;
use listwatch_kube::reexports::futures::StreamExt;
use listwatch_kube::reexports::k8s_openapi::api::core::v1::ConfigMap;
use listwatch_kube::reexports::kube::api::{Api, ListParams, ResourceExt, WatchEvent, WatchParams};
use listwatch_kube::reexports::kube::runtime::watcher::Event;
use listwatch_kube::reexports::kube::Client;
use listwatch_kube::{Kube, Show, UnderTest};
use listwatch_model::{Config, Flaws};

/// The reflector under test.
#[derive(Clone, Copy, Debug)]
struct ListThenWatch;

type Cache = Arc<Mutex<BTreeMap<String, ConfigMap>>>;

impl UnderTest for ListThenWatch {
    fn name(&self) -> String {
        "list-then-watch".into()
    }

    fn spawn(&self, client: Client, show: Show) {
        let api: Api<ConfigMap> = Api::namespaced(client, "default");
        let cache: Cache = Arc::default();
        let read = cache.clone();
        show.cache_from(move || read.lock().unwrap().values().cloned().collect());
        show.readiness_waiters(1);
        tokio::spawn(run(api, cache, show));
    }
}

async fn run(api: Api<ConfigMap>, cache: Cache, show: Show) {
    let pause = Duration::from_secs(1);
    loop {
        let list = match api.list(&ListParams::default()).await {
            Ok(list) => list,
            Err(_) => {
                // Its users hear of every failed LIST (failures-told).
                show.told_failure();
                show.sleep(pause).await;
                continue;
            }
        };
        show.event(&Event::Init);
        let mut fresh = BTreeMap::new();
        for cm in list.items {
            show.event(&Event::InitApply(cm.clone()));
            fresh.insert(cm.name_any(), cm);
        }
        *cache.lock().unwrap() = fresh;
        show.event(&Event::InitDone);
        show.ready(0);
        let mut rv = list.metadata.resource_version.unwrap_or_default();
        // Watch from the list's RV, then from the last event's, until the server says 410.
        'watch: loop {
            let params = WatchParams::default().timeout(290);
            let mut stream = match api.watch(&params, &rv).await {
                Ok(stream) => stream.boxed(),
                Err(_) => {
                    show.told_failure();
                    show.sleep(pause).await;
                    continue;
                }
            };
            while let Some(event) = stream.next().await {
                match event {
                    Ok(WatchEvent::Added(cm) | WatchEvent::Modified(cm)) => {
                        rv = cm.resource_version().unwrap_or_default();
                        cache.lock().unwrap().insert(cm.name_any(), cm.clone());
                        show.event(&Event::Apply(cm));
                    }
                    Ok(WatchEvent::Deleted(cm)) => {
                        rv = cm.resource_version().unwrap_or_default();
                        cache.lock().unwrap().remove(&cm.name_any());
                        show.event(&Event::Delete(cm));
                    }
                    Ok(WatchEvent::Bookmark(b)) => rv = b.metadata.resource_version,
                    Ok(WatchEvent::Error(e)) if e.code == 410 => break 'watch,
                    Ok(WatchEvent::Error(_)) | Err(_) => break,
                }
            }
            show.sleep(pause).await;
        }
    }
}

fn main() {
    let seeds = 300;
    let mut first: BTreeMap<String, (u64, Config, Vec<listwatch_model::Action>)> = BTreeMap::new();
    let mut failed = 0;
    for seed in 0..seeds {
        let run = run_seed_with(&Kube(ListThenWatch), seed, Flaws::NONE, 200, 6_000);
        let what = match &run.end {
            End::Rest => continue,
            End::Broke(v) => {
                if !first.contains_key(v.property.name()) {
                    println!("seed {seed}: {v}");
                }
                v.property.name().to_string()
            }
            End::NoRest => "no-rest".to_string(),
            End::Halted(why) => format!("halted ({why})"),
            End::Gone(why) => panic!("seed {seed}: {why}"),
        };
        failed += 1;
        first.entry(what).or_insert((seed, run.draw.config, run.actions.clone()));
    }
    println!("list-then-watch: {} of {seeds} seeds pass", seeds - failed);
    for (what, (seed, config, actions)) in first {
        println!("\n{what}: first at seed {seed}");
        let Some(property) = listwatch_properties::Property::parse(&what) else { continue };
        let (_, shrunk) = shrink_with(&Kube(ListThenWatch), seed, config, &actions, property)
            .unwrap_or_else(|gone| panic!("seed {seed}: {gone}"));
        for (i, a) in shrunk.iter().enumerate() {
            println!("  {:>3}  {}", i + 1, listwatch_harness::action_text::format(a));
        }
    }
}
