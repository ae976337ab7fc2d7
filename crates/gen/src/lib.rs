//! Scenario generators: the seeds' named cases.

pub mod named;
