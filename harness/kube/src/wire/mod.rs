//! Kubernetes' HTTP/JSON protocol for the one collection the model serves, encoded and decoded outside
//! the model: what decides the protocol stays in `listwatch-model`; this only spells it.

pub mod object;
pub mod request;
pub mod response;
