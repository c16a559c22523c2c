//! The network between reflectors and API servers: one connection per client at a time, each an ordered
//! queue of messages from server to client.
//!
//! A request waits on its connection until the environment routes it to a server; a broken connection
//! loses whatever was queued on it.
//!
//! Affinity: client-go sends every request of a client over one HTTP/2 connection, so all of them reach
//! the same API server until that connection breaks or is refused; only then may the load balancer pick
//! another one (A10). That is how a relist can land on a lagging server, and how a retry loop can keep
//! meeting the same stuck one.

use std::collections::VecDeque;

use litemap::LiteMap;

use crate::api::{Message, Request};
use crate::types::{ClientId, ServerId};

/// One client's connection.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct Conn {
    pub request: Request,
    /// The server serving it, once routed.
    pub server: Option<ServerId>,
    /// Messages from the server, oldest first.
    pub queue: VecDeque<Message>,
    /// Died silently (A9): nothing more arrives, and the client has not noticed.
    pub dead: bool,
    /// The next watch event on it arrives as a line that does not decode.
    pub garble_next: bool,
}
crate::clone_by_field!(Conn { request, server, queue, dead, garble_next });

impl Conn {
    /// Sent but not yet at any server.
    pub fn unrouted(&self) -> bool {
        self.server.is_none()
    }
}

#[derive(Debug, Default, PartialEq, Eq, Hash)]
pub struct Network {
    conns: LiteMap<ClientId, Conn>,
    /// The server a client's transport is attached to, until it breaks.
    affinity: LiteMap<ClientId, ServerId>,
}
crate::clone_by_field!(Network { conns: map_in_place, affinity: map });

impl Network {
    /// A client sends a request on a fresh connection; an older one of the same client must be closed.
    pub fn open(&mut self, client: ClientId, request: Request) {
        let previous = self.conns.insert(
            client,
            Conn { request, server: None, queue: VecDeque::new(), dead: false, garble_next: false },
        );
        debug_assert!(previous.is_none(), "{client} opened a connection while one was open");
    }

    pub fn conn(&self, client: ClientId) -> Option<&Conn> {
        self.conns.get(&client)
    }

    pub fn conns(&self) -> impl Iterator<Item = (ClientId, &Conn)> {
        self.conns.iter().map(|(c, conn)| (*c, conn))
    }

    /// The servers a client's pending request may reach: its current one, or any after a break.
    pub fn may_route(&self, client: ClientId, server: ServerId) -> bool {
        self.affinity.get(&client).is_none_or(|s| *s == server)
    }

    /// The server a client's transport is attached to.
    pub fn affinity(&self, client: ClientId) -> Option<ServerId> {
        self.affinity.get(&client).copied()
    }

    /// Route a connection's request to a server.
    pub fn route(&mut self, client: ClientId, server: ServerId) -> Option<Request> {
        if !self.may_route(client, server) {
            return None;
        }
        let conn = self.conns.get_mut(&client)?;
        conn.server = Some(server);
        self.affinity.insert(client, server);
        Some(conn.request)
    }

    /// Queue a server's message on its client's connection; a message to a closed or dead one is lost.
    pub fn push(&mut self, client: ClientId, message: Message) {
        if let Some(conn) = self.conns.get_mut(&client).filter(|c| !c.dead) {
            conn.queue.push_back(message);
        }
    }

    /// A connection dies silently (A9): what was queued is lost and nothing more arrives, but the
    /// client still holds it until it notices (or gives up on it).
    pub fn kill(&mut self, client: ClientId) -> bool {
        match self.conns.get_mut(&client) {
            Some(conn) if !conn.dead => {
                conn.dead = true;
                conn.queue.clear();
                true
            }
            _ => false,
        }
    }

    /// Set whether the next watch event on a client's connection arrives garbled.
    pub fn set_garble_next(&mut self, client: ClientId, garble: bool) {
        if let Some(conn) = self.conns.get_mut(&client) {
            conn.garble_next = garble;
        }
    }

    /// Hand the oldest queued message to the client. A message that ends the exchange closes the
    /// connection (a LIST response, a refused WATCH, the end of a stream).
    pub fn deliver(&mut self, client: ClientId) -> Option<Message> {
        let conn = self.conns.get_mut(&client)?;
        let message = conn.queue.pop_front()?;
        if matches!(message, Message::List(_) | Message::WatchRefused(_) | Message::End(_)) {
            self.conns.remove(&client);
        }
        Some(message)
    }

    /// Close a connection from the client side, losing its queue; the transport stays attached.
    pub fn close(&mut self, client: ClientId) -> Option<Conn> {
        self.conns.remove(&client)
    }

    /// Break a connection (or refuse it): its queue is lost and the client's transport detaches, so
    /// the next request may reach any server.
    pub fn break_conn(&mut self, client: ClientId) -> Option<Conn> {
        self.affinity.remove(&client);
        self.conns.remove(&client)
    }

    /// A server went away: every transport attached to it detaches, idle or not.
    pub fn detach_server(&mut self, server: ServerId) {
        self.affinity.retain(|_, s| *s != server);
    }

    /// Every reference to a server under its new name, for the symmetry reduction.
    pub(crate) fn rename_servers(&mut self, rename: impl Fn(ServerId) -> ServerId) {
        for (_, conn) in self.conns.iter_mut() {
            conn.server = conn.server.map(&rename);
        }
        for (_, server) in self.affinity.iter_mut() {
            *server = rename(*server);
        }
    }

    /// Hash the clients routed to or attached to `server`, for the symmetry reduction.
    pub(crate) fn hash_links<H: std::hash::Hasher>(&self, server: ServerId, state: &mut H) {
        use std::hash::Hash;
        for (client, conn) in &self.conns {
            if conn.server == Some(server) {
                (0u8, client).hash(state);
            }
        }
        for (client, s) in &self.affinity {
            if *s == server {
                (1u8, client).hash(state);
            }
        }
    }

    /// Whether nothing is in flight anywhere.
    pub fn idle(&self) -> bool {
        self.conns.values().all(|c| c.queue.is_empty())
    }
}
