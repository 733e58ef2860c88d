//! The per-hand table of match grids (`[match] to = N`): one row per hand of
//! every match, beside the games table's one row per match. Written by the
//! worker before the shard's games partition (`hands/part-NNNNN.parquet`);
//! docs/schema.md lists the columns.

use std::path::Path;
use std::sync::Arc;

use arrow::array::{Int32Array, Int64Array, StringArray};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};

use crate::files::IoError;
use crate::parquet_io::col;
use crate::parquet_io::side::Columns;
use crate::rows::HandRow;

/// The columns of `hands/part-*.parquet`, in order.
pub fn hands_schema() -> SchemaRef {
    let f = |n: &str, t: DataType| Field::new(n, t, false);
    Arc::new(Schema::new(vec![
        f("experiment", DataType::Utf8),
        f("game_index", DataType::Int64),
        f("hand", DataType::Int32),
        f("leader", DataType::Utf8),
        f("player_points", DataType::Int32),
        f("target_points", DataType::Int32),
        f("player_total", DataType::Int32),
        f("target_total", DataType::Int32),
        f("ending", DataType::Utf8),
        f("turns", DataType::Int32),
        f("player_draws", DataType::Int32),
        f("target_draws", DataType::Int32),
        f("nodes", DataType::Int64),
    ]))
}

/// The table as Parquet bytes.
pub fn hands_parquet(experiment: &str, rows: &[HandRow]) -> Vec<u8> {
    Columns::new(experiment, rows, |r| r.game_index)
        .int32(|r| r.hand)
        .text(|r| if r.player_led { "player" } else { "target" })
        .int32(|r| r.player_points)
        .int32(|r| r.target_points)
        .int32(|r| r.player_total)
        .int32(|r| r.target_total)
        .text(|r| if r.blocked { "blocked" } else { "domino" })
        .int32(|r| r.turns)
        .int32(|r| r.player_draws)
        .int32(|r| r.target_draws)
        .int64(|r| r.nodes)
        .parquet(hands_schema(), "hands schema")
}

/// Reads a hands partition back (the experiment name of each row, and the row).
pub fn read_hands(path: &Path) -> Result<Vec<(String, HandRow)>, IoError> {
    let mut out = Vec::new();
    for batch in crate::parquet_io::batches(path)? {
        let b = batch?;
        let s = |n: &str| col::<StringArray>(&b, path, n);
        let i = |n: &str| col::<Int32Array>(&b, path, n);
        let l = |n: &str| col::<Int64Array>(&b, path, n);
        let (exp, game, hand, leader, pp, tp, pt, tt, ending) = (
            s("experiment")?,
            l("game_index")?,
            i("hand")?,
            s("leader")?,
            i("player_points")?,
            i("target_points")?,
            i("player_total")?,
            i("target_total")?,
            s("ending")?,
        );
        let (turns, pd, td, nodes) = (i("turns")?, i("player_draws")?, i("target_draws")?, l("nodes")?);
        for k in 0..b.num_rows() {
            out.push((
                exp.value(k).to_string(),
                HandRow {
                    game_index: game.value(k) as u64,
                    hand: hand.value(k) as u32,
                    player_led: leader.value(k) == "player",
                    player_points: pp.value(k) as u32,
                    target_points: tp.value(k) as u32,
                    player_total: pt.value(k) as u32,
                    target_total: tt.value(k) as u32,
                    blocked: ending.value(k) == "blocked",
                    turns: turns.value(k) as u32,
                    player_draws: pd.value(k) as u32,
                    target_draws: td.value(k) as u32,
                    nodes: nodes.value(k) as u64,
                },
            ));
        }
    }
    Ok(out)
}
