//! Reading TOML tables key by key: every refusal names the key and the
//! value given, and unknown keys are refused with the ones expected.

use std::fmt;

use toml::{Table, Value};

use super::{MAX_OUTPUT_BYTES, MAX_PATH_BYTES, SpecError};

pub(super) fn bad(key: &str, value: impl fmt::Display, reason: impl Into<String>) -> SpecError {
    SpecError::Value {
        key: key.to_string(),
        value: value.to_string(),
        reason: reason.into(),
    }
}

pub(super) fn missing(key: &str, reason: &str) -> SpecError {
    SpecError::Missing {
        key: key.into(),
        reason: reason.into(),
    }
}

pub(super) fn path(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_string()
    } else {
        format!("{prefix}.{key}")
    }
}

pub(super) fn no_unknown(t: &Table, prefix: &str, allowed: &[&str]) -> Result<(), SpecError> {
    if let Some(k) = t.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(super::keys::unknown(prefix, k, allowed));
    }
    Ok(())
}

pub(super) fn take_table(t: &mut Table, prefix: &str, key: &str) -> Result<Option<Table>, SpecError> {
    match t.remove(key) {
        None => Ok(None),
        Some(Value::Table(x)) => Ok(Some(x)),
        Some(v) => Err(bad(&path(prefix, key), v, "must be a table, e.g. [rules]")),
    }
}

pub(super) fn take_str(t: &mut Table, prefix: &str, key: &str) -> Result<Option<String>, SpecError> {
    match t.remove(key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(v) => Err(bad(&path(prefix, key), v, "must be a string")),
    }
}

pub(super) fn take_int(t: &mut Table, prefix: &str, key: &str) -> Result<Option<i64>, SpecError> {
    match t.remove(key) {
        None => Ok(None),
        Some(Value::Integer(i)) => Ok(Some(i)),
        Some(v) => Err(bad(&path(prefix, key), v, "must be an integer")),
    }
}

pub(super) fn int_in(key: &str, v: i64, lo: i64, hi: i64) -> Result<i64, SpecError> {
    if v < lo || v > hi {
        return Err(bad(key, v, format!("must be between {lo} and {hi}")));
    }
    Ok(v)
}

pub(super) fn check_name(key: &str, s: &str) -> Result<(), SpecError> {
    let ok_chars = s
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if s.is_empty() || s.len() > 64 || !ok_chars || s.starts_with(['.', '_', '-']) {
        return Err(bad(
            key,
            Value::String(s.into()),
            "must be 1 to 64 letters, digits, '-', '_' or '.', not starting with '.', '_' or '-'",
        ));
    }
    Ok(())
}

/// `adaptive` (`prefix.adaptive`): `true` (99%), `false`, or a confidence
/// such as `0.95`; `None` when absent.
pub(super) fn take_adaptive(t: &mut Table, prefix: &str) -> Result<Option<Option<full::Adaptive>>, SpecError> {
    match t.remove("adaptive") {
        None => Ok(None),
        Some(Value::Boolean(b)) => Ok(Some(b.then_some(full::Adaptive::DEFAULT))),
        Some(Value::Float(c)) => full::Adaptive::with_confidence(c)
            .map(|a| Some(Some(a)))
            .map_err(|why| {
                bad(
                    &path(prefix, "adaptive"),
                    Value::Float(c),
                    format!("expected true, false or {why}"),
                )
            }),
        Some(v) => Err(bad(
            &path(prefix, "adaptive"),
            v,
            "expected true, false or a confidence such as 0.95",
        )),
    }
}

/// `adaptive` in canonical JSON: absent when off (so specs before it keep
/// their ids), `true` at the default 99%, else the confidence.
pub(super) fn adaptive_json(a: Option<full::Adaptive>) -> String {
    match a {
        None => String::new(),
        Some(full::Adaptive::DEFAULT) => ",\"adaptive\":true".to_string(),
        Some(a) => format!(",\"adaptive\":{}", a.confidence()),
    }
}

/// An engine as a spec names it: any but `external`, which only rows
/// carry (an external agent is a table with `command`).
pub(super) fn spec_engine(s: &str) -> Result<engine::PlayerEngine, String> {
    let searches = engine::PlayerEngine::listed(&engine::PlayerEngine::SEARCHES, "or");
    match s.parse::<engine::PlayerEngine>() {
        Ok(e) if engine::PlayerEngine::SEARCHES.contains(&e) => Ok(e),
        Ok(engine::PlayerEngine::Net) => Err(format!(
            "\"net\" is a named agent's engine: [agents.NAME] engine = \"net\", net = \"FILE\" (docs/specs.md); \
             a grid's engines are {searches}"
        )),
        Ok(_) => Err(
            "\"external\" is no engine: an external agent is an [agents.NAME] table with command = [...] \
             (docs/agents.md)"
                .to_string(),
        ),
        Err(_) => Err(format!(
            "unknown engine {s:?}: expected {searches} (a named agent may also be engine = \"net\")"
        )),
    }
}

/// An agent's name: any text of 1 to 64 bytes without control characters
/// (reports quote it in CSV, escape it in Markdown and HTML).
pub(super) fn check_label(key: &str, s: &str) -> Result<(), SpecError> {
    if s.trim().is_empty() || s.len() > 64 || s.chars().any(char::is_control) {
        return Err(bad(
            key,
            Value::String(s.into()),
            "must be 1 to 64 bytes of text, not blank, without control characters (tabs, newlines)",
        ));
    }
    Ok(())
}

/// An experiment's name: any text of 1 to 64 bytes without control
/// characters (the web view and reports escape it; `output` defaults to it
/// only when it is also a directory name).
pub(super) fn check_title(s: &str) -> Result<(), SpecError> {
    if s.trim().is_empty() || s.len() > 64 || s.chars().any(char::is_control) {
        return Err(bad(
            "name",
            Value::String(s.into()),
            "must be 1 to 64 bytes of text, not blank, without control characters (tabs, newlines)",
        ));
    }
    Ok(())
}

/// The output directory must stay inside the results root.
pub(super) fn check_output(o: &str) -> Result<(), SpecError> {
    let shown = Value::String(o.into());
    if o.len() > MAX_OUTPUT_BYTES {
        return Err(bad(
            "output",
            format!("{} bytes", o.len()),
            format!(
                "may be at most {MAX_OUTPUT_BYTES} bytes, so that every file name under it fits the \
                 {MAX_PATH_BYTES}-byte limit of a task's completion"
            ),
        ));
    }
    if o.starts_with('/') || o.contains('\\') || o.contains(':') {
        return Err(bad("output", shown, "must be a relative path inside the results root"));
    }
    for part in o.split('/') {
        if part == ".." || part == "." {
            return Err(bad(
                "output",
                shown,
                "must stay inside the results root (no '.' or '..' components)",
            ));
        }
        check_name("output", part).map_err(|_| {
            bad(
                "output",
                shown.clone(),
                "each path component must be letters, digits, '-', '_' or '.', not starting with '.', '_' or '-'",
            )
        })?;
    }
    Ok(())
}

/// The strings of a list, each once: `entry` is the refusal of an item that
/// is not a string (what an item must be).
pub(super) fn distinct_strings(key: &str, items: Vec<Value>, entry: &str) -> Result<Vec<String>, SpecError> {
    let mut out: Vec<String> = Vec::new();
    for item in items {
        let Value::String(s) = &item else {
            return Err(bad(key, &item, entry));
        };
        if out.contains(s) {
            return Err(bad(key, &item, "is listed twice"));
        }
        out.push(s.clone());
    }
    Ok(out)
}
