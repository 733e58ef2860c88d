//! Experiments as jobs: the spec, the grid in Table 12 order, the shard plan,
//! shard execution, the Parquet result schema, the manifest, and the classifier's training.
//!
//! This crate knows nothing of RPC; the coordinator and workers use it.

#![warn(missing_docs)]

pub mod evals;
mod exec;
pub mod external;
mod files;
mod grid;
mod job;
pub mod layout;
mod learn_error;
mod manifest;
pub mod nets;
mod parquet_io;
pub mod predictors;
mod rows;
mod spec;
pub mod sprt;
pub mod stages;
pub mod train;
pub mod training;

pub use exec::{Executor, Played};
pub use files::{IoError, durable_rename};
pub use grid::{GameCoords, Shard, coords, shards};
pub use job::{Job, JobError, Planned};
pub use layout::part_file;
pub use learn_error::LearnError;
pub use manifest::{ClassifierEntry, Manifest, PredictorsEntry, ShardEntry, write_json_atomic};
pub use parquet_io::hands::{hands_parquet, hands_schema, read_hands};
pub use parquet_io::moves::{moves_parquet, moves_schema, read_moves};
pub use parquet_io::{
    SCHEMA_VERSION, partitions, parts_in, read_partition, read_samples, samples_schema, schema, to_batch,
    write_partition, write_samples,
};
pub use rows::{ExecError, GameRow, HandRow, MoveRow, SampleRow, checksum};
pub use spec::{
    Agent, AgentPlay, AgentSearch, ClassifierSpec, DEFAULT_SHARD_GAMES, Format, FullSearch, FullSpec, GridSpec,
    MAX_BUDGET, MAX_GAMES, MAX_LISTED_STATES, MAX_OUTPUT_BYTES, MAX_PATH_BYTES, MAX_SHARD_GAMES, MAX_SPEC_BYTES,
    MAX_WORLDS, Pool, RuleSet, SandboxMode, ShapingLevel, ShapingParams, Source, Spec, SpecError, Sprt, SprtOn,
    StateSet, Walls, shaping_of,
};

/// The thesis experiment (Table 12: oracle and classifier sources).
pub const MYERS2014_SPEC: &str = include_str!("../specs/myers2014.toml");
/// The cluster's reference workload: the thesis's design on double-6.
pub const DOUBLE6_SPEC: &str = include_str!("../specs/double6.toml");
/// `DOUBLE6_SPEC` on 20 deals, as CI runs it.
pub const DOUBLE6_SMOKE_SPEC: &str = include_str!("../specs/double6-smoke.toml");
/// A small experiment for checks: a few thousand games, every source.
pub const SMOKE_SPEC: &str = include_str!("../specs/smoke.toml");
/// Beyond the thesis: oracle, classifier and bayes.
pub const BEYOND_SPEC: &str = include_str!("../specs/beyond.toml");
