//! Decoding a client's HTTP request into the model's [`Request`]: the query parameters of a LIST and a
//! WATCH as the API server reads them. A request the server cannot parse is refused with the reason a real
//! API server gives (400 BadRequest), never a panic.

use listwatch_model::{Continue, Key, ListRv, Request, Rev, WatchFrom};

use super::object::{key_of, rv_of, rv_text};

/// The one collection the model serves.
pub const PATH: &str = "/api/v1/namespaces/default/configmaps";
/// The same collection asked for across namespaces, as a cache that watches every namespace (a
/// controller-runtime manager's default) asks: every object of a world lives in namespace `default`,
/// so the two hold the same objects.
pub const ALL_NAMESPACES: &str = "/api/v1/configmaps";

/// The timeout a WATCH without `timeoutSeconds` gets. A real API server draws one between its
/// `--min-request-timeout` and twice that (30 to 60 minutes by default); the model server does not read
/// it, so any value in that range will do.
const DEFAULT_WATCH_TIMEOUT_SECS: u32 = 1800;

/// Why a request is refused before it reaches a server: the message of a 400 Status.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadRequest(pub String);

fn bad(message: impl Into<String>) -> BadRequest {
    BadRequest(message.into())
}

/// The query parameters that matter here. Unknown ones are ignored, as a real API server ignores them.
#[derive(Default)]
struct Query {
    watch: bool,
    rv: Option<String>,
    rv_match: Option<String>,
    limit: Option<String>,
    cont: Option<String>,
    bookmarks: bool,
    timeout: Option<String>,
    initial_events: Option<bool>,
}

fn flag(name: &str, value: &str) -> Result<bool, BadRequest> {
    match value {
        "true" | "1" => Ok(true),
        "false" | "0" | "" => Ok(false),
        other => Err(bad(format!("{name}: invalid value {other:?}: expected true or false"))),
    }
}

fn query(raw: &str) -> Result<Query, BadRequest> {
    let mut q = Query::default();
    for (name, value) in form_urlencoded::parse(raw.as_bytes()) {
        let value = value.into_owned();
        match name.as_ref() {
            "watch" => q.watch = flag("watch", &value)?,
            "resourceVersion" => q.rv = Some(value),
            "resourceVersionMatch" => q.rv_match = Some(value),
            "limit" => q.limit = Some(value),
            "continue" => q.cont = Some(value),
            "allowWatchBookmarks" => q.bookmarks = flag("allowWatchBookmarks", &value)?,
            "timeoutSeconds" => q.timeout = Some(value),
            "sendInitialEvents" => q.initial_events = Some(flag("sendInitialEvents", &value)?),
            _ => {}
        }
    }
    Ok(q)
}

fn revision(value: &str) -> Result<Rev, BadRequest> {
    rv_of(value).ok_or_else(|| bad(format!("resourceVersion: invalid value {value:?}")))
}

/// A LIST's (or a streaming list's) resourceVersion and resourceVersionMatch (A2).
fn list_rv(q: &Query) -> Result<ListRv, BadRequest> {
    let rv = q.rv.as_deref().unwrap_or("");
    match (rv, q.rv_match.as_deref().unwrap_or("")) {
        ("", "") => Ok(ListRv::Consistent),
        ("", m) => {
            Err(bad(format!("resourceVersionMatch: {m:?} is forbidden unless resourceVersion is set")))
        }
        ("0", "" | "NotOlderThan") => Ok(ListRv::Any),
        (rv, "" | "NotOlderThan") => Ok(ListRv::NotOlderThan(revision(rv)?)),
        ("0", "Exact") => Err(bad("resourceVersionMatch: \"Exact\" is forbidden for resourceVersion \"0\"")),
        (rv, "Exact") => Ok(ListRv::Exact(revision(rv)?)),
        (_, m) => Err(bad(format!("resourceVersionMatch: unsupported value {m:?}"))),
    }
}

fn timeout_secs(q: &Query) -> Result<u32, BadRequest> {
    match q.timeout.as_deref() {
        None => Ok(DEFAULT_WATCH_TIMEOUT_SECS),
        Some(t) => t.parse().map_err(|_| bad(format!("timeoutSeconds: invalid value {t:?}"))),
    }
}

/// The continue token this codec hands out: the snapshot revision and the last key served.
pub fn encode_continue(c: Continue) -> String {
    format!("lw.{}.{}", rv_text(c.rv), c.after.0)
}

fn decode_continue(token: &str) -> Result<Continue, BadRequest> {
    let invalid =
        || bad(format!("continue: invalid value {token:?}: not a continue token this server issued"));
    let mut parts = token.strip_prefix("lw.").ok_or_else(invalid)?.split('.');
    let rv = parts.next().and_then(rv_of).ok_or_else(invalid)?;
    let after = parts.next().and_then(|p| p.parse().ok()).ok_or_else(invalid)?;
    if parts.next().is_some() {
        return Err(invalid());
    }
    Ok(Continue { rv, after: Key(after) })
}

/// The model request an HTTP request stands for.
pub fn decode(method: &str, path: &str, raw_query: Option<&str>) -> Result<Request, BadRequest> {
    if method != "GET" {
        return Err(bad(format!("{method} {path}: only GET (LIST and WATCH) is served here")));
    }
    if let Some(name) = path.strip_prefix(PATH).and_then(|rest| rest.strip_prefix('/')) {
        let what = key_of(name).map_or("an object".to_string(), |k| k.to_string());
        return Err(bad(format!("GET {path}: reading {what} alone is not served here, only LIST and WATCH")));
    }
    if path != PATH && path != ALL_NAMESPACES {
        return Err(bad(format!("{path}: not served here; the one collection is {PATH}")));
    }
    let q = query(raw_query.unwrap_or(""))?;
    if q.watch {
        if q.limit.is_some() || q.cont.is_some() {
            return Err(bad("limit and continue are not allowed on a watch"));
        }
        let timeout_secs = timeout_secs(&q)?;
        if q.initial_events == Some(true) {
            // A12: the API server requires resourceVersionMatch=NotOlderThan with sendInitialEvents
            // (unless resourceVersion is unset); the model server refuses a streaming list without
            // bookmarks itself, with the same 400.
            if q.rv.as_deref().is_some_and(|rv| !rv.is_empty())
                && q.rv_match.as_deref() != Some("NotOlderThan")
            {
                return Err(bad("resourceVersionMatch: \"NotOlderThan\" is required with sendInitialEvents"));
            }
            // With sendInitialEvents an unset resourceVersion may carry NotOlderThan: a consistent
            // streaming list (A12; client-go sends it so before its first sync).
            let rv = match q.rv.as_deref().unwrap_or("") {
                "" => ListRv::Consistent,
                _ => list_rv(&q)?,
            };
            return Ok(Request::WatchList { rv, timeout_secs, bookmarks: q.bookmarks });
        }
        if q.rv_match.is_some() {
            return Err(bad("resourceVersionMatch is forbidden for watch unless sendInitialEvents is set"));
        }
        // A3: "" and "0" both start at the server's current state, with synthetic ADDEDs for it first.
        let from = match q.rv.as_deref().unwrap_or("") {
            "" | "0" => WatchFrom::Now,
            rv => WatchFrom::Rv(revision(rv)?),
        };
        return Ok(Request::Watch { from, timeout_secs, bookmarks: q.bookmarks });
    }
    if q.initial_events.is_some() {
        return Err(bad("sendInitialEvents is forbidden for list"));
    }
    let cont = q.cont.as_deref().filter(|c| !c.is_empty()).map(decode_continue).transpose()?;
    if cont.is_some() && q.rv.as_deref().is_some_and(|rv| !rv.is_empty()) {
        return Err(bad("resourceVersion: specifying resource version is not allowed when using continue"));
    }
    let rv = list_rv(&q)?;
    match q.limit.as_deref() {
        None | Some("0") if cont.is_none() => Ok(Request::List { rv }),
        None => Err(bad("continue: a continue token needs a limit")),
        Some(limit) => {
            let limit: u64 = limit.parse().map_err(|_| bad(format!("limit: invalid value {limit:?}")))?;
            // The model's pages hold at most 255 objects; its worlds hold a handful of keys, so a larger
            // limit (kube-runtime asks for 500) serves the same single page.
            let limit = u8::try_from(limit).unwrap_or(u8::MAX).max(1);
            Ok(Request::ListPage { rv, limit, cont })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(query: &str) -> Result<Request, BadRequest> {
        decode("GET", PATH, Some(query))
    }

    #[test]
    fn kube_runtime_requests_decode() {
        assert_eq!(
            get("&limit=500"),
            Ok(Request::ListPage { rv: ListRv::Consistent, limit: 255, cont: None })
        );
        assert_eq!(
            get("&limit=500&resourceVersion=0&resourceVersionMatch=NotOlderThan"),
            Ok(Request::ListPage { rv: ListRv::Any, limit: 255, cont: None })
        );
        assert_eq!(
            get("&limit=2&continue=lw.7.1"),
            Ok(Request::ListPage {
                rv: ListRv::Consistent,
                limit: 2,
                cont: Some(Continue { rv: Rev(6), after: Key(1) })
            })
        );
        assert_eq!(
            get("&watch=true&timeoutSeconds=290&allowWatchBookmarks=true&resourceVersion=12"),
            Ok(Request::Watch { from: WatchFrom::Rv(Rev(11)), timeout_secs: 290, bookmarks: true })
        );
        assert_eq!(
            get("&watch=true&timeoutSeconds=290&allowWatchBookmarks=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&resourceVersion=0"),
            Ok(Request::WatchList { rv: ListRv::Any, timeout_secs: 290, bookmarks: true })
        );
    }

    #[test]
    fn client_go_requests_decode() {
        // WatchListClient's first streaming list: no resourceVersion, NotOlderThan (A12: consistent).
        assert_eq!(
            get("allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&timeoutSeconds=583&watch=true"),
            Ok(Request::WatchList { rv: ListRv::Consistent, timeout_secs: 583, bookmarks: true })
        );
        assert_eq!(
            get("limit=500&resourceVersion=0"),
            Ok(Request::ListPage { rv: ListRv::Any, limit: 255, cont: None })
        );
    }

    #[test]
    fn malformed_requests_are_400s() {
        for q in [
            "&resourceVersion=banana",
            "&limit=-1",
            "&limit=2&continue=garbage",
            "&limit=2&continue=lw.7.1&resourceVersion=5",
            "&watch=maybe",
            "&watch=true&sendInitialEvents=true&resourceVersion=5",
            "&resourceVersionMatch=Exact",
            "&resourceVersion=0&resourceVersionMatch=Exact",
        ] {
            assert!(get(q).is_err(), "{q} should be refused");
        }
        assert!(decode("POST", PATH, None).is_err());
        assert!(decode("GET", "/api/v1/namespaces/default/pods", None).is_err());
        assert!(decode("GET", &format!("{PATH}/a"), None).is_err());
        assert!(decode("GET", "/api/v1/namespaces/other/configmaps", None).is_err());
        // Across namespaces it is the same collection.
        assert_eq!(
            decode("GET", ALL_NAMESPACES, Some("resourceVersion=0")),
            decode("GET", PATH, Some("resourceVersion=0"))
        );
    }

    #[test]
    fn continue_tokens_round_trip() {
        let c = Continue { rv: Rev(9), after: Key(27) };
        assert_eq!(decode_continue(&encode_continue(c)), Ok(c));
    }
}
