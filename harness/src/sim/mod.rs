//! The seeded swarm simulator: each seed draws a world and a fault mix, runs a safety phase and a heal
//! phase, and every failure is shrunk into a trace file.

pub mod campaign;
pub mod draw;
pub mod merge;
pub mod rng;
pub mod run;
pub mod shrink;
