//! Drivers of the listwatch model and the `listwatch` command line.

pub mod action_text;
pub mod checker;
pub mod cli;
pub mod cli_simulate;
pub mod cli_traces;
pub mod live;
pub mod render;
pub mod replay;
pub mod report;
pub mod scope;
pub mod sim;
pub mod trace;
pub mod tracefile;
