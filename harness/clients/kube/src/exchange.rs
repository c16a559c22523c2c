//! The HTTP side of one client's connection to the model's API servers: a `tower::Service` that
//! `kube::Client::new` takes, and the response bodies it hands back. A request becomes an
//! [`Effect::Send`] for the system to route; what the server sends comes back through
//! [`Exchange::apply`], as the HTTP operations `listwatch_wire::http` spells every input as: a response
//! (a LIST, a refused WATCH) or lines on an open watch body. A body the client drops while the server
//! still holds the connection is an [`Effect::Cancel`].
//!
//! Everything is shared through one mutex, and runs on the client's own current-thread runtime.

use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{Response, StatusCode};
use http_body::{Body, Frame, SizeHint};
use listwatch_model::{Effect, Request, WatchEvent};
use listwatch_wire::http::Http;
use listwatch_wire::{request, response};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

type BoxError = Box<dyn std::error::Error + Send + Sync>;
type Reply = Result<Response<WireBody>, BoxError>;

/// One chunk of a body, with the watch event it carries, if any.
struct Chunk {
    bytes: Result<Bytes, io::ErrorKind>,
    event: Option<WatchEvent>,
}

/// The connection the client's latest request opened.
struct Open {
    id: u64,
    request: Request,
    reply: Option<oneshot::Sender<Reply>>,
    body: Option<mpsc::UnboundedSender<Chunk>>,
    /// The server ended it (or it broke): a body dropped after this cancels nothing.
    over: bool,
}

/// What the wire saw, shared by the service, the bodies and the client adapter.
#[derive(Default)]
pub struct Exchange {
    /// Effects not yet polled, in order.
    pub effects: VecDeque<Effect>,
    open: Option<Open>,
    next_id: u64,
    /// Bumped by every poll of a body and every request: the adapter runs the runtime until it stops
    /// moving.
    pub activity: u64,
    /// Since when the client has been waiting on the open watch body with nothing to read (its idle
    /// timeout runs from there).
    pub awaiting_since: Option<Instant>,
    /// Watch events the client took off a body, in order, not yet folded by the adapter.
    pub taken: Vec<WatchEvent>,
    /// Chunks sent on the open connection's body that the client has not read yet, and whether the
    /// end of that body waits unread too.
    pub unread: usize,
    pub end_unread: bool,
    /// The RV of the initial-events-end bookmark the client took last, until its stream's `InitDone`
    /// reads it.
    pub initial_end: Option<listwatch_model::Rev>,
}

impl std::fmt::Debug for Exchange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Exchange")
            .field("open", &self.open_request())
            .field("effects", &self.effects)
            .finish()
    }
}

/// The shared exchange.
pub type Shared = Arc<Mutex<Exchange>>;

/// Lock the exchange; a panic elsewhere while it was held leaves it usable (the run reports that panic).
pub fn lock(shared: &Shared) -> MutexGuard<'_, Exchange> {
    shared.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A whole response: a status, its body, and when to retry (A14's 429).
fn whole_response(
    id: Option<u64>,
    status: u16,
    body: Vec<u8>,
    retry_after: Option<u32>,
) -> Response<WireBody> {
    let (tx, rx) = mpsc::unbounded_channel();
    let _ = tx.send(Chunk { bytes: Ok(Bytes::from(body)), event: None });
    let mut r = Response::new(WireBody { id, rx, shared: None });
    *r.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    if let Some(secs) = retry_after {
        r.headers_mut().insert(http::header::RETRY_AFTER, http::HeaderValue::from(secs));
    }
    r
}

fn transport_error(kind: io::ErrorKind) -> BoxError {
    Box::new(io::Error::new(kind, format!("connection to the API server: {kind}")))
}

impl Exchange {
    fn open(&mut self, request: Request) -> oneshot::Receiver<Reply> {
        let (tx, rx) = oneshot::channel();
        self.next_id += 1;
        self.activity += 1;
        self.awaiting_since = None;
        (self.unread, self.end_unread) = (0, false);
        self.open = Some(Open { id: self.next_id, request, reply: Some(tx), body: None, over: false });
        self.effects.push_back(Effect::Send(request));
        rx
    }

    /// The request the open connection carries.
    pub fn open_request(&self) -> Option<Request> {
        self.open.as_ref().filter(|o| !o.over).map(|o| o.request)
    }

    /// The watch's response headers: a 200 with a body that stays open.
    pub fn opened(&mut self, shared: &Shared) {
        let Some(open) = self.open.as_mut().filter(|o| !o.over) else { return };
        if let Some(reply) = open.reply.take() {
            let (tx, rx) = mpsc::unbounded_channel();
            open.body = Some(tx);
            let body = WireBody { id: Some(open.id), rx, shared: Some(shared.clone()) };
            let _ = reply.send(Ok(Response::new(body)));
        }
    }

    /// Carry out one HTTP operation on the current connection.
    pub fn apply(&mut self, op: Http, shared: &Shared) {
        match op {
            Http::Respond { status, body, retry_after } => self.respond(status, body, retry_after),
            Http::Open => self.opened(shared),
            Http::Line { bytes, event } => self.push(Chunk { bytes: Ok(Bytes::from(bytes)), event }),
            Http::End => self.finish(),
            Http::Reset => self.broken(),
            Http::Refuse => self.fail(io::ErrorKind::ConnectionRefused),
            Http::Cut { status, body, length } => self.cut(status, body, length),
        }
    }

    /// The connection broke under the client: a pending request fails, an open body ends in an error.
    fn broken(&mut self) {
        let Some(open) = self.open.as_mut().filter(|o| !o.over) else { return };
        if let Some(reply) = open.reply.take() {
            let _ = reply.send(Err(transport_error(io::ErrorKind::ConnectionReset)));
        } else if let Some(body) = &open.body {
            let _ = body.send(Chunk { bytes: Err(io::ErrorKind::ConnectionReset), event: None });
        }
        self.finish();
    }

    /// The waiting request fails with a transport error.
    fn fail(&mut self, kind: io::ErrorKind) {
        let Some(open) = self.open.as_mut().filter(|o| !o.over) else { return };
        match open.reply.take() {
            Some(reply) => {
                let _ = reply.send(Err(transport_error(kind)));
                self.finish();
            }
            None => self.broken(),
        }
    }

    fn respond(&mut self, status: u16, body: Vec<u8>, retry_after: Option<u32>) {
        let Some(open) = self.open.as_mut().filter(|o| !o.over) else { return };
        let Some(reply) = open.reply.take() else {
            // A response after the headers cannot happen on the wire (A4 makes it an ERROR event).
            self.broken();
            return;
        };
        let _ = reply.send(Ok(whole_response(Some(open.id), status, body, retry_after)));
        self.finish();
    }

    /// The headers and the first bytes of a body; then the connection breaks (A15).
    fn cut(&mut self, status: u16, body: Vec<u8>, length: u64) {
        let Some(open) = self.open.as_mut().filter(|o| !o.over) else { return };
        let Some(reply) = open.reply.take() else {
            self.broken();
            return;
        };
        let (tx, rx) = mpsc::unbounded_channel();
        let _ = tx.send(Chunk { bytes: Ok(Bytes::from(body)), event: None });
        let _ = tx.send(Chunk { bytes: Err(io::ErrorKind::UnexpectedEof), event: None });
        let mut r = Response::new(WireBody { id: Some(open.id), rx, shared: None });
        *r.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
        r.headers_mut().insert(http::header::CONTENT_LENGTH, http::HeaderValue::from(length));
        let _ = reply.send(Ok(r));
        self.finish();
    }

    fn push(&mut self, chunk: Chunk) {
        if let Some(body) = self.open.as_ref().filter(|o| !o.over).and_then(|o| o.body.as_ref()) {
            if body.send(chunk).is_ok() {
                self.unread += 1;
            }
        }
    }

    /// The server is done with the connection: the body ends once its queued chunks are read.
    fn finish(&mut self) {
        if let Some(open) = self.open.as_mut() {
            self.end_unread |= open.body.is_some();
            open.over = true;
            open.body = None;
            open.reply = None;
        }
        self.awaiting_since = None;
    }

    fn dropped(&mut self, id: u64) {
        if self.open.as_ref().is_some_and(|o| o.id == id) {
            (self.unread, self.end_unread) = (0, false);
        }
        if self.open.as_ref().is_some_and(|o| o.id == id && !o.over) {
            self.effects.push_back(Effect::Cancel);
            self.finish();
            self.end_unread = false;
        }
    }
}

/// A response body: the chunks the server sent, ending when the server is done with the connection.
pub struct WireBody {
    id: Option<u64>,
    rx: mpsc::UnboundedReceiver<Chunk>,
    /// Set on a watch body: its polls and its drop are observed.
    shared: Option<Shared>,
}

impl std::fmt::Debug for WireBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WireBody").field("id", &self.id).finish_non_exhaustive()
    }
}

impl Body for WireBody {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        let polled = self.rx.poll_recv(cx);
        if let Some(shared) = &self.shared {
            let mut ex = lock(shared);
            ex.activity += 1;
            let this = ex.open.as_ref().is_some_and(|o| Some(o.id) == self.id);
            let current = this && ex.open.as_ref().is_some_and(|o| !o.over);
            match &polled {
                Poll::Ready(Some(_)) if this => ex.unread = ex.unread.saturating_sub(1),
                Poll::Ready(None) if this => ex.end_unread = false,
                _ => {}
            }
            match &polled {
                Poll::Ready(Some(chunk)) => {
                    ex.awaiting_since = None;
                    if let Some(WatchEvent::InitialEventsEnd(rv)) = chunk.event {
                        ex.initial_end = Some(rv);
                    }
                    ex.taken.extend(chunk.event);
                }
                Poll::Pending if current && ex.awaiting_since.is_none() => {
                    ex.awaiting_since = Some(Instant::now());
                }
                _ => {}
            }
        }
        match polled {
            Poll::Ready(Some(Chunk { bytes: Ok(b), .. })) => Poll::Ready(Some(Ok(Frame::data(b)))),
            Poll::Ready(Some(Chunk { bytes: Err(kind), .. })) => {
                Poll::Ready(Some(Err(io::Error::new(kind, "connection to the API server broke"))))
            }
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::default()
    }
}

impl Drop for WireBody {
    fn drop(&mut self) {
        if let (Some(shared), Some(id)) = (&self.shared, self.id) {
            lock(shared).dropped(id);
        }
    }
}

/// The service `kube::Client::new` takes.
#[derive(Clone)]
pub struct Wire {
    pub shared: Shared,
}

impl std::fmt::Debug for Wire {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Wire")
    }
}

impl<B> tower::Service<http::Request<B>> for Wire {
    type Response = Response<WireBody>;
    type Error = BoxError;
    type Future = Pin<Box<dyn std::future::Future<Output = Reply> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        let mut ex = lock(&self.shared);
        ex.activity += 1;
        match request::decode(req.method().as_str(), req.uri().path(), req.uri().query()) {
            Err(request::BadRequest(message)) => {
                // Never reaches a server, as with a real API server's 400 for a malformed query.
                let r = whole_response(None, 400, response::status_body(400, "BadRequest", &message), None);
                Box::pin(async move { Ok(r) })
            }
            Ok(request) => {
                let rx = ex.open(request);
                Box::pin(async move {
                    rx.await.unwrap_or_else(|_| Err(transport_error(io::ErrorKind::ConnectionAborted)))
                })
            }
        }
    }
}
