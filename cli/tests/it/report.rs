//! The report stage on a real run, and the docs' DuckDB query against it.

use std::process::Command;

use crate::util::{Dir, TestCommand};

const SPEC: &str = r#"
name = "rep"
seed = 3
[grid]
information_source = ["oracle", "bayes"]
observability = ["full", "partial"]
target = ["random", "scorer", "defender"]
starting_states = "0-39"
engine = ["mstar", "expectimax"]
repeats = 2
[shards]
games = 200
"#;

/// The SQL between the markers in docs/analysis.md.
fn docs_query() -> String {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/analysis.md")).unwrap();
    let start = doc.find("<!-- duckdb-query -->").expect("the query's start marker");
    let end = doc.find("<!-- /duckdb-query -->").expect("the query's end marker");
    let block = &doc[start..end];
    let sql = block.split("```sql").nth(1).unwrap().split("```").next().unwrap();
    sql.trim().to_string()
}

#[test]
fn the_report_stage_writes_the_report_and_the_docs_query_gives_its_numbers() {
    let dir = Dir::new();
    let spec = dir.create_spec(SPEC);
    let out = dir.join("res");
    TestCommand::new(&["run"]).arg(&spec).arg("--out").arg(&out).success();
    let exp = out.join("rep");
    let report: serde_json::Value = serde_json::from_str(&dir.read("res/rep/report/report.json")).unwrap();
    assert_eq!(report["games"], 1920);
    assert_eq!(report["consistency"]["mismatches"], 0);
    assert_eq!(report["consistency"]["compared"], 480);
    let md = dir.read("res/rep/report/report.md");
    assert!(md.contains("identical. ✔"));

    let sql = docs_query().replace("RESULTS/EXPERIMENT", &exp.display().to_string());
    let script = format!(
        "import duckdb, json\nrows = duckdb.sql({sql:?}).fetchall()\nprint(json.dumps([[r[0], r[1], r[2], r[3], r[4], r[5], int(r[6]), r[7]] for r in rows]))\n"
    );
    let py = Command::new("python3")
        .arg("-c")
        .arg(&script)
        .output()
        .expect("python3 is needed");
    assert!(
        py.status.success(),
        "duckdb failed (python3 -m pip install duckdb): {}",
        String::from_utf8_lossy(&py.stderr)
    );
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&py.stdout).unwrap();
    assert_eq!(rows.len(), 24, "2 sources x 2 observabilities x 3 targets x 2 engines");
    for r in &rows {
        let cell = report["cells"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["information_source"] == r[0] && c["observability"] == r[1] && c["target"] == r[2])
            .expect("a report cell for every query group");
        let e = if r[3] == "mstar" {
            &cell["mstar"]
        } else {
            &cell["expectimax"]
        };
        assert_eq!(e["games"], r[4]);
        assert!(
            (e["mean_score_diff"].as_f64().unwrap() - r[5].as_f64().unwrap()).abs() < 1e-9,
            "{r:?}"
        );
        assert_eq!(e["wins_or_ties"], r[6]);
        match (e["accuracy"].as_f64(), r[7].as_f64()) {
            (Some(a), Some(b)) => assert!((a - b).abs() < 1e-9, "{r:?}"),
            (None, None) => {}
            (a, b) => panic!("accuracy {a:?} vs {b:?} for {r:?}"),
        }
    }
    // `muggins report` rebuilds the same numbers.
    let before = dir.read("res/rep/report/report.json");
    TestCommand::new(&["report"]).arg(&exp).success();
    assert_eq!(dir.read("res/rep/report/report.json"), before);
}

/// Rules as a factor: two seats and four in partnerships.
const RULES_SPEC: &str = r#"
name = "seats"
seed = 4
[rules]
preset = "all-fives"
[rules.two]
seats = 2
[rules.teams]
seats = 4
teams = true
[grid]
rules = ["two", "teams"]
information_source = ["oracle"]
observability = ["full"]
target = ["scorer"]
starting_states = "spread:12"
engine = ["mstar", "expectimax"]
repeats = 1
[search]
depth = 2
[shards]
games = 10
"#;

#[test]
fn a_rules_factor_gets_a_column_cells_per_rule_set_and_a_by_factor_line_duckdb_agrees_with() {
    let dir = Dir::new();
    let spec = dir.create_spec(RULES_SPEC);
    let out = dir.join("res");
    let printed = TestCommand::new(&["run"]).arg(&spec).arg("--out").arg(&out).stdout();
    assert!(printed.contains("rules source"), "{printed}");
    let report: serde_json::Value = serde_json::from_str(&dir.read("res/seats/report/report.json")).unwrap();
    let cells = report["cells"].as_array().unwrap();
    let sets: Vec<&str> = cells.iter().map(|c| c["rules"].as_str().unwrap()).collect();
    assert_eq!(sets, ["two", "teams"], "one cell per rule set, in the grid's order");
    let md = dir.read("res/seats/report/report.md");
    assert!(md.contains("## Rule set two — full observation"), "{md}");
    assert!(md.contains("## Rule set teams — full observation"), "{md}");
    assert!(md.contains("teams (all-fives: 4 seats of 5 in partnerships)"), "{md}");
    assert!(
        dir.read("res/seats/report/scores.csv")
            .starts_with("rules,information_source,")
    );
    let factors = dir.read("res/seats/report/factors.csv");
    let glob = out.join("seats/games/*.parquet");
    let script = format!(
        "import duckdb, json\nrows = duckdb.sql(\"SELECT rules, engine, count(*), avg(score_diff) FROM read_parquet('{}') \
         GROUP BY rules, engine ORDER BY rules, engine\").fetchall()\nprint(json.dumps(rows))\n",
        glob.display()
    );
    let py = Command::new("python3")
        .arg("-c")
        .arg(&script)
        .output()
        .expect("python3 is needed");
    assert!(py.status.success(), "duckdb: {}", String::from_utf8_lossy(&py.stderr));
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&py.stdout).unwrap();
    assert_eq!(rows.len(), 4, "2 rule sets x 2 engines: {rows:?}");
    for r in &rows {
        let cell = cells.iter().find(|c| c["rules"] == r[0]).unwrap();
        let e = if r[1] == "mstar" {
            &cell["mstar"]
        } else {
            &cell["expectimax"]
        };
        assert_eq!(e["games"], r[2]);
        assert!((e["mean_score_diff"].as_f64().unwrap() - r[3].as_f64().unwrap()).abs() < 1e-9);
    }
    for set in ["two", "teams"] {
        let n: i64 = rows
            .iter()
            .filter(|r| r[0] == set)
            .map(|r| r[2].as_i64().unwrap())
            .sum();
        assert!(
            factors.lines().any(|l| l.starts_with(&format!("rules,{set},{n},"))),
            "factors.csv has rules = {set} over {n} games: {factors}"
        );
    }
}

#[test]
fn a_report_with_a_missing_partition_names_it_once_and_says_how_to_rebuild() {
    let dir = Dir::new();
    let spec = dir.create_spec(&jobs::SMOKE_SPEC.replace("\"0-299\"", "\"0-59\""));
    TestCommand::new(&["run"])
        .arg(&spec)
        .arg("--out")
        .arg(dir.path())
        .stdout();
    std::fs::remove_file(dir.join("smoke/games/part-00000.parquet")).unwrap();
    let err = TestCommand::new(&["report"]).arg(dir.join("smoke")).assert_err(&[
        "part-00000.parquet",
        "is missing",
        "muggins run",
    ]);
    assert_eq!(err.matches("part-00000.parquet").count(), 1, "{err}");
    assert!(!err.contains("os error 2"), "{err}");
    // A file of the experiment directory is named as a file, not "no such directory".
    TestCommand::new(&["report"])
        .arg(dir.join("smoke/_SUCCESS"))
        .assert_err(&["is a file, not a directory", "smoke"]);
}
