//! Which game a state plays: a preset's name and its knobs (keyword
//! arguments in Python), checked by [`full::FullRules::new`], whose errors
//! name the knob and the value.

use full::{FivesBlocked, FivesLead, FullConfig, FullRules, Preset};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyDictMethods};

/// A game: its preset's name, its rules, and for All Fives the match's
/// target score (0: one hand).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Game {
    /// The preset as the user named it: `block`, `team`, `all-fives`, `thesis`.
    pub name: &'static str,
    pub rules: FullRules,
    /// All Fives: a match is played until a side reaches this score; 0 (the
    /// default) plays one hand.
    pub to: u32,
}

/// The knobs each preset takes.
const FIVES_KNOBS: [&str; 9] = [
    "seats", "teams", "set", "hand", "keep", "round", "blocked", "lead", "to",
];
const THESIS_KNOBS: [&str; 2] = ["set", "hand"];

impl Game {
    /// The game `name` with `knobs` (keyword arguments).
    pub fn from_py(name: &str, knobs: Option<&Bound<'_, PyDict>>) -> PyResult<Game> {
        let mut pairs = Vec::new();
        if let Some(k) = knobs {
            for (key, value) in k.iter() {
                let key = key.extract::<String>()?;
                let value = Knob::from_py(&key, &value)?;
                pairs.push((key, value));
            }
        }
        Game::new(name, &pairs)
    }

    /// The game `name` with knobs given as (name, value) pairs.
    pub fn new(name: &str, knobs: &[(String, Knob)]) -> PyResult<Game> {
        let (name, allowed, mut config): (&'static str, &[&str], FullConfig) = match name {
            "block" => ("block", &[], FullConfig::preset(Preset::Block)),
            "team" => ("team", &[], FullConfig::preset(Preset::Team)),
            "all-fives" | "all_fives" => ("all-fives", &FIVES_KNOBS, FullConfig::all_fives(2)),
            "thesis" => ("thesis", &THESIS_KNOBS, FullConfig::thesis()),
            other => {
                return Err(PyValueError::new_err(format!(
                    "game {other:?}: expected \"all-fives\", \"block\", \"team\" or \"thesis\""
                )));
            }
        };
        let mut to = 0;
        // Seats first: the usual hand and partnerships follow from them.
        if let Some((_, v)) = knobs.iter().find(|(k, _)| k == "seats") {
            let seats = v.int("seats")?;
            if allowed.contains(&"seats") && (2..=4).contains(&seats) {
                config = FullConfig::all_fives(seats as u8);
            }
        }
        for (key, value) in knobs {
            if !allowed.contains(&key.as_str()) {
                let takes = if allowed.is_empty() {
                    "takes no knobs: it is OpenSpiel's game exactly".to_string()
                } else {
                    format!("takes {}", allowed.join(", "))
                };
                return Err(PyValueError::new_err(format!(
                    "unknown knob {key:?} for {name:?}: {name} {takes}"
                )));
            }
            set_knob(&mut config, &mut to, key, value)?;
        }
        if name == "thesis" {
            // The boneyard is the rest of the set.
            config.keep = 0;
        }
        let rules = FullRules::new(config).map_err(crate::args::value_error)?;
        Ok(Game { name, rules, to })
    }

    /// The knobs as the user could pass them again (for pickling and
    /// `repr`): the non-default ones.
    pub fn knobs(&self) -> Vec<(String, Knob)> {
        let c = self.rules.config();
        let d = match self.name {
            "thesis" => FullConfig::thesis(),
            "all-fives" => FullConfig::all_fives(c.seats),
            _ => return Vec::new(),
        };
        let mut out = Vec::new();
        if self.name == "all-fives" && c.seats != 2 {
            out.push(("seats".into(), Knob::Int(c.seats as i64)));
        }
        let ints = [
            ("set", c.set, d.set),
            ("hand", c.hand, d.hand),
            ("keep", c.keep, d.keep),
        ];
        for (k, v, dv) in ints {
            if v != dv {
                out.push((k.into(), Knob::Int(v as i64)));
            }
        }
        if self.name == "all-fives" {
            if c.teams != d.teams {
                out.push(("teams".into(), Knob::Bool(c.teams)));
            }
            if c.round != d.round {
                out.push(("round".into(), Knob::Bool(c.round)));
            }
            if c.blocked != d.blocked {
                out.push(("blocked".into(), Knob::Str(blocked_name(c.blocked).into())));
            }
            if c.lead != d.lead {
                out.push(("lead".into(), Knob::Str(lead_name(c.lead).into())));
            }
            if self.to != 0 {
                out.push(("to".into(), Knob::Int(self.to as i64)));
            }
        }
        out
    }

    /// Whether the game is All Fives (or the thesis's rules), not block/team.
    pub fn is_fives(&self) -> bool {
        self.rules.kind() == Preset::AllFives
    }
}

fn blocked_name(b: FivesBlocked) -> &'static str {
    match b {
        FivesBlocked::Opponents => "opponents",
        FivesBlocked::Difference => "difference",
    }
}

fn lead_name(l: FivesLead) -> &'static str {
    match l {
        FivesLead::HighestDouble => "highest-double",
        FivesLead::Winner => "winner",
    }
}

fn set_knob(config: &mut FullConfig, to: &mut u32, key: &str, value: &Knob) -> PyResult<()> {
    let small = |v: i64| u8::try_from(v).map_err(|_| PyValueError::new_err(format!("knob {key} = {v}: out of range")));
    match key {
        "seats" => config.seats = small(value.int(key)?)?,
        "set" => config.set = small(value.int(key)?)?,
        "hand" => config.hand = small(value.int(key)?)?,
        "keep" => config.keep = small(value.int(key)?)?,
        "teams" => config.teams = value.bool(key)?,
        "round" => config.round = value.bool(key)?,
        "to" => {
            let v = value.int(key)?;
            *to = u32::try_from(v)
                .ok()
                .filter(|&t| t <= 100_000)
                .ok_or_else(|| PyValueError::new_err(format!("knob to = {v}: must be 0 (one hand) to 100000")))?;
        }
        "blocked" => {
            config.blocked = match value.str(key)? {
                "opponents" => FivesBlocked::Opponents,
                "difference" => FivesBlocked::Difference,
                v => {
                    return Err(PyValueError::new_err(format!(
                        "knob blocked = {v:?}: expected \"opponents\" or \"difference\""
                    )));
                }
            }
        }
        "lead" => {
            config.lead = match value.str(key)? {
                "winner" => FivesLead::Winner,
                "highest-double" => FivesLead::HighestDouble,
                v => {
                    return Err(PyValueError::new_err(format!(
                        "knob lead = {v:?}: expected \"winner\" or \"highest-double\""
                    )));
                }
            }
        }
        _ => unreachable!("checked against the preset's knobs"),
    }
    Ok(())
}

/// A knob's value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Knob {
    Int(i64),
    Bool(bool),
    Str(String),
}

impl Knob {
    fn from_py(key: &str, v: &Bound<'_, PyAny>) -> PyResult<Knob> {
        // bool before int: Python's True is an int too.
        if let Ok(b) = v.cast::<pyo3::types::PyBool>() {
            return Ok(Knob::Bool(b.is_true()));
        }
        if let Ok(s) = v.extract::<String>() {
            return Ok(Knob::Str(s));
        }
        match v.extract::<i128>() {
            Ok(i) => i64::try_from(i)
                .map(Knob::Int)
                .map_err(|_| PyValueError::new_err(format!("knob {key} = {i}: out of range"))),
            Err(e) if e.is_instance_of::<pyo3::exceptions::PyOverflowError>(v.py()) => {
                Err(PyValueError::new_err(format!("knob {key} = {v}: out of range")))
            }
            Err(_) => Err(PyValueError::new_err(format!(
                "knob {key} = {v}: expected an int, a bool or a str"
            ))),
        }
    }

    fn int(&self, key: &str) -> PyResult<i64> {
        match self {
            Knob::Int(i) => Ok(*i),
            other => Err(PyValueError::new_err(format!(
                "knob {key} = {other:?}: expected an int"
            ))),
        }
    }

    fn bool(&self, key: &str) -> PyResult<bool> {
        match self {
            Knob::Bool(b) => Ok(*b),
            Knob::Int(i @ (0 | 1)) => Ok(*i == 1),
            Knob::Str(s) if s == "true" || s == "false" => Ok(s == "true"),
            other => Err(PyValueError::new_err(format!(
                "knob {key} = {other:?}: expected a bool"
            ))),
        }
    }

    fn str(&self, key: &str) -> PyResult<&str> {
        match self {
            Knob::Str(s) => Ok(s),
            other => Err(PyValueError::new_err(format!("knob {key} = {other:?}: expected a str"))),
        }
    }

    /// The value as a Python object.
    pub fn to_py<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(match self {
            Knob::Int(i) => i.into_pyobject(py)?.into_any(),
            Knob::Bool(b) => pyo3::types::PyBool::new(py, *b).to_owned().into_any(),
            Knob::Str(s) => s.into_pyobject(py)?.into_any(),
        })
    }
}
