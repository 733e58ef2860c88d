//! Self-play training rows (`gen-NNN/selfplay/part-*.parquet`): one row a
//! decision of a network's seat with two or more legal plays. The columns
//! are in docs/schema.md ("Training rows").

use std::path::Path;
use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, BooleanArray, Float32Array, Int32Array, Int64Array, ListArray, RecordBatch, UInt8Array,
};
use arrow::buffer::OffsetBuffer;
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};

use crate::files::{IoError, format};
use crate::parquet_io::{batches, col, parquet_bytes};

/// One decision of self-play.
#[derive(Clone, Debug, PartialEq)]
pub struct TrainRow {
    /// The game's index in its generation.
    pub game_index: u64,
    /// The decision's place in the game's plays (0 the first play).
    pub turn: u32,
    /// The seat that decided.
    pub seat: u8,
    /// Its observation (the spec's encoding).
    pub observation: Vec<f32>,
    /// The legal action ids, ascending.
    pub legal: Vec<u32>,
    /// The distribution the play was drawn from, over `legal`.
    pub policy: Vec<f32>,
    /// The action played.
    pub action: u32,
    /// The network's value of the observation when it played.
    pub value: f32,
    /// The seat's return at the game's end (points).
    pub outcome: f32,
    /// Whether a search decided (`policy` is then its root's visits).
    pub searched: bool,
    /// Where each tile was (`SpielState::holders` from the seat's side:
    /// another seat, the boneyard, or `net::NO_HOLDER` when the seat saw
    /// it): the belief head's target. Written only by a training with a
    /// belief head (the `holders` column); empty when read without it.
    pub holders: Vec<u8>,
    /// The constraints belief's marginals from the seat's side
    /// (`SpielState::belief_prior`, tiles x holders): the prior a belief
    /// head with `belief_prior = "constraints"` corrects. Written only by
    /// such a training (the `prior` column); empty when read without it.
    pub prior: Vec<f32>,
}

/// The columns of a training partition, in order (`holders` with a belief
/// head, then `prior` with a prior).
pub fn train_schema(belief: bool, prior: bool) -> SchemaRef {
    let f = |n: &str, t: DataType| Field::new(n, t, false);
    let list = |n: &str, t: DataType| Field::new(n, DataType::List(Arc::new(Field::new("item", t, false))), false);
    let mut fields = vec![
        f("game_index", DataType::Int64),
        f("turn", DataType::Int32),
        f("seat", DataType::Int32),
        list("observation", DataType::Float32),
        list("legal", DataType::Int32),
        list("policy", DataType::Float32),
        f("action", DataType::Int32),
        f("value", DataType::Float32),
        f("outcome", DataType::Float32),
        f("searched", DataType::Boolean),
    ];
    if belief {
        fields.push(list("holders", DataType::UInt8));
    }
    if prior {
        fields.push(list("prior", DataType::Float32));
    }
    Arc::new(Schema::new(fields))
}

fn list_of<T: Copy>(
    rows: &[TrainRow],
    get: impl Fn(&TrainRow) -> &[T],
    array: impl FnOnce(Vec<T>) -> ArrayRef,
) -> ArrayRef {
    let lengths = rows.iter().map(|r| get(r).len());
    let offsets = OffsetBuffer::from_lengths(lengths);
    let values: Vec<T> = rows.iter().flat_map(|r| get(r).iter().copied()).collect();
    let values = array(values);
    let field = Arc::new(Field::new("item", values.data_type().clone(), false));
    Arc::new(ListArray::new(field, offsets, values, None))
}

/// The rows as Parquet bytes (with the `holders` column when `belief`, and
/// `prior` when `prior`).
pub fn train_parquet(rows: &[TrainRow], belief: bool, prior: bool) -> Vec<u8> {
    let mut columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.game_index as i64))),
        Arc::new(Int32Array::from_iter_values(rows.iter().map(|r| r.turn as i32))),
        Arc::new(Int32Array::from_iter_values(rows.iter().map(|r| r.seat as i32))),
        list_of(rows, |r| &r.observation, |v| Arc::new(Float32Array::from(v))),
        list_of(
            rows,
            |r| &r.legal,
            |v: Vec<u32>| Arc::new(Int32Array::from_iter_values(v.into_iter().map(|x| x as i32))),
        ),
        list_of(rows, |r| &r.policy, |v| Arc::new(Float32Array::from(v))),
        Arc::new(Int32Array::from_iter_values(rows.iter().map(|r| r.action as i32))),
        Arc::new(Float32Array::from_iter_values(rows.iter().map(|r| r.value))),
        Arc::new(Float32Array::from_iter_values(rows.iter().map(|r| r.outcome))),
        Arc::new(BooleanArray::from(
            rows.iter().map(|r| r.searched).collect::<Vec<bool>>(),
        )),
    ];
    if belief {
        columns.push(list_of(rows, |r| &r.holders, |v| Arc::new(UInt8Array::from(v))));
    }
    if prior {
        columns.push(list_of(rows, |r| &r.prior, |v| Arc::new(Float32Array::from(v))));
    }
    let schema = train_schema(belief, prior);
    let batch = RecordBatch::try_new(schema.clone(), columns).expect("columns match the schema");
    parquet_bytes(schema, &batch, "training rows schema")
}

fn list_values<'a, T: 'static + Array>(list: &'a ListArray, path: &Path, name: &str) -> Result<&'a T, IoError> {
    list.values()
        .as_any()
        .downcast_ref::<T>()
        .ok_or_else(|| format(path, format!("column {name}: its items are of the wrong type")))
}

/// Reads a training partition back, in file order.
pub fn read_train(path: &Path) -> Result<Vec<TrainRow>, IoError> {
    let mut out = Vec::new();
    for batch in batches(path)? {
        let b = batch?;
        let game = col::<Int64Array>(&b, path, "game_index")?;
        let turn = col::<Int32Array>(&b, path, "turn")?;
        let seat = col::<Int32Array>(&b, path, "seat")?;
        let obs = col::<ListArray>(&b, path, "observation")?;
        let legal = col::<ListArray>(&b, path, "legal")?;
        let policy = col::<ListArray>(&b, path, "policy")?;
        let action = col::<Int32Array>(&b, path, "action")?;
        let value = col::<Float32Array>(&b, path, "value")?;
        let outcome = col::<Float32Array>(&b, path, "outcome")?;
        let searched = col::<BooleanArray>(&b, path, "searched")?;
        let holders = match b.column_by_name("holders") {
            None => None,
            Some(_) => {
                let l = col::<ListArray>(&b, path, "holders")?;
                Some((l, list_values::<UInt8Array>(l, path, "holders")?))
            }
        };
        let prior = match b.column_by_name("prior") {
            None => None,
            Some(_) => {
                let l = col::<ListArray>(&b, path, "prior")?;
                Some((l, list_values::<Float32Array>(l, path, "prior")?))
            }
        };
        let (obs_v, legal_v, policy_v) = (
            list_values::<Float32Array>(obs, path, "observation")?,
            list_values::<Int32Array>(legal, path, "legal")?,
            list_values::<Float32Array>(policy, path, "policy")?,
        );
        let range = |l: &ListArray, i: usize| {
            let o = l.value_offsets();
            o[i] as usize..o[i + 1] as usize
        };
        for i in 0..b.num_rows() {
            let row = TrainRow {
                game_index: game.value(i) as u64,
                turn: turn.value(i) as u32,
                seat: seat.value(i) as u8,
                observation: obs_v.values()[range(obs, i)].to_vec(),
                legal: legal_v.values()[range(legal, i)].iter().map(|&x| x as u32).collect(),
                policy: policy_v.values()[range(policy, i)].to_vec(),
                action: action.value(i) as u32,
                value: value.value(i),
                outcome: outcome.value(i),
                searched: searched.value(i),
                holders: holders.map_or(Vec::new(), |(l, v)| v.values()[range(l, i)].to_vec()),
                prior: prior.map_or(Vec::new(), |(l, v)| v.values()[range(l, i)].to_vec()),
            };
            if row.legal.len() != row.policy.len() || !row.legal.contains(&row.action) {
                return Err(format(
                    path,
                    format!("row {i}: the policy, the legal actions and the action disagree"),
                ));
            }
            out.push(row);
        }
    }
    Ok(out)
}
