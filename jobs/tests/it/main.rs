//! Integration tests of the jobs crate.

mod exec;
mod hash;
mod layout;
mod spec;
