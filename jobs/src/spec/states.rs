//! Sets of starting states and their one text form, shared by the spec's
//! `starting_states` and the CLI's `--states`.

use std::collections::HashSet;

use toml::Value;

use super::SpecError;
use super::fields::bad;

/// The most states a list (as opposed to one range) may name: a list is
/// held in memory, a range is not.
pub const MAX_LISTED_STATES: u64 = 10_000_000;

/// The starting states of a grid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StateSet {
    /// The inclusive range `first..=last`.
    Range {
        /// The first state index.
        first: u64,
        /// The last state index (inclusive).
        last: u64,
    },
    /// These states, in this order, each once.
    List(Vec<u64>),
    /// `count` states spread over all `of` of them: the i-th is
    /// `(offset + i * stride) mod of`, a stride near `of` times the golden
    /// ratio's fraction and coprime with `of` (so no state repeats). The
    /// full game's deal indices rank the seats' hands in order, so a range
    /// such as `0-999` deals only from the low tiles; a spread samples the
    /// whole space evenly.
    Spread {
        /// How many states.
        count: u64,
        /// The rules' number of starting states.
        of: u64,
    },
}

impl StateSet {
    /// Every state of rules that have `count` starting states.
    pub fn all(count: u64) -> StateSet {
        StateSet::Range {
            first: 0,
            last: count - 1,
        }
    }

    /// Parses the text form, checking every index against `count`, the
    /// number of starting states of the rules in force: `"all"`, one index
    /// (`"17"`), a range (`"0-99"`), or a comma-separated list of indices and
    /// ranges (`"0-9,20,30-39"`), or `"spread:N"` (N states spread evenly
    /// over all of them, [`StateSet::Spread`]). A state may appear once.
    ///
    /// This is the parser of both the spec's `starting_states` and the CLI's
    /// `--states`; it is not a `FromStr` because "all" and the range check
    /// need the rules.
    pub fn parse(text: &str, count: u64) -> Result<StateSet, String> {
        if text.trim() == "all" {
            return Ok(StateSet::all(count));
        }
        if let Some(n) = text.trim().strip_prefix("spread:") {
            return match n.trim().parse::<u64>() {
                Ok(n) if (1..=count).contains(&n) => Ok(StateSet::Spread { count: n, of: count }),
                _ => Err(format!(
                    "\"spread:{n}\": give how many states to spread over all {count}, from 1 to {count}"
                )),
            };
        }
        let mut parts = Vec::new();
        for part in text.split(',') {
            let part = part.trim();
            let (lo, hi) = match part.split_once('-') {
                Some((a, b)) => (a.trim(), b.trim()),
                None => (part, part),
            };
            let (Ok(lo), Ok(hi)) = (lo.parse::<u64>(), hi.parse::<u64>()) else {
                return Err(format!(
                    "{part:?} is not a state index or a range like 0-99 (expected \"all\", \
                     an index, a range, or a comma-separated list of them)"
                ));
            };
            if lo > hi {
                return Err(format!("the range {part:?} runs backwards"));
            }
            check_index(hi, count)?;
            parts.push((lo, hi));
        }
        if let [(first, last)] = parts[..] {
            return Ok(StateSet::Range { first, last });
        }
        let listed: u64 = parts.iter().map(|(lo, hi)| hi - lo + 1).sum();
        if listed > MAX_LISTED_STATES {
            return Err(format!(
                "lists {listed} states; a list may name at most {MAX_LISTED_STATES} (one range may be any size)"
            ));
        }
        let mut seen = HashSet::new();
        let mut out = Vec::with_capacity(listed as usize);
        for (lo, hi) in parts {
            for i in lo..=hi {
                if !seen.insert(i) {
                    return Err(format!("state {i} is listed twice"));
                }
                out.push(i);
            }
        }
        Ok(StateSet::List(out))
    }

    /// How many states.
    pub fn len(&self) -> u64 {
        match self {
            StateSet::Range { first, last } => last - first + 1,
            StateSet::List(v) => v.len() as u64,
            StateSet::Spread { count, .. } => *count,
        }
    }

    /// Whether there are none (never, for a parsed set).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The i-th state.
    pub fn get(&self, i: u64) -> u64 {
        match self {
            StateSet::Range { first, .. } => first + i,
            StateSet::List(v) => v[i as usize],
            &StateSet::Spread { of, .. } => {
                let (stride, offset) = spread(of);
                ((offset as u128 + i as u128 * stride as u128) % of as u128) as u64
            }
        }
    }

    /// The states in order.
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }
}

/// The stride and offset of a spread over `of` states: the stride near
/// `of` x 0.618... (the golden ratio's fraction: consecutive states land far
/// apart, and the first N cover the range evenly), moved up to the next
/// number coprime with `of`; the offset half a stride.
fn spread(of: u64) -> (u64, u64) {
    fn gcd(a: u64, b: u64) -> u64 {
        if b == 0 { a } else { gcd(b, a % b) }
    }
    let mut stride = ((of as f64 * 0.618_033_988_749_894_9) as u64).max(1);
    while gcd(stride, of) != 1 {
        stride += 1;
    }
    (stride, stride / 2 % of.max(1))
}

fn check_index(i: u64, count: u64) -> Result<(), String> {
    if i >= count {
        return Err(format!(
            "state {i} is out of range: these rules have {count} starting states (0-{})",
            count - 1
        ));
    }
    Ok(())
}

/// `grid.starting_states`: the text form, or a TOML list of indices.
pub(super) fn parse_states(v: Value, count: u64) -> Result<StateSet, SpecError> {
    let key = "grid.starting_states";
    match &v {
        Value::String(s) => StateSet::parse(s, count).map_err(|why| bad(key, &v, why)),
        Value::Array(items) => {
            if items.is_empty() {
                return Err(bad(key, "[]", "a factor needs at least one level"));
            }
            let mut out = Vec::with_capacity(items.len());
            let mut seen = HashSet::new();
            for item in items {
                let Some(i) = item.as_integer().filter(|i| *i >= 0) else {
                    return Err(bad(key, item, "each listed state must be a non-negative integer"));
                };
                let i = i as u64;
                check_index(i, count).map_err(|why| bad(key, item, why))?;
                if !seen.insert(i) {
                    return Err(bad(key, item, "is listed twice"));
                }
                out.push(i);
            }
            Ok(StateSet::List(out))
        }
        _ => Err(bad(
            key,
            &v,
            "expected \"all\", a range like \"0-99\", \"spread:1000\", or a list of indices",
        )),
    }
}
