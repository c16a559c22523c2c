//! The shared wire's bytes decode as kube reads them: lists, every kind of watch line, and objects back
//! into the model's.

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{ObjectList, WatchEvent as KubeEvent};
use listwatch_model::{ApiError, Continue, Key, ListResponse, Object, Rev, Uid, WatchEvent};
use listwatch_wire::object::{from_json, to_json};
use listwatch_wire::response::{event_line, list};

fn obj(key: u8, rv: u32) -> Object {
    Object { key: Key(key), uid: Uid(Rev(rv)), rv: Rev(rv), version: 1 }
}

#[test]
fn lists_decode_as_kube_reads_them() {
    let page = ListResponse {
        rv: Rev(7),
        items: vec![obj(0, 3), obj(1, 5)],
        cont: Some(Continue { rv: Rev(7), after: Key(1) }),
    };
    let list: ObjectList<ConfigMap> = serde_json::from_slice(&list(&page)).expect("a list");
    assert_eq!(list.metadata.resource_version.as_deref(), Some("8"), "the wire counts from 1");
    assert_eq!(list.metadata.continue_.as_deref(), Some("lw.8.1"));
    assert_eq!(list.items.len(), 2);
}

#[test]
fn events_decode_as_kube_reads_them() {
    let line = |e| serde_json::from_slice::<KubeEvent<ConfigMap>>(&event_line(&e)).expect("an event");
    assert!(matches!(line(WatchEvent::Added(obj(0, 3))), KubeEvent::Added(_)));
    assert!(matches!(line(WatchEvent::Deleted(obj(0, 4))), KubeEvent::Deleted(_)));
    match line(WatchEvent::InitialEventsEnd(Rev(9))) {
        KubeEvent::Bookmark(b) => {
            assert_eq!(b.metadata.resource_version, "10");
            assert!(b.metadata.annotations.contains_key("k8s.io/initial-events-end"));
        }
        other => panic!("a bookmark, not {other:?}"),
    }
    match line(WatchEvent::Error(ApiError::Expired)) {
        KubeEvent::Error(s) => assert_eq!(s.code, 410),
        other => panic!("an error, not {other:?}"),
    }
}

#[test]
fn objects_round_trip_through_configmaps() {
    let o = Object { key: Key(28), uid: Uid(Rev(3)), rv: Rev(9), version: 4 };
    let cm: ConfigMap = serde_json::from_value(to_json(&o)).expect("a ConfigMap");
    assert_eq!(from_json(&serde_json::to_value(&cm).expect("JSON")), Ok(o));
}
