//! Real clients against a real server (`simulate --server`): the client under test's requests go to
//! an API server over HTTP through the REST driver of `conformance http` (`harness/rest`), what the
//! server answers and sends comes back to the client, and the world between the two (writes, faults
//! at the wire, the client's timers) is drawn from the seed. The same properties judge what the
//! client did and showed. Not deterministic: see [`run`].

use listwatch_model::FaultKind;

#[cfg(feature = "apiserver")]
pub mod run;
#[cfg(feature = "apiserver")]
pub mod wire;

/// Whether a step of a run can take a fault of this kind: at the connection (`disconnect`,
/// `silent-death`, a watch line that arrives garbled), at the client's consumer (`slow-consumer`),
/// or a request answered with a status before it reaches the server (429, 500, `refused`, A15's).
/// The rest are the server's own to have (its timeouts, its cache's evictions and relists, its
/// restarts, etcd's progress).
pub fn takes(kind: FaultKind) -> bool {
    use FaultKind::*;
    match kind {
        Disconnect | SilentDeath | SlowConsumer | GarbledLine | TooManyRequests | InternalError
        | ConnectionRefused => true,
        Unauthorized
        | Forbidden
        | NotFound
        | ExpiredBeforeOpen
        | Invalid
        | Unavailable
        | UnavailableRetryAfter
        | GatewayTimeout
        | TruncatedBody => true,
        ServerTimeout | CacheEviction | CacheRelist | ServerRestart | PauseCluster | SlowProgress => false,
    }
}
