//! The Parquet result schema: the one module that knows it. Writing a shard's
//! partition durably, and reading partitions back.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, BooleanArray, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use engine::{Ending, Seat};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;

use crate::files::{IoError, format, io};
use crate::rows::GameRow;

pub mod hands;
pub mod moves;
mod side;

/// Bumped whenever a column is added, removed or changes meaning.
pub const SCHEMA_VERSION: u32 = 7;

/// The columns of `games/part-*.parquet`, in order (see docs/schema.md).
pub fn schema() -> SchemaRef {
    let f = |name: &str, t: DataType| Field::new(name, t, false);
    Arc::new(Schema::new(vec![
        f("experiment", DataType::Utf8),
        f("game_index", DataType::Int64),
        f("information_source", DataType::Utf8),
        f("observability", DataType::Utf8),
        f("target", DataType::Utf8),
        f("starting_state", DataType::Int64),
        f("engine", DataType::Utf8),
        f("repeat", DataType::Int32),
        f("leader", DataType::Utf8),
        f("player_score", DataType::Int32),
        f("target_score", DataType::Int32),
        f("score_diff", DataType::Int32),
        f("win_or_tie", DataType::Boolean),
        f("ending", DataType::Utf8),
        f("turns", DataType::Int32),
        f("player_draws", DataType::Int32),
        f("target_draws", DataType::Int32),
        f("predictions", DataType::Int32),
        f("predictions_correct", DataType::Int32),
        f("nodes", DataType::Int64),
        f("moves", DataType::Utf8),
        f("elapsed_us", DataType::Int64),
        Field::new("belief", DataType::Utf8, true),
        Field::new("belief_log_loss", DataType::Float64, true),
        Field::new("belief_brier", DataType::Float64, true),
        Field::new("belief_ess", DataType::Float64, true),
        f("shaping", DataType::Utf8),
        Field::new("budget", DataType::Int64, true),
        Field::new("agent", DataType::Utf8, true),
        Field::new("opponent", DataType::Utf8, true),
        Field::new("agent_side", DataType::Int32, true),
        Field::new("rules", DataType::Utf8, true),
        Field::new("forfeit", DataType::Utf8, true),
    ]))
}

fn seat_name(s: Seat) -> &'static str {
    match s {
        Seat::Player => "player",
        Seat::Target => "target",
    }
}

/// The rows as one record batch of [`schema`], `experiment` in every row.
pub fn to_batch(experiment: &str, rows: &[GameRow]) -> RecordBatch {
    let s =
        |f: &dyn Fn(&GameRow) -> String| -> ArrayRef { Arc::new(StringArray::from_iter_values(rows.iter().map(f))) };
    let i64s = |f: &dyn Fn(&GameRow) -> i64| -> ArrayRef { Arc::new(Int64Array::from_iter_values(rows.iter().map(f))) };
    let i32s = |f: &dyn Fn(&GameRow) -> i32| -> ArrayRef { Arc::new(Int32Array::from_iter_values(rows.iter().map(f))) };
    let columns: Vec<ArrayRef> = vec![
        s(&|_| experiment.to_string()),
        i64s(&|r| r.game_index as i64),
        s(&|r| r.information_source.name().to_string()),
        s(&|r| r.observability.to_string()),
        s(&|r| r.target.to_string()),
        i64s(&|r| r.starting_state as i64),
        s(&|r| r.engine.to_string()),
        i32s(&|r| r.repeat as i32),
        s(&|r| seat_name(r.leader).to_string()),
        i32s(&|r| r.player_score as i32),
        i32s(&|r| r.target_score as i32),
        i32s(&|r| r.score_diff),
        Arc::new(BooleanArray::from(
            rows.iter().map(|r| r.win_or_tie).collect::<Vec<_>>(),
        )),
        s(&|r| r.ending.to_string()),
        i32s(&|r| r.turns as i32),
        i32s(&|r| r.player_draws as i32),
        i32s(&|r| r.target_draws as i32),
        i32s(&|r| r.predictions as i32),
        i32s(&|r| r.predictions_correct as i32),
        i64s(&|r| r.nodes as i64),
        s(&|r| r.moves.clone()),
        i64s(&|r| r.elapsed_us as i64),
        Arc::new(StringArray::from(
            rows.iter().map(|r| r.belief.map(|b| b.name())).collect::<Vec<_>>(),
        )),
        Arc::new(Float64Array::from(
            rows.iter().map(|r| r.belief_log_loss).collect::<Vec<_>>(),
        )),
        Arc::new(Float64Array::from(
            rows.iter().map(|r| r.belief_brier).collect::<Vec<_>>(),
        )),
        Arc::new(Float64Array::from(
            rows.iter().map(|r| r.belief_ess).collect::<Vec<_>>(),
        )),
        s(&|r| r.shaping.name()),
        Arc::new(Int64Array::from(
            rows.iter().map(|r| r.budget.map(|b| b as i64)).collect::<Vec<_>>(),
        )),
        Arc::new(StringArray::from(
            rows.iter().map(|r| r.agent.as_deref()).collect::<Vec<_>>(),
        )),
        Arc::new(StringArray::from(
            rows.iter().map(|r| r.opponent.as_deref()).collect::<Vec<_>>(),
        )),
        Arc::new(Int32Array::from(
            rows.iter().map(|r| r.agent_side.map(|s| s as i32)).collect::<Vec<_>>(),
        )),
        Arc::new(StringArray::from(
            rows.iter().map(|r| r.rules.as_deref()).collect::<Vec<_>>(),
        )),
        Arc::new(StringArray::from(
            rows.iter().map(|r| r.forfeit.as_deref()).collect::<Vec<_>>(),
        )),
    ];
    RecordBatch::try_new(schema(), columns).expect("columns match the schema")
}

/// Snappy compression, and a `created_by` naming muggins and the schema
/// (`what`: "schema", "samples schema", "moves schema").
pub(crate) fn writer_props(what: &str) -> WriterProperties {
    WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_created_by(format!(
            "muggins {} ({what} {SCHEMA_VERSION})",
            env!("CARGO_PKG_VERSION")
        ))
        .build()
}

/// Writes `rows` to `path` as Parquet and forces it to disk.
pub fn write_partition(path: &Path, experiment: &str, rows: &[GameRow]) -> Result<(), IoError> {
    let file = File::create(path).map_err(io(path))?;
    let props = writer_props("schema");
    let mut writer = ArrowWriter::try_new(file, schema(), Some(props)).map_err(|e| format(path, e))?;
    writer.write(&to_batch(experiment, rows)).map_err(|e| format(path, e))?;
    let mut file = writer.into_inner().map_err(|e| format(path, e))?;
    file.flush().map_err(io(path))?;
    file.sync_all().map_err(io(path))?;
    Ok(())
}

pub(crate) fn col<'a, T: 'static>(batch: &'a RecordBatch, path: &Path, name: &str) -> Result<&'a T, IoError> {
    batch
        .column_by_name(name)
        .and_then(|c| c.as_any().downcast_ref::<T>())
        .ok_or_else(|| format(path, format!("column {name} is missing or of the wrong type")))
}

/// The record batches of a Parquet file, each read as it is reached.
pub(crate) fn batches(path: &Path) -> Result<impl Iterator<Item = Result<RecordBatch, IoError>> + '_, IoError> {
    let file = File::open(path).map_err(io(path))?;
    let reader = ParquetRecordBatchReaderBuilder::try_new(file)
        .and_then(|b| b.build())
        .map_err(|e| format(path, e))?;
    Ok(reader.map(move |b| b.map_err(|e| format(path, e))))
}

/// One batch as an in-memory Parquet file (`what` names the schema in
/// the file's `created_by`).
pub(crate) fn parquet_bytes(schema: SchemaRef, batch: &RecordBatch, what: &str) -> Vec<u8> {
    let mut writer = ArrowWriter::try_new(Vec::new(), schema, Some(writer_props(what))).expect("an in-memory writer");
    writer.write(batch).expect("an in-memory write");
    writer.into_inner().expect("an in-memory file")
}

fn parse<T>(path: &Path, name: &str, v: &str, f: impl Fn(&str) -> Option<T>) -> Result<T, IoError> {
    f(v).ok_or_else(|| format(path, format!("column {name}: unexpected value {v:?}")))
}

/// Reads a partition back into rows (and the experiment name of each).
pub fn read_partition(path: &Path) -> Result<Vec<(String, GameRow)>, IoError> {
    let mut out = Vec::new();
    for batch in batches(path)? {
        let b = batch?;
        let exp = col::<StringArray>(&b, path, "experiment")?;
        let idx = col::<Int64Array>(&b, path, "game_index")?;
        let src = col::<StringArray>(&b, path, "information_source")?;
        let obs = col::<StringArray>(&b, path, "observability")?;
        let tgt = col::<StringArray>(&b, path, "target")?;
        let state = col::<Int64Array>(&b, path, "starting_state")?;
        let eng = col::<StringArray>(&b, path, "engine")?;
        let rep = col::<Int32Array>(&b, path, "repeat")?;
        let leader = col::<StringArray>(&b, path, "leader")?;
        let ps = col::<Int32Array>(&b, path, "player_score")?;
        let ts = col::<Int32Array>(&b, path, "target_score")?;
        let diff = col::<Int32Array>(&b, path, "score_diff")?;
        let win = col::<BooleanArray>(&b, path, "win_or_tie")?;
        let ending = col::<StringArray>(&b, path, "ending")?;
        let turns = col::<Int32Array>(&b, path, "turns")?;
        let pd = col::<Int32Array>(&b, path, "player_draws")?;
        let td = col::<Int32Array>(&b, path, "target_draws")?;
        let pr = col::<Int32Array>(&b, path, "predictions")?;
        let pc = col::<Int32Array>(&b, path, "predictions_correct")?;
        let nodes = col::<Int64Array>(&b, path, "nodes")?;
        let moves = col::<StringArray>(&b, path, "moves")?;
        let el = col::<Int64Array>(&b, path, "elapsed_us")?;
        // Partitions written before schema 2 have no belief columns: uniform.
        let belief = match b.column_by_name("belief") {
            None => None,
            Some(_) => Some(col::<StringArray>(&b, path, "belief")?),
        };
        // Partitions written before schema 3 have no shaping column: none.
        let shaping = match b.column_by_name("shaping") {
            None => None,
            Some(_) => Some(col::<StringArray>(&b, path, "shaping")?),
        };
        let budget = match b.column_by_name("budget") {
            None => None,
            Some(_) => Some(col::<Int64Array>(&b, path, "budget")?),
        };
        // Partitions written before schema 4 have no agent columns.
        let strings = |name: &str| -> Result<Option<&StringArray>, IoError> {
            match b.column_by_name(name) {
                None => Ok(None),
                Some(_) => col::<StringArray>(&b, path, name).map(Some),
            }
        };
        let (agent, opponent) = (strings("agent")?, strings("opponent")?);
        // Partitions written before schema 5 have no rules column.
        let rule_set = strings("rules")?;
        // Partitions written before schema 7 have no forfeit column.
        let forfeit = strings("forfeit")?;
        let agent_side = match b.column_by_name("agent_side") {
            None => None,
            Some(_) => Some(col::<Int32Array>(&b, path, "agent_side")?),
        };
        let text = |c: Option<&StringArray>, i: usize| c.and_then(|c| (!c.is_null(i)).then(|| c.value(i).to_string()));
        let floats = |name: &str| -> Result<Option<&Float64Array>, IoError> {
            match b.column_by_name(name) {
                None => Ok(None),
                Some(_) => col::<Float64Array>(&b, path, name).map(Some),
            }
        };
        let (ll, brier, ess) = (
            floats("belief_log_loss")?,
            floats("belief_brier")?,
            floats("belief_ess")?,
        );
        let at = |c: Option<&Float64Array>, i: usize| c.and_then(|c| (!c.is_null(i)).then(|| c.value(i)));
        for i in 0..b.num_rows() {
            let observability: engine::Observability = parse(path, "observability", obs.value(i), |v| v.parse().ok())?;
            let row = GameRow {
                game_index: idx.value(i) as u64,
                information_source: parse(path, "information_source", src.value(i), |v| v.parse().ok())?,
                observability,
                target: parse(path, "target", tgt.value(i), |v| v.parse().ok())?,
                starting_state: state.value(i) as u64,
                engine: parse(path, "engine", eng.value(i), |v| v.parse().ok())?,
                repeat: rep.value(i) as u32,
                leader: parse(path, "leader", leader.value(i), |v| match v {
                    "player" => Some(Seat::Player),
                    "target" => Some(Seat::Target),
                    _ => None,
                })?,
                player_score: ps.value(i) as u32,
                target_score: ts.value(i) as u32,
                score_diff: diff.value(i),
                win_or_tie: win.value(i),
                ending: parse(path, "ending", ending.value(i), |v| match v {
                    "domino" => Some(Ending::Domino),
                    "blocked" => Some(Ending::Blocked),
                    "forfeit" => Some(Ending::Forfeit),
                    _ => None,
                })?,
                turns: turns.value(i) as u32,
                player_draws: pd.value(i) as u32,
                target_draws: td.value(i) as u32,
                predictions: pr.value(i) as u32,
                predictions_correct: pc.value(i) as u32,
                nodes: nodes.value(i) as u64,
                moves: moves.value(i).to_string(),
                elapsed_us: el.value(i) as u64,
                // Before schema 2 every row was `uniform`; before schema 6
                // full-observation rows named the grid's belief too.
                belief: match belief {
                    None => (observability == engine::Observability::Partial).then_some(engine::Belief::Uniform),
                    Some(c) if c.is_null(i) => None,
                    Some(c) => Some(parse(path, "belief", c.value(i), |v| v.parse().ok())?),
                },
                belief_log_loss: at(ll, i),
                belief_brier: at(brier, i),
                belief_ess: at(ess, i),
                shaping: match shaping {
                    None => crate::spec::ShapingLevel::NONE,
                    Some(c) => parse(path, "shaping", c.value(i), |v| v.parse().ok())?,
                },
                budget: budget.and_then(|c| (!c.is_null(i)).then(|| c.value(i) as u64)),
                agent: text(agent, i),
                opponent: text(opponent, i),
                agent_side: agent_side.and_then(|c| (!c.is_null(i)).then(|| c.value(i) as u32)),
                rules: text(rule_set, i),
                forfeit: text(forfeit, i),
            };
            out.push((exp.value(i).to_string(), row));
        }
    }
    Ok(out)
}

/// The partitions of an experiment directory, in shard order.
pub fn partitions(experiment_dir: &Path) -> Result<Vec<PathBuf>, IoError> {
    parts_in(&experiment_dir.join(crate::layout::GAMES_DIR))
}

/// The columns of `classifier/samples/part-*.parquet`.
pub fn samples_schema() -> SchemaRef {
    let f = |name: &str, t: DataType| Field::new(name, t, false);
    Arc::new(Schema::new(vec![
        f("game", DataType::Int64),
        f("turn", DataType::Int32),
        f("player_type", DataType::Utf8),
        f("target_type", DataType::Utf8),
        f("label", DataType::Int32),
        f("points_per_turn", DataType::Float64),
        f("defense", DataType::Float64),
        f("opponent_draws_per_turn", DataType::Float64),
        f("scoring_plays_per_turn", DataType::Float64),
        f("count", DataType::Float64),
    ]))
}

/// Writes training samples to `path` as Parquet and forces it to disk.
pub fn write_samples(path: &Path, rows: &[crate::rows::SampleRow]) -> Result<(), IoError> {
    use arrow::array::Float64Array;
    let col = |j: usize| -> ArrayRef { Arc::new(Float64Array::from_iter_values(rows.iter().map(|r| r.x[j]))) };
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.game as i64))),
        Arc::new(Int32Array::from_iter_values(rows.iter().map(|r| r.turn as i32))),
        Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.player_type.name()))),
        Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.target_type.name()))),
        Arc::new(Int32Array::from_iter_values(rows.iter().map(|r| r.target_type as i32))),
        col(0),
        col(1),
        col(2),
        col(3),
        col(4),
    ];
    let batch = RecordBatch::try_new(samples_schema(), columns).expect("columns match the schema");
    let file = File::create(path).map_err(io(path))?;
    let props = writer_props("samples schema");
    let mut writer = ArrowWriter::try_new(file, samples_schema(), Some(props)).map_err(|e| format(path, e))?;
    writer.write(&batch).map_err(|e| format(path, e))?;
    let mut file = writer.into_inner().map_err(|e| format(path, e))?;
    file.flush().map_err(io(path))?;
    file.sync_all().map_err(io(path))?;
    Ok(())
}

/// Reads the samples of one partition: (features, label) in file order.
pub fn read_samples(path: &Path) -> Result<Vec<([f64; 5], u8)>, IoError> {
    use arrow::array::Float64Array;
    let file = File::open(path).map_err(io(path))?;
    let reader = ParquetRecordBatchReaderBuilder::try_new(file)
        .and_then(|b| b.build())
        .map_err(|e| format(path, e))?;
    let mut out = Vec::new();
    let names = [
        "points_per_turn",
        "defense",
        "opponent_draws_per_turn",
        "scoring_plays_per_turn",
        "count",
    ];
    for batch in reader {
        let b = batch.map_err(|e| format(path, e))?;
        let label = col::<Int32Array>(&b, path, "label")?;
        let xs: Vec<&Float64Array> = names
            .iter()
            .map(|n| col::<Float64Array>(&b, path, n))
            .collect::<Result<_, _>>()?;
        for i in 0..b.num_rows() {
            let l = label.value(i);
            if !(0..3).contains(&l) {
                return Err(format(path, format!("label {l} is not 0, 1 or 2")));
            }
            out.push((std::array::from_fn(|j| xs[j].value(i)), l as u8));
        }
    }
    Ok(out)
}

/// Files named `part-*.parquet` directly in `dir`, sorted.
pub fn parts_in(dir: &Path) -> Result<Vec<PathBuf>, IoError> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(io(dir))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(crate::layout::is_part_file)
        })
        .collect();
    out.sort();
    Ok(out)
}
