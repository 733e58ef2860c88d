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
