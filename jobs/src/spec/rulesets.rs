//! Rules as a factor of the grid: named rule sets (`[rules.NAME]` tables,
//! each a preset with its knobs over `[rules]`'s own keys) and
//! `[grid] rules = ["NAME", ...]`, the levels in the grid's order (a name
//! that is no table may be a preset: `["block", "team"]`). Seats and
//! partnerships are knobs of a rule set, so they vary the same way. See
//! docs/specs.md, "Rules as a factor".

use full::{FullConfig, FullRules, Preset, deal_count};
use toml::{Table, Value};

use super::SpecError;
use super::fields::{bad, check_name, missing};
use super::full::parse_full_rules_at;

/// One level of the rules factor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleSet {
    /// Its name: the `[rules.NAME]` table, and the rows' `rules` column.
    pub name: String,
    /// The validated rules (preset and knobs).
    pub config: FullConfig,
    /// How many deals these rules have (a spread of deals spreads over
    /// these).
    pub deals: u64,
}

impl RuleSet {
    /// The rules.
    pub fn rules(&self) -> FullRules {
        FullRules::new(self.config).expect("validated when the spec was read")
    }
}

/// Takes the named rule sets (the table-valued entries) out of `[rules]`.
pub(super) fn take_named(rules: &mut Option<Table>) -> Vec<(String, Table)> {
    let Some(t) = rules.as_mut() else {
        return Vec::new();
    };
    let names: Vec<String> = t.iter().filter(|(_, v)| v.is_table()).map(|(k, _)| k.clone()).collect();
    names
        .into_iter()
        .map(|k| match t.remove(&k) {
            Some(Value::Table(x)) => (k, x),
            _ => unreachable!("selected as a table above"),
        })
        .collect()
}

/// The rule sets `[grid] rules` lists, in its order, each `[rules.NAME]`
/// over `[rules]`'s keys (`base`, its preset already taken: `preset`).
/// `None` when neither names any (the spec has one rule set).
pub(super) fn parse(
    listed: Option<Value>,
    named: Vec<(String, Table)>,
    base: Option<&Table>,
    preset: Option<Preset>,
) -> Result<Option<Vec<RuleSet>>, SpecError> {
    let listed = match (listed, named.first()) {
        (None, None) => return Ok(None),
        (None, Some((k, _))) => {
            return Err(missing(
                "grid.rules",
                &format!(
                    "[rules.{k}] is a named rule set: list the sets the grid plays, e.g. grid.rules = [\"{k}\"] \
                     (or give its keys in [rules] itself)"
                ),
            ));
        }
        (Some(v), _) => v,
    };
    let Value::Array(items) = listed else {
        return Err(bad(
            "grid.rules",
            listed,
            "must be a list of rule-set names, e.g. [\"two\", \"four\"]",
        ));
    };
    if items.is_empty() {
        return Err(bad("grid.rules", "[]", "a factor needs at least one level"));
    }
    // Item by item, each refused in list order as it comes (so not
    // `fields::distinct_strings`, which checks the whole list first).
    let mut sets: Vec<RuleSet> = Vec::new();
    for item in items {
        let Value::String(name) = &item else {
            return Err(bad(
                "grid.rules",
                &item,
                "each entry must be a rule-set name (a string)",
            ));
        };
        if sets.iter().any(|s| &s.name == name) {
            return Err(bad("grid.rules", &item, "is listed twice"));
        }
        // A name that is not a [rules.NAME] table may be a preset with its
        // defaults (over [rules]'s keys), as a strategy may be an agent.
        let own = match named.iter().find(|(k, _)| k == name) {
            Some((_, own)) => own.clone(),
            None if name != "thesis" && name.parse::<Preset>().is_ok() => {
                let mut t = Table::new();
                t.insert("preset".into(), item.clone());
                t
            }
            None => {
                let defined: Vec<&str> = named.iter().map(|(k, _)| k.as_str()).collect();
                let defined = match defined.is_empty() {
                    true => "none defined".to_string(),
                    false => format!("defined: {}", defined.join(", ")),
                };
                return Err(bad(
                    "grid.rules",
                    &item,
                    format!(
                        "is neither a [rules.{name}] table ({defined}) nor a full-game preset (all-fives, block, \
                         team); define a set as a table, e.g. [rules.four] seats = 4 teams = true"
                    ),
                ));
            }
        };
        let p = format!("rules.{name}");
        check_name(&p, name)?;
        // The set's own keys over [rules]'s.
        let mut merged = base.cloned().unwrap_or_default();
        let mut own = own;
        let preset = match own.remove("preset") {
            None => preset,
            Some(Value::String(s)) if s == "thesis" => None,
            Some(Value::String(s)) => Some(s.parse::<Preset>().map_err(|_| {
                bad(
                    &format!("{p}.preset"),
                    format!("\"{s}\""),
                    "expected \"all-fives\", \"block\" or \"team\"",
                )
            })?),
            Some(v) => return Err(bad(&format!("{p}.preset"), v, "must be a string")),
        };
        let Some(preset) = preset else {
            return Err(missing(
                &format!("{p}.preset"),
                "a rule set of the grid is a full-game preset (\"all-fives\", \"block\" or \"team\"): give it here \
                 or in [rules]; the thesis's rules are a spec of their own",
            ));
        };
        merged.extend(own);
        let config = parse_full_rules_at(&p, preset, Some(merged))?;
        let deals = FullRules::new(config)
            .ok()
            .and_then(|r| deal_count(&r))
            .ok_or_else(|| {
                bad(
                    &p,
                    "{...}",
                    "has more deals than a u64 can index; use fewer or smaller hands",
                )
            })?;
        sets.push(RuleSet {
            name: name.clone(),
            config,
            deals,
        });
    }
    Ok(Some(sets))
}

/// The canonical JSON of the rules factor (present only with it, so that
/// specs without one keep their hashes).
pub(super) fn canonical(sets: &[RuleSet], rules_json: impl Fn(&FullConfig) -> String) -> String {
    let items: Vec<String> = sets
        .iter()
        .map(|s| {
            format!(
                "{{\"name\":{},\"rules\":{}}}",
                serde_json::to_string(&s.name).expect("a string serialises"),
                rules_json(&s.config)
            )
        })
        .collect();
    format!(",\"rule_sets\":[{}]", items.join(","))
}
