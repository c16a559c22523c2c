//! Encoding what a model server sends as Kubernetes' HTTP/JSON: a `ConfigMapList`, newline-delimited watch
//! events, and `Status` bodies for errors (A4: an error after a watch opened is an ERROR event; before,
//! an HTTP status).

use bytes::Bytes;
use http::StatusCode;
use listwatch_model::{ApiError, ListResponse, WatchEvent};
use serde_json::{json, Value};

use super::object::{rv_text, to_json};
use super::request::encode_continue;

/// A `ConfigMapList` page.
pub fn list(l: &ListResponse) -> Bytes {
    let mut metadata = json!({ "resourceVersion": rv_text(l.rv) });
    if let Some(c) = l.cont {
        metadata["continue"] = Value::String(encode_continue(c));
    }
    let items: Vec<Value> = l.items.iter().map(to_json).collect();
    let body = json!({ "kind": "ConfigMapList", "apiVersion": "v1", "metadata": metadata, "items": items });
    Bytes::from(body.to_string())
}

/// The HTTP status and `Status` reason of an API error the server answers with.
pub fn status_of(e: ApiError) -> (StatusCode, &'static str, &'static str) {
    match e {
        ApiError::Expired => (StatusCode::GONE, "Expired", "too old resource version"),
        // A2: a resourceVersion newer than the cache can serve in time.
        ApiError::TooLargeResourceVersion => {
            (StatusCode::GATEWAY_TIMEOUT, "Timeout", "Too large resource version")
        }
        ApiError::TooManyRequests => {
            (StatusCode::TOO_MANY_REQUESTS, "TooManyRequests", "storage is (re)initializing")
        }
        ApiError::InternalError => {
            (StatusCode::INTERNAL_SERVER_ERROR, "InternalError", "an error on the server")
        }
        ApiError::BadRequest => (StatusCode::BAD_REQUEST, "BadRequest", "the server rejected the request"),
        // Not statuses: the transport reports these; a status is the nearest a body can say.
        ApiError::ConnectionRefused | ApiError::Disconnected => {
            (StatusCode::SERVICE_UNAVAILABLE, "ServiceUnavailable", "connection failed")
        }
    }
}

/// A `Status` object.
pub fn status_json(code: StatusCode, reason: &str, message: &str) -> Value {
    let mut status = json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code.as_u16(),
    });
    if reason == "Timeout" && message == "Too large resource version" {
        status["details"] =
            json!({ "causes": [{ "reason": "ResourceVersionTooLarge", "message": message }] });
    }
    status
}

/// The body of an error answered as an HTTP status.
pub fn status_body(code: StatusCode, reason: &str, message: &str) -> Bytes {
    Bytes::from(status_json(code, reason, message).to_string())
}

/// One watch event as its line on the stream, newline included.
pub fn event_line(e: &WatchEvent) -> Bytes {
    let (kind, object) = match e {
        WatchEvent::Added(o) => ("ADDED", to_json(o)),
        WatchEvent::Modified(o) => ("MODIFIED", to_json(o)),
        WatchEvent::Deleted(o) => ("DELETED", to_json(o)),
        WatchEvent::Bookmark(rv) => ("BOOKMARK", bookmark(*rv, false)),
        WatchEvent::InitialEventsEnd(rv) => ("BOOKMARK", bookmark(*rv, true)),
        WatchEvent::Error(err) => {
            let (code, reason, message) = status_of(*err);
            ("ERROR", status_json(code, reason, message))
        }
    };
    let mut line = json!({ "type": kind, "object": object }).to_string();
    line.push('\n');
    Bytes::from(line)
}

fn bookmark(rv: listwatch_model::Rev, initial_end: bool) -> Value {
    let mut metadata = json!({ "resourceVersion": rv_text(rv) });
    if initial_end {
        metadata["annotations"] = json!({ "k8s.io/initial-events-end": "true" });
    }
    json!({ "kind": "ConfigMap", "apiVersion": "v1", "metadata": metadata })
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::{ObjectList, WatchEvent as KubeEvent};
    use listwatch_model::{Continue, Key, Object, Rev, Uid};

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
        assert!(event_line(&WatchEvent::Bookmark(Rev(2))).ends_with(b"\n"));
    }
}
