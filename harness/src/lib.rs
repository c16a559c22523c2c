//! Drivers of the listwatch model and the `listwatch` command line.

pub mod cli;
pub mod scope;
pub mod walk;
