//! What a client under test sends and gets, turned into the operations of a conformance session and
//! back: a model [`Request`] becomes an [`ApiOp`] the REST driver sends to the server, and what the
//! server answered or sent on a watch becomes the model [`Message`] the client is handed. Objects keep
//! what the properties judge of them: key, incarnation (the revision that created it, as the model's
//! UIDs are), RV and version.

use listwatch_model::{
    ApiError, Continue, Key, ListResponse, ListRv, Message, Object, Request, Rev, Uid, WatchEnd, WatchEvent,
    WatchFrom,
};

use crate::conformance::apiserver::sequence::{ApiOp, Rv};
use crate::conformance::apiserver::transcript::{ApiAnswer, ApiMsg, Obj};

/// The session's number for a client's watch: its client's number. Each client has one connection
/// at a time, as the model's network plays it, so its new WATCH stops its last one first.
pub fn watch_id(client: listwatch_model::ClientId) -> u8 {
    client.0
}

fn rv(rv: ListRv) -> Rv {
    match rv {
        ListRv::Consistent => Rv::Consistent,
        ListRv::Any => Rv::Any,
        ListRv::NotOlderThan(r) => Rv::NotOlderThan(r.0),
        ListRv::Exact(r) => Rv::Exact(r.0),
    }
}

/// The operation that sends `request` of `client`. A page with a `continue` continues the last LIST, the one whose
/// token the client holds. Watches carry no `timeoutSeconds`: the client's clock is its own, and the
/// server's would end the watch in real time. A streaming list always asks for bookmarks, as every
/// client that sends one does (A12: without them it does not validate).
pub fn op(request: &Request, client: listwatch_model::ClientId) -> ApiOp {
    let id = watch_id(client);
    match *request {
        Request::List { rv: r } => ApiOp::List { rv: rv(r), limit: None },
        Request::ListPage { rv: r, limit, cont: None } => ApiOp::List { rv: rv(r), limit: Some(limit) },
        Request::ListPage { limit, cont: Some(_), .. } => ApiOp::Continue { limit },
        Request::Watch { from, bookmarks, .. } => ApiOp::Watch {
            id,
            from: match from {
                WatchFrom::Now => None,
                WatchFrom::Rv(r) => Some(r.0),
            },
            unset: false,
            bookmarks,
            timeout: false,
        },
        Request::WatchList { rv: r, .. } => ApiOp::WatchList { id, rv: rv(r), timeout: false },
    }
}

/// The model's object for the server's.
pub fn object(o: &Obj) -> Object {
    Object { key: Key(o.key), uid: Uid(Rev(o.created)), rv: Rev(o.rv), version: o.version }
}

/// The error a status code stands for. A 504 is A2's too-large RV: the only one a list or watch of
/// these runs meets from a server (a gateway's 504 has no place on loopback).
pub fn error(code: u16) -> ApiError {
    match code {
        410 => ApiError::Expired,
        504 => ApiError::TooLargeResourceVersion,
        429 => ApiError::TooManyRequests,
        400 => ApiError::BadRequest,
        401 => ApiError::Unauthorized,
        403 => ApiError::Forbidden,
        404 => ApiError::NotFound,
        422 => ApiError::Invalid,
        503 => ApiError::Unavailable,
        _ => ApiError::InternalError,
    }
}

/// What the client is handed for the answer to its request: a LIST's result, a refused WATCH, or
/// nothing (a WATCH the server took: its stream follows).
pub fn answer(answer: &ApiAnswer, list: bool) -> Option<Message> {
    match answer {
        ApiAnswer::List { rv, items, cont } => Some(Message::List(Ok(ListResponse {
            rv: Rev(*rv),
            items: items.iter().map(object).collect(),
            cont: cont.map(|t| Continue { rv: Rev(t.rv), after: Key(t.after) }),
        }))),
        ApiAnswer::Failed { code } if list => Some(Message::List(Err(error(*code)))),
        ApiAnswer::Failed { code } => Some(Message::WatchRefused(error(*code))),
        // A continue with no token to go on: the client asked for a page of a list it does not have.
        ApiAnswer::Nothing if list => Some(Message::List(Err(ApiError::BadRequest))),
        _ => None,
    }
}

/// A message the server sent on the client's watch.
pub fn message(m: &ApiMsg) -> Message {
    match m {
        ApiMsg::Added(o) => Message::Event(WatchEvent::Added(object(o))),
        ApiMsg::Modified(o) => Message::Event(WatchEvent::Modified(object(o))),
        ApiMsg::Deleted(o) => Message::Event(WatchEvent::Deleted(object(o))),
        ApiMsg::InitialEventsEnd { rv } => Message::Event(WatchEvent::InitialEventsEnd(Rev(*rv))),
        // A bookmark below an event already sent goes to the client as sent: judging it is the
        // properties' job (A8), not the wire's.
        ApiMsg::Bookmark { rv } | ApiMsg::BadBookmark { rv, .. } => {
            Message::Event(WatchEvent::Bookmark(Rev(*rv)))
        }
        ApiMsg::Error { code } => Message::Event(WatchEvent::Error(error(*code))),
        ApiMsg::Closed => Message::End(WatchEnd::Closed),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conformance::apiserver::transcript::Token;

    #[test]
    fn requests_become_the_operations_that_send_them() {
        let page = Request::ListPage { rv: ListRv::Exact(Rev(4)), limit: 1, cont: None };
        let c0 = listwatch_model::ClientId(0);
        assert_eq!(op(&page, c0), ApiOp::List { rv: Rv::Exact(4), limit: Some(1) });
        let next = Request::ListPage {
            rv: ListRv::Consistent,
            limit: 1,
            cont: Some(Continue { rv: Rev(4), after: Key(0) }),
        };
        assert_eq!(op(&next, c0), ApiOp::Continue { limit: 1 });
        let watch = Request::Watch { from: WatchFrom::Rv(Rev(7)), timeout_secs: 300, bookmarks: true };
        assert_eq!(
            op(&watch, c0),
            ApiOp::Watch { id: 0, from: Some(7), unset: false, bookmarks: true, timeout: false }
        );
        // Each client's watch is its own: the second client's is watch 1.
        let streaming = Request::WatchList { rv: ListRv::Any, timeout_secs: 300, bookmarks: true };
        assert_eq!(
            op(&streaming, listwatch_model::ClientId(1)),
            ApiOp::WatchList { id: 1, rv: Rv::Any, timeout: false }
        );
    }

    #[test]
    fn answers_become_what_the_client_is_handed() {
        let o = Obj { key: 1, created: 3, rv: 5, version: 2 };
        let list = ApiAnswer::List { rv: 6, items: vec![o], cont: Some(Token { rv: 6, after: 1 }) };
        let Some(Message::List(Ok(l))) = answer(&list, true) else { panic!("a list") };
        assert_eq!(l.items, vec![Object { key: Key(1), uid: Uid(Rev(3)), rv: Rev(5), version: 2 }]);
        assert_eq!(l.cont, Some(Continue { rv: Rev(6), after: Key(1) }));
        assert_eq!(
            answer(&ApiAnswer::Failed { code: 410 }, true),
            Some(Message::List(Err(ApiError::Expired)))
        );
        assert_eq!(
            answer(&ApiAnswer::Failed { code: 410 }, false),
            Some(Message::WatchRefused(ApiError::Expired))
        );
        assert_eq!(answer(&ApiAnswer::WatchOpened, false), None);
        assert_eq!(message(&ApiMsg::Closed), Message::End(WatchEnd::Closed));
        assert_eq!(
            message(&ApiMsg::Error { code: 410 }),
            Message::Event(WatchEvent::Error(ApiError::Expired))
        );
    }
}
