//! Kubernetes' HTTP/JSON protocol for the one collection the model serves (ConfigMaps in namespace
//! `default`), encoded and decoded outside the model: what decides the protocol stays in
//! `listwatch-model`; this crate only spells it. Every client under test that speaks HTTP reads the same
//! bytes: kube-runtime through a `tower::Service`, client-go through its own REST client.
//!
//! - [`request`]: a client's HTTP request decoded into the model's [`listwatch_model::Request`] (or a 400);
//! - [`response`]: a LIST page, watch event lines and `Status` bodies;
//! - [`object`]: a model object as a ConfigMap with real metadata, and back;
//! - [`http`]: what reaches a client, as the HTTP operations a transport carries out.

pub mod http;
pub mod object;
pub mod request;
pub mod response;
