//! The network between reflectors and API servers: one connection per client at a time, each an ordered
//! queue of messages from server to client.
//!
//! A request waits on its connection until the environment routes it to a server (load balancing is a
//! choice the checker explores, A10); a broken connection loses whatever was queued on it.

use std::collections::{BTreeMap, VecDeque};

use crate::api::{Message, Request};
use crate::types::{ClientId, ServerId};

/// One client's connection.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Conn {
    pub request: Request,
    /// The server serving it, once routed.
    pub server: Option<ServerId>,
    /// Messages from the server, oldest first.
    pub queue: VecDeque<Message>,
}

impl Conn {
    /// Sent but not yet at any server.
    pub fn unrouted(&self) -> bool {
        self.server.is_none()
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Network {
    conns: BTreeMap<ClientId, Conn>,
}

impl Network {
    /// A client sends a request on a fresh connection; an older one of the same client must be closed.
    pub fn open(&mut self, client: ClientId, request: Request) {
        let previous = self.conns.insert(client, Conn { request, server: None, queue: VecDeque::new() });
        debug_assert!(previous.is_none(), "{client} opened a connection while one was open");
    }

    pub fn conn(&self, client: ClientId) -> Option<&Conn> {
        self.conns.get(&client)
    }

    pub fn conns(&self) -> impl Iterator<Item = (ClientId, &Conn)> {
        self.conns.iter().map(|(c, conn)| (*c, conn))
    }

    /// Route a connection's request to a server.
    pub fn route(&mut self, client: ClientId, server: ServerId) -> Option<Request> {
        let conn = self.conns.get_mut(&client)?;
        conn.server = Some(server);
        Some(conn.request)
    }

    /// Queue a server's message on its client's connection; a message to a closed one is lost.
    pub fn push(&mut self, client: ClientId, message: Message) {
        if let Some(conn) = self.conns.get_mut(&client) {
            conn.queue.push_back(message);
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

    /// Close (client side) or break a connection, losing its queue.
    pub fn close(&mut self, client: ClientId) -> Option<Conn> {
        self.conns.remove(&client)
    }

    /// Break every connection to a server (a restart). Returns the clients cut off.
    pub fn break_server(&mut self, server: ServerId) -> Vec<ClientId> {
        let cut: Vec<ClientId> =
            self.conns.iter().filter(|(_, c)| c.server == Some(server)).map(|(id, _)| *id).collect();
        for client in &cut {
            self.conns.remove(client);
        }
        cut
    }

    /// Whether nothing is in flight anywhere.
    pub fn idle(&self) -> bool {
        self.conns.values().all(|c| c.queue.is_empty())
    }
}
