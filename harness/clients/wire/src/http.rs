//! What reaches a client under test, as the HTTP operations its transport carries out: the one mapping
//! from the model's [`Input`] to the wire, so that every client over HTTP gets the same bytes for the same
//! step. A transport keeps the connection's state (a request waiting for its response, or an open body)
//! and applies these in order; an operation that does not fit that state does nothing (a body line on a
//! connection the client already dropped, say).

use listwatch_model::{ApiError, Input, Message, WatchEnd, WatchEvent};

use crate::response;

/// One thing the transport does to the client's current request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Http {
    /// The whole response to the waiting request: a LIST page, or an error as an HTTP status with a
    /// `Status` body (A4: before a watch opened). `retry_after` in seconds, as a 429 carries it (A14).
    Respond { status: u16, body: Vec<u8>, retry_after: Option<u32> },
    /// The waiting request (a WATCH) gets its 200 headers and a body that stays open. Nothing when a
    /// body is already open.
    Open,
    /// One line on the open body, newline included, and the event it carries (none for a line that
    /// does not decode).
    Line { bytes: Vec<u8>, event: Option<WatchEvent> },
    /// The server ends the open body cleanly: the client reads what is queued, then the end.
    End,
    /// The connection resets: a waiting request fails with a transport error; an open body's next read
    /// fails, and whatever was queued on it is lost.
    Reset,
    /// The connection is refused: the waiting request fails with a transport error.
    Refuse,
    /// The waiting request gets its headers (`status`, a `Content-Length` of `length`) and the first
    /// bytes of the body, `body`; then the connection breaks before the rest (A15).
    Cut { status: u16, body: Vec<u8>, length: u64 },
}

/// What `input` does on the wire, in order.
pub fn of_input(input: &Input) -> Vec<Http> {
    match input {
        Input::Message(m) => of_message(m),
        Input::Broken => vec![Http::Reset],
        Input::Opened => vec![Http::Open],
        Input::Garbled => vec![Http::Open, Http::Line { bytes: garbled_line(), event: None }],
        // A timer, and the consumer behind the cache, are the client's own: nothing crosses the wire.
        Input::Timer(_) | Input::Hold | Input::Release => vec![],
    }
}

/// What a message from the server does on the wire.
pub fn of_message(message: &Message) -> Vec<Http> {
    match message {
        Message::List(Ok(page)) => {
            vec![Http::Respond { status: 200, body: response::list(page), retry_after: None }]
        }
        Message::List(Err(e)) | Message::WatchRefused(e) => vec![refusal(*e)],
        Message::Event(event) => {
            vec![Http::Open, Http::Line { bytes: response::event_line(event), event: Some(*event) }]
        }
        Message::End(WatchEnd::Disconnected) => vec![Http::Reset],
        // kubernetes#104171: a watch may end before its first event: a 200 with an empty body.
        Message::End(WatchEnd::Closed | WatchEnd::ClientTimeout) => vec![Http::Open, Http::End],
    }
}

/// A request refused before it opened (A4: an HTTP status, or a transport error).
fn refusal(e: ApiError) -> Http {
    match e {
        ApiError::ConnectionRefused => Http::Refuse,
        ApiError::Disconnected => Http::Reset,
        ApiError::Truncated => {
            let (body, length) = response::truncated_list();
            Http::Cut { status: 200, body, length }
        }
        e => {
            let status = response::status_of(e).0;
            let retry_after = e.retry_after().then_some(1);
            Http::Respond { status, body: response::error_json(e).to_string().into_bytes(), retry_after }
        }
    }
}

/// A watch line mangled on the way: not JSON, so no decoder takes it for an event.
pub fn garbled_line() -> Vec<u8> {
    b"{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"ConfigMap\",\x00\x17}\n".to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;
    use listwatch_model::{ListResponse, Rev};

    #[test]
    fn a_refused_watch_is_a_status_and_429_says_when_to_retry() {
        let ops = of_message(&Message::WatchRefused(ApiError::TooManyRequests));
        assert!(matches!(&ops[..], [Http::Respond { status: 429, retry_after: Some(1), .. }]));
        let ops = of_message(&Message::List(Err(ApiError::Expired)));
        assert!(matches!(&ops[..], [Http::Respond { status: 410, retry_after: None, .. }]));
        assert_eq!(of_message(&Message::List(Err(ApiError::ConnectionRefused))), vec![Http::Refuse]);
        let ops = of_message(&Message::WatchRefused(ApiError::UnavailableRetryAfter));
        assert!(matches!(&ops[..], [Http::Respond { status: 503, retry_after: Some(1), .. }]));
        let ops = of_message(&Message::WatchRefused(ApiError::Unavailable));
        assert!(matches!(&ops[..], [Http::Respond { status: 503, retry_after: None, .. }]));
        let ops = of_message(&Message::List(Err(ApiError::Truncated)));
        assert!(matches!(&ops[..], [Http::Cut { status: 200, .. }]));
    }

    #[test]
    fn events_open_the_body_and_a_close_ends_it() {
        let ops = of_message(&Message::Event(WatchEvent::Bookmark(Rev(3))));
        assert!(matches!(&ops[..], [Http::Open, Http::Line { event: Some(WatchEvent::Bookmark(_)), .. }]));
        assert_eq!(of_message(&Message::End(WatchEnd::Closed)), vec![Http::Open, Http::End]);
        assert_eq!(of_input(&Input::Broken), vec![Http::Reset]);
        let page = ListResponse { rv: Rev(1), items: vec![], cont: None };
        assert!(matches!(&of_message(&Message::List(Ok(page)))[..], [Http::Respond { status: 200, .. }]));
    }

    #[test]
    fn a_garbled_line_is_not_json() {
        assert!(serde_json::from_slice::<serde_json::Value>(&garbled_line()).is_err());
    }
}
