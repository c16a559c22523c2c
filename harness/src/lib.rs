//! Drivers of the listwatch model and the `listwatch` command line.
//!
//! Data flows one way: a configuration (`scope`) → the system and its clients, stepped by a driver
//! (`checker`, `sim`, `replay`; the same reflector over real concurrency is the crate `listwatch-live`) → observations → the properties → a verdict and a trace
//! (`trace`, `tracefile`, `render`, `report`). The command line (`cli`) sits on top; nothing imports it.

pub mod action_text;
pub mod bfs;
pub mod bounded;
pub mod check_merge;
pub mod check_model;
pub mod checker;
pub mod cli;
pub mod conformance;
pub mod interrupt;
pub mod real_server;
pub mod render;
pub mod replay;
pub mod report;
pub mod scope;
pub mod sim;
pub mod state_text;
pub mod trace;
pub mod tracefile;
