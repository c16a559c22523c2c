//! One seed's run of the clients under test (one, or several side by side: `--reflectors`) against a
//! real server: the seed draws the world's steps (writes, faults at the wire, each client's timers,
//! which answer or message reaches which client next), the server answers for real, and every step's
//! observations and what each client shows after it make a [`Frame`] the properties judge, as they
//! judge the model's runs.
//!
//! It is not deterministic: what the server answers, and when its watch events arrive, is the
//! server's. The seed fixes the order of the world's choices only. What the run saw is kept as frames
//! (`.frames.json`), judged again from the file alone.
//!
//! Each client's connection is the model network's (one connection at a time, C5; a watch of its own
//! on the session, and a continue token of its own for its pages): a request goes to the server when
//! the step that answers it is drawn, so writes may come between the two, as on a real network. The
//! faults act there, at each client: a connection broken (`disconnect`), a connection that goes
//! silent until the client's transport notices (A9, `silent-death`), a client whose consumer falls
//! behind (C7, `slow-consumer`), a watch line that reaches the client garbled (`garbled-line`, as the
//! model's network garbles one: the next event the server sent, the rest of the connection as it
//! was; armed only once that event has come, so a connection that dies first cannot lose it), and a
//! compaction of the server's etcd (E4), which the server then answers with its own 410s.

use std::collections::VecDeque;
use std::time::Duration;

use listwatch_model::{
    ApiError, Client, ClientId, ClientView, Clients, Config, Connection, Effect, FaultKind, Input, Key,
    Message, Observed, Request, Rev, WatchEvent,
};
use listwatch_properties::{judge_frames, Environment, Frame, Property, Shown, Violation};

use super::wire;
use crate::conformance::apiserver::sequence::ApiOp;
use crate::conformance::apiserver::server::Session;
use crate::conformance::apiserver::transcript::ApiAnswer;
use crate::conformance::SideError;
use crate::sim::rng::Rng;

/// How long the heal phase waits for the server's next message before it takes the client's watch
/// to have everything (after a barrier that saw the server's cache hold the last write).
const SETTLE_WAIT: Duration = Duration::from_millis(300);

/// How one run is set up.
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    pub seed: u64,
    /// Steps with writes and faults; the heal phase that follows takes at most four times as many.
    pub steps: u32,
    /// Objects k00.. the world writes.
    pub keys: u8,
    /// The faults a step may draw; of them, only the kinds [`super::takes`] names have a step here.
    pub faults: listwatch_model::FaultKinds,
    /// The server's etcd is the run's to compact (a budget, as a campaign's compactions: not a kind).
    pub compactions: bool,
    /// Flaws planted in the model reflector, when it is the client.
    pub flaws: listwatch_model::Flaws,
    /// Clients under test (reflector-0, reflector-1, ...), each on a connection of its own to the
    /// one server; at least one.
    pub reflectors: u8,
}

/// How a run ended.
#[derive(Clone, Debug)]
pub enum End {
    /// Every property held, and after the heal the client came to rest.
    Rest,
    /// A property broke at frame `.0`.
    Broke(usize, Violation),
    /// The heal phase ran out of steps before the client came to rest.
    NoRest,
    /// The client could go no further: why.
    Halted(String),
}

/// A finished run: its frames and counts.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub end: End,
    pub frames: Vec<Frame>,
    pub writes: u32,
    pub faults: Faults,
    pub requests: u32,
    /// 410s the server answered (A4, E4), to a request or on a watch.
    pub expired: u32,
    /// The properties the client cannot be judged by, each with why ([`Client::not_judged`]).
    pub not_judged: &'static [(&'static str, &'static str)],
}

/// The faults a run took, by kind; compactions count here too, as etcd's answers to them are the
/// server's 410s.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Faults {
    pub disconnect: u32,
    pub silent_death: u32,
    pub slow_consumer: u32,
    /// Watch events that reached the client as a line that does not decode.
    pub garbled_line: u32,
    /// Requests answered with a status before they reached the server (429, 500, refused, A15's).
    pub refusals: u32,
    pub compactions: u32,
}

impl std::fmt::Display for Faults {
    /// By the names `--fault-kinds` takes: `disconnect 2, silent-death 0, slow-consumer 1,
    /// garbled-line 0, refusals 3, compactions 1`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Faults { disconnect, silent_death, slow_consumer, garbled_line, refusals, compactions } = self;
        write!(
            f,
            "{} {disconnect}, {} {silent_death}, {} {slow_consumer}, {} {garbled_line}, refusals {refusals}, \
             compactions {compactions}",
            FaultKind::Disconnect.name(),
            FaultKind::SilentDeath.name(),
            FaultKind::SlowConsumer.name(),
            FaultKind::GarbledLine.name()
        )
    }
}

/// A client's one connection.
#[derive(Debug, Default)]
enum Conn {
    #[default]
    None,
    /// Sent, not yet answered: the server sees it when its answer is drawn.
    Pending(Request),
    /// A watch the server took: what it sent and the client has not read yet; `silent` once the
    /// connection died without a word (A9).
    Watching { queue: VecDeque<Message>, silent: bool },
}

/// A world step. Those of a client carry its number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    Answer(u8),
    Deliver(u8),
    Timer(u8),
    Put(u8),
    Delete(u8),
    Compact,
    Break(u8),
    Silence(u8),
    Notice(u8),
    /// The next event on the client's watch, already sent, arrives as a line that does not decode:
    /// the model's arming of the connection (`Fault::Garble`) and its next delivery as one step.
    Garble(u8),
    Hold(u8),
    Release(u8),
    /// The client's request is answered with this status before it reaches the server (A15).
    Refuse(u8, ApiError),
}

impl Step {
    /// In the heal, what is in flight goes first, in this order: answers, then deliveries, a held
    /// consumer's release, a dead connection noticed.
    fn in_flight(self) -> Option<u8> {
        match self {
            Step::Answer(_) => Some(0),
            Step::Deliver(_) => Some(1),
            Step::Release(_) => Some(2),
            Step::Notice(_) => Some(3),
            _ => None,
        }
    }
}

/// A client under test, its one connection, and the continue token of its last LIST page (the
/// session keeps one at a time: each client's is swapped in for its requests).
struct Slot<C: Client> {
    client: C,
    conn: Conn,
    token: Option<String>,
}

impl<C: Client> Slot<C> {
    /// What a client shows, by the model's rule ([`ClientView::of`]); a request not yet answered
    /// holds nothing for it, as an unrouted one in the model's network.
    fn view(&self) -> ClientView<'_> {
        let conn = match &self.conn {
            Conn::None => None,
            Conn::Pending(_) => Some(Connection { waiting: false, watch_served: false, dead: false }),
            Conn::Watching { queue, silent, .. } => {
                Some(Connection { waiting: !queue.is_empty(), watch_served: !silent, dead: *silent })
            }
        };
        ClientView::of(&self.client, conn)
    }
}

struct World<'s, 'a, C: Client> {
    slots: Vec<Slot<C>>,
    session: &'s mut Session<'a>,
    live: Vec<bool>,
    lever: bool,
    out: Outcome,
}

/// Run `clients`' clients against the server behind `session`, and judge what they saw: the frames
/// are kept up to the first violation.
pub fn run<K: Clients>(clients: &K, session: &mut Session<'_>, s: Settings) -> Result<Outcome, SideError> {
    let mut out = steps(clients, session, s)?;
    if let Some((i, v)) = judge_frames(&out.frames) {
        out.frames.truncate(i + 1);
        out.end = End::Broke(i, v);
    }
    Ok(out)
}

fn steps<K: Clients>(clients: &K, session: &mut Session<'_>, s: Settings) -> Result<Outcome, SideError> {
    let config = Config { keys: s.keys, flaws: s.flaws, reflectors: s.reflectors, ..Config::default() };
    let slots: Vec<Slot<K::C>> = (0..s.reflectors.max(1))
        .map(|i| {
            let mut client = clients.make(&config, s.seed, ClientId(i));
            client.start();
            Slot { client, conn: Conn::None, token: None }
        })
        .collect();
    let out = Outcome {
        end: End::Rest,
        frames: Vec::new(),
        writes: 0,
        faults: Faults::default(),
        requests: 0,
        expired: 0,
        not_judged: slots[0].client.not_judged(),
    };
    let mut w = World {
        slots,
        session,
        live: vec![false; usize::from(s.keys)],
        lever: clients.consumer_lever(),
        out,
    };
    let mut seen = Vec::new();
    for c in 0..w.slots.len() as u8 {
        w.drain(c, &mut seen)?;
    }
    let faulty = FaultKind::ALL.into_iter().any(|f| super::takes(f) && s.faults.has(f));
    let env = Environment { quiet: false, settled: false, caught_up: true, faulty };
    w.frame(seen, env);
    let mut rng = Rng::new(s.seed);
    for _ in 0..s.steps {
        let steps = w.enabled(true, s)?;
        if steps.is_empty() {
            w.poll(SETTLE_WAIT)?;
            continue;
        }
        let step = steps[rng.below(steps.len() as u64) as usize];
        let seen = w.take(step)?;
        w.frame(seen, env);
        if let Some(end) = w.ended() {
            w.out.end = end;
            return Ok(w.out);
        }
    }
    // The heal: no writes, no faults. What is in flight goes first; once nothing is, the server's
    // cache is let take the last write and its watches given time to send the rest; only then are the
    // clients judged settled, and their timers fire while one is not at rest.
    let quiet = Environment { quiet: true, ..env };
    for _ in 0..s.steps.saturating_mul(4).max(50) {
        let steps = w.enabled(false, s)?;
        let in_flight =
            steps.iter().filter_map(|st| st.in_flight().map(|rank| (rank, *st))).min_by_key(|(r, _)| *r);
        if let Some((_, step)) = in_flight {
            let seen = w.take(step)?;
            w.frame(seen, quiet);
        } else {
            w.barrier()?;
            w.poll(SETTLE_WAIT)?;
            if w.queues_empty() {
                // A second look, for a server slow to send under load.
                w.poll(SETTLE_WAIT * 3)?;
            }
            if !w.queues_empty() {
                continue;
            }
            w.frame(Vec::new(), Environment { settled: true, ..quiet });
            if w.resting() {
                return Ok(w.out);
            }
            // A timer of a client not at rest first: another's may fire again and again.
            let timers = steps.iter().filter_map(|st| match st {
                Step::Timer(c) => Some(*c),
                _ => None,
            });
            let Some(c) = timers.min_by_key(|c| w.slots[usize::from(*c)].view().resting()) else {
                break;
            };
            let timer = Step::Timer(c);
            let seen = w.take(timer)?;
            w.frame(seen, quiet);
        }
        if let Some(end) = w.ended() {
            w.out.end = end;
            return Ok(w.out);
        }
    }
    w.out.end = End::NoRest;
    Ok(w.out)
}

impl<C: Client> World<'_, '_, C> {
    fn slot(&mut self, c: u8) -> &mut Slot<C> {
        &mut self.slots[usize::from(c)]
    }

    fn queues_empty(&self) -> bool {
        self.slots.iter().all(|slot| match &slot.conn {
            Conn::Watching { queue, .. } => queue.is_empty(),
            Conn::Pending(_) => false,
            Conn::None => true,
        })
    }

    /// What the server sent on each open watch since the last look, waiting up to `wait` for it.
    fn poll(&mut self, wait: Duration) -> Result<(), SideError> {
        for c in 0..self.slots.len() as u8 {
            let Slot { conn, .. } = &mut self.slots[usize::from(c)];
            if let Conn::Watching { queue, silent: false, .. } = conn {
                for m in self.session.messages(wire::watch_id(ClientId(c)), wait)? {
                    queue.push_back(wire::message(&m));
                }
            }
        }
        Ok(())
    }

    fn barrier(&mut self) -> Result<(), SideError> {
        self.session.barrier()
    }

    /// The steps the world may take now, after a look at what the server sent meanwhile: each
    /// client's, then the writes, then the faults at each client, then a compaction.
    fn enabled(&mut self, safety: bool, s: Settings) -> Result<Vec<Step>, SideError> {
        self.poll(Duration::ZERO)?;
        let mut steps = Vec::new();
        for (c, slot) in (0u8..).zip(&self.slots) {
            match &slot.conn {
                Conn::Pending(request) => {
                    steps.push(Step::Answer(c));
                    // A15: a proxy, the authenticator or the server's filters answer before its storage.
                    if safety {
                        let kinds = FaultKind::refusals(request).filter(|(kind, _)| s.faults.has(*kind));
                        steps.extend(kinds.map(|(_, error)| Step::Refuse(c, error)));
                    }
                }
                Conn::Watching { queue, silent, .. } => {
                    if !queue.is_empty() && !silent {
                        steps.push(Step::Deliver(c));
                    }
                    // A9: unless a timer of the client's own fires first.
                    if *silent && slot.client.dead_connection_noticed_next().is_some() {
                        steps.push(Step::Notice(c));
                    }
                }
                Conn::None => {}
            }
            if slot.client.consumer_held() {
                steps.push(Step::Release(c));
            }
            if slot.client.next_timer().is_some() {
                steps.push(Step::Timer(c));
            }
        }
        if !safety {
            return Ok(steps);
        }
        for k in 0..s.keys {
            steps.push(Step::Put(k));
            if self.live[usize::from(k)] {
                steps.push(Step::Delete(k));
            }
        }
        for (c, slot) in (0u8..).zip(&self.slots) {
            if s.faults.has(FaultKind::Disconnect) && !matches!(slot.conn, Conn::None) {
                steps.push(Step::Break(c));
            }
            // A connection may die silently under any client; whether it notices is the client's.
            if s.faults.has(FaultKind::SilentDeath)
                && matches!(slot.conn, Conn::Watching { silent: false, .. })
            {
                steps.push(Step::Silence(c));
            }
            // As the model's network: a line of an open watch, the next event that arrives on it.
            if s.faults.has(FaultKind::GarbledLine)
                && matches!(&slot.conn, Conn::Watching { silent: false, queue }
                    if queue.front().is_some_and(|m| m.clone().garbled(true).is_ok()))
            {
                steps.push(Step::Garble(c));
            }
            if s.faults.has(FaultKind::SlowConsumer)
                && self.lever
                && slot.client.can_move_consumer()
                && !slot.client.consumer_held()
            {
                steps.push(Step::Hold(c));
            }
        }
        if s.compactions && self.session.highest() > 0 {
            steps.push(Step::Compact);
        }
        Ok(steps)
    }

    /// Take one step; what it showed.
    fn take(&mut self, step: Step) -> Result<Vec<Observed>, SideError> {
        let mut seen = Vec::new();
        match step {
            Step::Answer(c) => {
                let slot = &mut self.slots[usize::from(c)];
                let Conn::Pending(request) = std::mem::take(&mut slot.conn) else { return Ok(seen) };
                seen.push(Observed::Routed { client: ClientId(c), server: listwatch_model::ServerId(0) });
                self.session.swap_token(&mut slot.token);
                let answer = self.session.apply(&wire::op(&request, ClientId(c)));
                self.session.swap_token(&mut slot.token);
                let answer = answer?;
                if matches!(answer, ApiAnswer::Failed { code: 410 }) {
                    self.out.expired += 1;
                }
                match wire::answer(&answer, request.is_list()) {
                    Some(message) => self.receive(c, message, &mut seen)?,
                    None => {
                        let slot = self.slot(c);
                        slot.conn = Conn::Watching { queue: VecDeque::new(), silent: false };
                        slot.client.handle(Input::Opened);
                        self.drain(c, &mut seen)?;
                    }
                }
            }
            Step::Deliver(c) => {
                let slot = &mut self.slots[usize::from(c)];
                let Conn::Watching { queue, .. } = &mut slot.conn else { return Ok(seen) };
                let Some(message) = queue.pop_front() else { return Ok(seen) };
                if let Message::End(_) = message {
                    self.slot(c).conn = Conn::None;
                }
                if matches!(message, Message::Event(WatchEvent::Error(ApiError::Expired))) {
                    self.out.expired += 1;
                }
                self.receive(c, message, &mut seen)?;
            }
            Step::Timer(c) => {
                let client = &mut self.slot(c).client;
                if let Some((timer, after_ms)) = client.next_timer() {
                    seen.push(Observed::TimerFired { client: ClientId(c), timer, after_ms });
                    client.handle(Input::Timer(timer));
                    self.drain(c, &mut seen)?;
                }
            }
            Step::Put(k) | Step::Delete(k) => {
                let delete = matches!(step, Step::Delete(_));
                let op = if delete { ApiOp::Delete { key: k } } else { ApiOp::Put { key: k, other: false } };
                let (rev, keys) = match self.session.apply(&op)? {
                    ApiAnswer::Written { rev } => (rev, vec![k]),
                    ApiAnswer::Deleted { rev, keys, .. } => (rev, keys),
                    other => return Err(SideError(format!("the server answered {op} with {other:?}"))),
                };
                for key in keys {
                    self.live[usize::from(key)] = !delete;
                    seen.push(Observed::Wrote { rev: Rev(rev), key: Key(key), deleted: delete });
                }
                self.out.writes += 1;
            }
            Step::Compact => {
                let rev = self.session.highest();
                if let ApiAnswer::Compacted { rev } = self.session.apply(&ApiOp::Compact { rev })? {
                    seen.push(Observed::Compacted { rev: Rev(rev) });
                    self.out.faults.compactions += 1;
                }
            }
            Step::Break(c) => {
                self.close(c)?;
                self.out.faults.disconnect += 1;
                seen.push(Observed::Broken { client: ClientId(c) });
                self.slot(c).client.handle(Input::Broken);
                self.drain(c, &mut seen)?;
            }
            Step::Garble(c) => {
                let Conn::Watching { queue, .. } = &mut self.slot(c).conn else { return Ok(seen) };
                let Some(Ok(event)) = queue.pop_front().map(|m| m.garbled(true)) else { return Ok(seen) };
                self.out.faults.garbled_line += 1;
                seen.push(Observed::Garbled { client: ClientId(c), event });
                self.slot(c).client.handle(Input::Garbled);
                self.drain(c, &mut seen)?;
            }
            Step::Silence(c) => {
                // What the dead connection still held is lost with it, as the model's network loses it.
                if let Conn::Watching { silent, queue, .. } = &mut self.slots[usize::from(c)].conn {
                    *silent = true;
                    queue.clear();
                    self.out.faults.silent_death += 1;
                }
            }
            Step::Notice(c) => {
                if let Some(after_ms) = self.slot(c).client.dead_connection_noticed_next() {
                    seen.push(Observed::SilenceNoticed { client: ClientId(c), after_ms });
                    self.slot(c).client.elapse(after_ms);
                    self.close(c)?;
                    seen.push(Observed::Broken { client: ClientId(c) });
                    self.slot(c).client.handle(Input::Broken);
                    self.drain(c, &mut seen)?;
                }
            }
            Step::Hold(c) => {
                self.slot(c).client.handle(Input::Hold);
                self.out.faults.slow_consumer += 1;
                self.drain(c, &mut seen)?;
            }
            Step::Refuse(c, error) => {
                let Conn::Pending(request) = std::mem::take(&mut self.slot(c).conn) else { return Ok(seen) };
                self.out.faults.refusals += 1;
                self.receive(c, Message::refused(&request, error), &mut seen)?;
            }
            Step::Release(c) => {
                self.slot(c).client.handle(Input::Release);
                self.drain(c, &mut seen)?;
            }
        }
        Ok(seen)
    }

    /// Close client `c`'s connection, stopping the server's watch on it.
    fn close(&mut self, c: u8) -> Result<(), SideError> {
        if let Conn::Watching { .. } = std::mem::take(&mut self.slot(c).conn) {
            self.session.apply(&ApiOp::Stop { id: wire::watch_id(ClientId(c)) })?;
        }
        Ok(())
    }

    fn receive(&mut self, c: u8, message: Message, seen: &mut Vec<Observed>) -> Result<(), SideError> {
        seen.push(Observed::Received { client: ClientId(c), message: message.clone() });
        self.slot(c).client.handle(Input::Message(message));
        self.drain(c, seen)
    }

    /// Carry out what client `c` asked for (the model's `System::drain`, on its connection).
    fn drain(&mut self, c: u8, seen: &mut Vec<Observed>) -> Result<(), SideError> {
        let client = ClientId(c);
        while let Some(effect) = self.slot(c).client.poll_effect() {
            match effect {
                Effect::Send(request) => {
                    if !matches!(self.slot(c).conn, Conn::None) {
                        self.close(c)?;
                        seen.push(Observed::LeftOpen { client });
                    }
                    seen.push(Observed::Sent { client, request });
                    self.out.requests += 1;
                    self.slot(c).conn = Conn::Pending(request);
                }
                Effect::Cancel => {
                    if !matches!(self.slot(c).conn, Conn::None) {
                        self.close(c)?;
                        seen.push(Observed::Cancelled { client });
                    }
                }
                Effect::Notify(notification) => {
                    seen.push(Observed::Notified { client, handler: 0, notification })
                }
                Effect::NotifyAnother { handler, notification } => {
                    seen.push(Observed::Notified { client, handler, notification })
                }
                Effect::Tell => seen.push(Observed::Told { client }),
            }
        }
        Ok(())
    }

    fn resting(&self) -> bool {
        self.slots.iter().all(|slot| slot.view().resting())
    }

    fn frame(&mut self, seen: Vec<Observed>, environment: Environment) {
        let clients = self.slots.iter().map(|slot| Shown::of(&slot.view())).collect();
        // The first frame states what the clients cannot be judged by, for the whole run.
        let not_judged = if self.out.frames.is_empty() {
            let names = self.out.not_judged.iter();
            names
                .map(|(name, _)| Property::parse(name).unwrap_or_else(|| panic!("no property {name}")))
                .collect()
        } else {
            Vec::new()
        };
        self.out.frames.push(Frame { seen, environment, clients, not_judged });
    }

    /// Whether a client can go no further, and why.
    fn ended(&self) -> Option<End> {
        self.slots
            .iter()
            .find_map(|slot| slot.client.halted().or_else(|| slot.client.gone()))
            .map(End::Halted)
    }
}
