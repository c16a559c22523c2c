//! Real clients against a real server (`simulate --server`): the client under test's requests go to
//! an API server over HTTP through the REST driver of `conformance http` (`harness/rest`), what the
//! server answers and sends comes back to the client, and the world between the two (writes, faults
//! at the wire, the client's timers) is drawn from the seed. The same properties judge what the
//! client did and showed. Not deterministic: see [`run`].

pub mod run;
pub mod wire;
