//! The side tables' (hands, moves) shared mechanics: columns built from
//! rows in the schema's order, the experiment name and the game index
//! first, written as one Parquet file in memory.

use std::sync::Arc;

use arrow::array::{ArrayRef, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::SchemaRef;

/// A side table's columns, added in the schema's order.
pub(crate) struct Columns<'a, R> {
    rows: &'a [R],
    columns: Vec<ArrayRef>,
}

impl<'a, R> Columns<'a, R> {
    /// The `experiment` column (`experiment` on every row) and the
    /// `game_index` column.
    pub(crate) fn new(experiment: &str, rows: &'a [R], game_index: impl Fn(&R) -> u64) -> Self {
        let columns: Vec<ArrayRef> = vec![
            Arc::new(StringArray::from_iter_values(rows.iter().map(|_| experiment))),
            Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| game_index(r) as i64))),
        ];
        Columns { rows, columns }
    }

    /// An Int32 column of counts.
    pub(crate) fn int32(mut self, f: impl Fn(&R) -> u32) -> Self {
        let c = Int32Array::from_iter_values(self.rows.iter().map(|r| f(r) as i32));
        self.columns.push(Arc::new(c));
        self
    }

    /// An Int64 column of counts.
    pub(crate) fn int64(mut self, f: impl Fn(&R) -> u64) -> Self {
        let c = Int64Array::from_iter_values(self.rows.iter().map(|r| f(r) as i64));
        self.columns.push(Arc::new(c));
        self
    }

    /// A Utf8 column.
    pub(crate) fn text(mut self, f: impl Fn(&R) -> &str) -> Self {
        let c = StringArray::from_iter_values(self.rows.iter().map(f));
        self.columns.push(Arc::new(c));
        self
    }

    /// A nullable Float64 column.
    pub(crate) fn float64(mut self, f: impl Fn(&R) -> Option<f64>) -> Self {
        let c = Float64Array::from_iter(self.rows.iter().map(f));
        self.columns.push(Arc::new(c));
        self
    }

    /// The table as Parquet bytes (`what` names the schema in a panic: the
    /// columns are the schema's by construction).
    pub(crate) fn parquet(self, schema: SchemaRef, what: &str) -> Vec<u8> {
        let batch = RecordBatch::try_new(schema.clone(), self.columns).expect("columns match the schema");
        super::parquet_bytes(schema, &batch, what)
    }
}
