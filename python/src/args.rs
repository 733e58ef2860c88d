//! Arguments from Python, checked before they reach the engine (issue 41:
//! no path from Python may reach a panic). An argument that is not an
//! integer raises `TypeError`; an integer out of range, however large or
//! negative, raises `ValueError` naming the argument and its value.

use pyo3::exceptions::{PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

/// `ValueError` with `e`'s text: how an error of the Rust side that names
/// the bad value reaches Python.
pub fn value_error(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// `v`'s type as Python names it, e.g. `pyspiel.State`, `NoneType`.
pub fn type_name(v: &Bound<'_, PyAny>) -> String {
    let t = v.get_type();
    let name = t.qualname().map_or_else(|_| "?".to_string(), |n| n.to_string());
    match t.module().map(|m| m.to_string()) {
        Ok(m) if m != "builtins" => format!("{m}.{name}"),
        _ => name,
    }
}

/// `v` as an integer (an int or anything with `__index__`, e.g. numpy's);
/// `what` names it in the error.
pub fn int(v: &Bound<'_, PyAny>, what: &str) -> PyResult<i128> {
    match v.extract::<i128>() {
        Ok(i) => Ok(i),
        Err(e) if e.is_instance_of::<PyOverflowError>(v.py()) => {
            Err(PyValueError::new_err(format!("{what} {v}: out of range")))
        }
        // A knob's `what` is "key =": its value comes before the complaint.
        Err(_) if what.ends_with('=') => Err(PyTypeError::new_err(format!(
            "{what} {}: must be an int, not {}",
            v.repr().map(|r| r.to_string()).unwrap_or_default(),
            type_name(v)
        ))),
        Err(_) => Err(PyTypeError::new_err(format!(
            "{what} must be an int, not {}",
            type_name(v)
        ))),
    }
}

/// `v` as an integer in `range`, else a ValueError `"{what} {v}{why}"`
/// (`why` starts with its own separator: `": ..."` or `" is ..."`).
pub fn int_in(
    v: &Bound<'_, PyAny>,
    what: &str,
    range: std::ops::RangeInclusive<i128>,
    why: impl FnOnce() -> String,
) -> PyResult<i128> {
    let i = int(v, what)?;
    if range.contains(&i) {
        Ok(i)
    } else {
        Err(PyValueError::new_err(format!("{what} {i}{}", why())))
    }
}

/// A seed: any integer from 0 to 2^64 - 1.
pub fn seed(v: &Bound<'_, PyAny>, what: &str) -> PyResult<u64> {
    let i = int_in(v, what, 0..=u64::MAX as i128, || ": a seed is 0 to 2**64 - 1".into())?;
    Ok(i as u64)
}

/// A sequence of integers (a list, a tuple, a numpy array; not a str),
/// each checked by `each(index, value)`.
pub fn int_list<T>(
    v: &Bound<'_, PyAny>,
    what: &str,
    mut each: impl FnMut(usize, &Bound<'_, PyAny>) -> PyResult<T>,
) -> PyResult<Vec<T>> {
    if v.is_instance_of::<PyString>() || v.is_instance_of::<PyBytes>() {
        return Err(PyTypeError::new_err(format!(
            "{what} must be a sequence of ints, not {}",
            type_name(v)
        )));
    }
    let items = v
        .try_iter()
        .map_err(|_| PyTypeError::new_err(format!("{what} must be a sequence of ints, not {}", type_name(v))))?;
    let mut out = Vec::new();
    for (i, item) in items.enumerate() {
        out.push(each(i, &item?)?);
    }
    Ok(out)
}
