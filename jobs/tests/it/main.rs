//! Integration tests of the jobs crate.

mod exec;
mod hash;
mod spec;
