//! The per-move table (`[output] moves = true`): one row per play of every
//! game (thesis) or of every hand of a grid point (full game), with the
//! position's count and scores after it, how many plays were legal, and for
//! a searched decision the chosen play's value, the best other value and the
//! positions valued. docs/schema.md lists the columns.

use std::path::Path;
use std::sync::Arc;

use arrow::array::{Array, Float64Array, Int32Array, Int64Array, StringArray};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};

use crate::files::IoError;
use crate::parquet_io::col;
use crate::parquet_io::side::Columns;
use crate::rows::MoveRow;

/// The columns of `moves/part-*.parquet`, in order.
pub fn moves_schema() -> SchemaRef {
    let f = |n: &str, t: DataType| Field::new(n, t, false);
    Arc::new(Schema::new(vec![
        f("experiment", DataType::Utf8),
        f("game_index", DataType::Int64),
        f("hand", DataType::Int32),
        f("turn", DataType::Int32),
        f("seat", DataType::Int32),
        f("action", DataType::Utf8),
        f("count", DataType::Int32),
        f("player_score", DataType::Int32),
        f("target_score", DataType::Int32),
        f("legal_actions", DataType::Int32),
        Field::new("value", DataType::Float64, true),
        Field::new("best_alternative", DataType::Float64, true),
        f("nodes", DataType::Int64),
    ]))
}

/// The table as Parquet bytes (written through `layout::write_atomic`).
pub fn moves_parquet(experiment: &str, rows: &[MoveRow]) -> Vec<u8> {
    Columns::new(experiment, rows, |r| r.game_index)
        .int32(|r| r.hand)
        .int32(|r| r.turn)
        .int32(|r| r.seat)
        .text(|r| r.action.as_str())
        .int32(|r| r.count)
        .int32(|r| r.player_score)
        .int32(|r| r.target_score)
        .int32(|r| r.legal_actions)
        .float64(|r| r.value)
        .float64(|r| r.best_alternative)
        .int64(|r| r.nodes)
        .parquet(moves_schema(), "moves schema")
}

/// Reads a moves partition back (the experiment name of each row, and the row).
pub fn read_moves(path: &Path) -> Result<Vec<(String, MoveRow)>, IoError> {
    let mut out = Vec::new();
    for batch in crate::parquet_io::batches(path)? {
        let b = batch?;
        let s = |n: &str| col::<StringArray>(&b, path, n);
        let i = |n: &str| col::<Int32Array>(&b, path, n);
        let l = |n: &str| col::<Int64Array>(&b, path, n);
        let f = |n: &str| col::<Float64Array>(&b, path, n);
        let (exp, game, hand, turn, seat, action) = (
            s("experiment")?,
            l("game_index")?,
            i("hand")?,
            i("turn")?,
            i("seat")?,
            s("action")?,
        );
        let (count, ps, ts, legal, value, other, nodes) = (
            i("count")?,
            i("player_score")?,
            i("target_score")?,
            i("legal_actions")?,
            f("value")?,
            f("best_alternative")?,
            l("nodes")?,
        );
        for k in 0..b.num_rows() {
            let opt = |a: &Float64Array| (!a.is_null(k)).then(|| a.value(k));
            out.push((
                exp.value(k).to_string(),
                MoveRow {
                    game_index: game.value(k) as u64,
                    hand: hand.value(k) as u32,
                    turn: turn.value(k) as u32,
                    seat: seat.value(k) as u32,
                    action: action.value(k).to_string(),
                    count: count.value(k) as u32,
                    player_score: ps.value(k) as u32,
                    target_score: ts.value(k) as u32,
                    legal_actions: legal.value(k) as u32,
                    value: opt(value),
                    best_alternative: opt(other),
                    nodes: nodes.value(k) as u64,
                },
            ));
        }
    }
    Ok(out)
}
