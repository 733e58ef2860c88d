//! Integration tests of the jobs crate.

mod agents;
mod evals;
mod exec;
mod hash;
mod layout;
mod rules;
mod spec;
