//! Encoding what a model server sends as Kubernetes' HTTP/JSON: a `ConfigMapList`, newline-delimited watch
//! events, and `Status` bodies for errors (A4: an error after a watch opened is an ERROR event; before,
//! an HTTP status).

use listwatch_model::{ApiError, ListResponse, WatchEvent};
use serde_json::{json, Value};

use super::object::{rv_text, to_json};
use super::request::encode_continue;

/// A `ConfigMapList` page.
pub fn list(l: &ListResponse) -> Vec<u8> {
    let mut metadata = json!({ "resourceVersion": rv_text(l.rv) });
    if let Some(c) = l.cont {
        metadata["continue"] = Value::String(encode_continue(c));
    }
    let items: Vec<Value> = l.items.iter().map(to_json).collect();
    let body = json!({ "kind": "ConfigMapList", "apiVersion": "v1", "metadata": metadata, "items": items });
    body.to_string().into_bytes()
}

/// The HTTP status and `Status` reason of an API error the server answers with.
pub fn status_of(e: ApiError) -> (u16, &'static str, &'static str) {
    match e {
        ApiError::Expired => (410, "Expired", "too old resource version"),
        // A2: a resourceVersion newer than the cache can serve in time.
        ApiError::TooLargeResourceVersion => (504, "Timeout", "Too large resource version"),
        ApiError::TooManyRequests => (429, "TooManyRequests", "storage is (re)initializing"),
        ApiError::InternalError => (500, "InternalError", "an error on the server"),
        ApiError::BadRequest => (400, "BadRequest", "the server rejected the request"),
        // A15: as the API server's filters and handlers spell them (`apierrors.NewUnauthorized`,
        // `responsewriters.Forbidden`, `NewNotFound`, `NewInvalid`, `NewServiceUnavailable`,
        // `NewTimeoutError` of the timeout filter).
        ApiError::Unauthorized => (401, "Unauthorized", "Unauthorized"),
        ApiError::Forbidden => (
            403,
            "Forbidden",
            "configmaps is forbidden: User \"system:serviceaccount:default:listwatch\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"default\"",
        ),
        ApiError::NotFound => (404, "NotFound", "the server could not find the requested resource"),
        ApiError::Invalid => (
            422,
            "Invalid",
            "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch",
        ),
        ApiError::Unavailable | ApiError::UnavailableRetryAfter => {
            (503, "ServiceUnavailable", "the server is currently unable to handle the request")
        }
        ApiError::GatewayTimeout => {
            (504, "Timeout", "request did not complete within requested timeout - context deadline exceeded")
        }
        // Not a status: the headers said 200, and the body broke off (see [`truncated_list`]).
        ApiError::Truncated => (200, "", ""),
        // Not statuses: the transport reports these; a status is the nearest a body can say.
        ApiError::ConnectionRefused | ApiError::Disconnected => {
            (503, "ServiceUnavailable", "connection failed")
        }
    }
}

/// A `Status` object.
pub fn status_json(code: u16, reason: &str, message: &str) -> Value {
    let mut status = json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    });
    match (code, reason) {
        (504, "Timeout") if message == "Too large resource version" => {
            status["details"] =
                json!({ "causes": [{ "reason": "ResourceVersionTooLarge", "message": message }] });
        }
        (403, _) => status["details"] = json!({ "kind": "configmaps" }),
        (404, _) => status["details"] = json!({}),
        (422, _) => {
            status["details"] = json!({
                "group": "meta.k8s.io",
                "kind": "ListOptions",
                "causes": [{
                    "reason": "FieldValueForbidden",
                    "message": "Forbidden: resourceVersionMatch is forbidden for watch",
                    "field": "resourceVersionMatch",
                }],
            })
        }
        _ => {}
    }
    status
}

/// The `Status` of an error answered as an HTTP status, with what `Retry-After` says in its details
/// too, as `apierrors` puts it there (A14, A15).
pub fn error_json(e: ApiError) -> Value {
    let (code, reason, message) = status_of(e);
    let mut status = status_json(code, reason, message);
    if e == ApiError::UnavailableRetryAfter {
        status["details"] = json!({ "retryAfterSeconds": 1 });
    }
    status
}

/// A LIST's 200 body cut short (A15): the start of a `ConfigMapList`, and the length the headers
/// promised, which the body never reaches.
pub fn truncated_list() -> (Vec<u8>, u64) {
    let start = br#"{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":""#;
    (start.to_vec(), 4096)
}

/// The body of an error answered as an HTTP status.
pub fn status_body(code: u16, reason: &str, message: &str) -> Vec<u8> {
    status_json(code, reason, message).to_string().into_bytes()
}

/// One watch event as its line on the stream, newline included.
pub fn event_line(e: &WatchEvent) -> Vec<u8> {
    let (kind, object) = match e {
        WatchEvent::Added(o) => ("ADDED", to_json(o)),
        WatchEvent::Modified(o) => ("MODIFIED", to_json(o)),
        WatchEvent::Deleted(o) => ("DELETED", to_json(o)),
        WatchEvent::Bookmark(rv) => ("BOOKMARK", bookmark(*rv, false)),
        WatchEvent::InitialEventsEnd(rv) => ("BOOKMARK", bookmark(*rv, true)),
        WatchEvent::Error(err) => ("ERROR", error_json(*err)),
    };
    let mut line = json!({ "type": kind, "object": object }).to_string();
    line.push('\n');
    line.into_bytes()
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
    use listwatch_model::{Continue, Key, Object, Rev, Uid};

    fn obj(key: u8, rv: u32) -> Object {
        Object { key: Key(key), uid: Uid(Rev(rv)), rv: Rev(rv), version: 1 }
    }

    #[test]
    fn a_list_page_carries_its_rv_and_continue_counted_from_one() {
        let page = ListResponse {
            rv: Rev(7),
            items: vec![obj(0, 3), obj(1, 5)],
            cont: Some(Continue { rv: Rev(7), after: Key(1) }),
        };
        let v: Value = serde_json::from_slice(&list(&page)).expect("JSON");
        assert_eq!(v["metadata"]["resourceVersion"], "8", "the wire counts from 1");
        assert_eq!(v["metadata"]["continue"], "lw.8.1");
        assert_eq!(v["items"][1]["metadata"]["name"], "b");
    }

    #[test]
    fn too_large_carries_its_cause() {
        let (code, reason, message) = status_of(ApiError::TooLargeResourceVersion);
        let s = status_json(code, reason, message);
        assert_eq!(s["code"], 504);
        assert_eq!(s["details"]["causes"][0]["reason"], "ResourceVersionTooLarge");
    }

    #[test]
    fn each_status_is_spelt_with_its_code_and_reason() {
        let expected = [
            (ApiError::Unauthorized, 401, "Unauthorized"),
            (ApiError::Forbidden, 403, "Forbidden"),
            (ApiError::NotFound, 404, "NotFound"),
            (ApiError::Expired, 410, "Expired"),
            (ApiError::Invalid, 422, "Invalid"),
            (ApiError::Unavailable, 503, "ServiceUnavailable"),
            (ApiError::UnavailableRetryAfter, 503, "ServiceUnavailable"),
            (ApiError::GatewayTimeout, 504, "Timeout"),
        ];
        for (e, code, reason) in expected {
            let s = error_json(e);
            assert_eq!((s["code"].as_u64(), s["reason"].as_str()), (Some(code), Some(reason)), "{e:?}");
            assert_eq!(s["kind"], "Status");
        }
        assert!(error_json(ApiError::GatewayTimeout)["details"]["causes"].is_null(), "no too-large cause");
        assert_eq!(error_json(ApiError::UnavailableRetryAfter)["details"]["retryAfterSeconds"], 1);
        assert_eq!(error_json(ApiError::Invalid)["details"]["causes"][0]["field"], "resourceVersionMatch");
    }

    #[test]
    fn a_truncated_list_promises_more_than_it_sends() {
        let (body, length) = truncated_list();
        assert!((body.len() as u64) < length);
        assert!(serde_json::from_slice::<Value>(&body).is_err(), "the cut body does not decode");
    }

    #[test]
    fn every_event_is_one_line() {
        for e in [
            WatchEvent::Added(obj(0, 3)),
            WatchEvent::Bookmark(Rev(2)),
            WatchEvent::InitialEventsEnd(Rev(2)),
            WatchEvent::Error(ApiError::Expired),
        ] {
            let line = event_line(&e);
            assert!(line.ends_with(b"\n"));
            assert_eq!(line.iter().filter(|b| **b == b'\n').count(), 1, "{e:?}");
        }
    }
}
