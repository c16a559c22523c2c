//! Drivers of the listwatch model and the `listwatch` command line.

pub mod checker;
pub mod cli;
pub mod report;
pub mod scope;
pub mod trace;
