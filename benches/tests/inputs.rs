//! The benchmarks' inputs: the stream is drawn as asked and the same for a seed, every write fits the
//! keys it follows, the objects carry the writes' identity and RV at a real object's size, and the bytes
//! of the wire decode to the objects they were made from. (An integration test, so that `.ci/run` runs
//! it by name in the build it shares with the harness's tests.)

use k8s_openapi::api::core::v1::ConfigMap;
use kube::core::{ObjectList, WatchEvent};
use listwatch_benches::objects::{configmap, pod};
use listwatch_benches::wire::{events, lines, list};
use listwatch_benches::{Stream, Write, WriteKind};
use listwatch_live::object_cache::ApiObject;

#[test]
fn the_stream_has_the_asked_mix_and_is_the_same_for_the_same_seed() {
    let s = Stream::draw(7, 1_000, 10_000, 20);
    assert_eq!(s.initial.len(), 1_000);
    assert_eq!(s.writes.len(), 10_000);
    let deletes = s.writes.iter().filter(|w| w.kind == WriteKind::Deleted).count();
    assert!((1_700..=2_300).contains(&deletes), "{deletes} deletes of 10,000");
    assert!(s.writes.windows(2).all(|p| p[1].rv == p[0].rv + 1));
    assert_eq!(Stream::draw(7, 1_000, 10_000, 20).writes, s.writes);
    assert_ne!(Stream::draw(8, 1_000, 10_000, 20).writes, s.writes);
}

#[test]
fn every_write_is_consistent_with_the_keys_it_follows() {
    let s = Stream::draw(3, 50, 5_000, 20);
    let mut live: Vec<Option<u64>> = s.initial.iter().map(|w| Some(w.uid)).collect();
    for w in &s.writes {
        let slot = &mut live[w.key as usize];
        match w.kind {
            WriteKind::Added => {
                assert_eq!(*slot, None);
                assert_eq!(w.uid, w.rv);
                *slot = Some(w.uid);
            }
            WriteKind::Modified => assert_eq!(*slot, Some(w.uid)),
            WriteKind::Deleted => {
                assert_eq!(*slot, Some(w.uid));
                *slot = None;
            }
        }
    }
}

#[test]
fn objects_carry_the_writes_identity_and_rv() {
    let w = Write { kind: WriteKind::Modified, key: 42, uid: 7, rv: 99 };
    for (key, stamp) in [
        (key_of(&configmap(&w)), configmap(&w).stamp().map(|s| (s.uid.to_string(), s.rv))),
        (key_of(&pod(&w)), pod(&w).stamp().map(|s| (s.uid.to_string(), s.rv))),
    ] {
        assert!(key.starts_with("default/") && key.ends_with("-00042"), "{key}");
        assert_eq!(stamp, Some(("5f0c6a1e-0000-4000-8000-000000000007".to_string(), 99)));
    }
}

fn key_of(o: &impl ApiObject) -> String {
    let mut key = String::new();
    o.write_key(&mut key);
    key
}

#[test]
fn a_pod_is_pod_sized() {
    let w = Write { kind: WriteKind::Added, key: 1, uid: 1, rv: 1 };
    let pod = serde_json::to_vec(&pod(&w)).expect("serializes").len();
    let cm = serde_json::to_vec(&configmap(&w)).expect("serializes").len();
    assert!((2_500..10_000).contains(&pod), "pod JSON is {pod} bytes");
    assert!(cm < 600, "configmap JSON is {cm} bytes");
}

#[test]
fn the_bytes_decode_to_the_objects_they_were_made_from() {
    let stream = Stream::draw(5, 20, 50, 20);
    let body = list(&stream.initial, configmap, 20);
    let decoded: ObjectList<ConfigMap> = serde_json::from_slice(&body).expect("a list");
    assert_eq!(decoded.metadata.resource_version.as_deref(), Some("20"));
    assert_eq!(decoded.items, stream.initial.iter().map(configmap).collect::<Vec<_>>());
    let text = String::from_utf8(list(&stream.initial, configmap, 20)).expect("UTF-8");
    assert!(
        text.starts_with(r#"{"apiVersion":"v1","#) && text.contains(r#""kind":"ConfigMapList""#),
        "{text:.80}"
    );

    let body = events(&stream.writes, configmap);
    let decoded: Vec<WatchEvent<ConfigMap>> =
        lines(&body).map(|l| serde_json::from_slice(l).expect("an event")).collect();
    assert_eq!(decoded.len(), stream.writes.len());
    for (event, w) in decoded.iter().zip(&stream.writes) {
        match (event, w.kind) {
            (WatchEvent::Added(o), WriteKind::Added)
            | (WatchEvent::Modified(o), WriteKind::Modified)
            | (WatchEvent::Deleted(o), WriteKind::Deleted) => assert_eq!(*o, configmap(w)),
            (e, kind) => panic!("{kind:?} became {e:?}"),
        }
    }
}
