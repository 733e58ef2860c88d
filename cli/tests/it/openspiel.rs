//! `muggins openspiel replay`: histories in, legal actions and returns out,
//! illegal lines answered with an error while the next lines go on.

use crate::util::TestCommand;

#[test]
fn openspiel_replay_answers_every_line_and_names_illegal_steps() {
    // Block: seat 0 gets tiles 0-6 ((0|0)..(0|6)), seat 1 tiles 7-13.
    // Seat 0 opens (0|0) (id 0): seat 1 holds no 0, so seat 0 plays again:
    // its legal plays are every (0|x) on pip 0 (ids 3, 6, 9, 12, 15, 18).
    let deal: Vec<String> = (0..14).map(|t| t.to_string()).collect();
    let deal = deal.join(",");
    let input = format!(
        "{{\"history\": [{deal}]}}\n{{\"history\": [{deal},0]}}\n\n{{\"history\": [{deal},77]}}\nnot json\n{{\"history\": [3, 3]}}\n"
    );
    let out = replay(&input);
    assert_eq!(out.len(), 5, "one answer per non-blank line: {out:?}");
    assert_eq!(out[0]["legal"], serde_json::json!([[0, 2, 5, 8, 11, 14, 17]]));
    assert_eq!(out[0]["returns"], serde_json::Value::Null);
    assert_eq!(out[1]["legal"][1], serde_json::json!([3, 6, 9, 12, 15, 18]));
    let e = out[2]["error"].as_str().unwrap();
    assert!(
        e.contains("line 4") && e.contains("step 14 (action 77)") && e.contains("seat 0's turn"),
        "{e}"
    );
    assert!(out[3]["error"].as_str().unwrap().contains("not JSON"));
    assert!(out[4]["error"].as_str().unwrap().contains("step 1 (action 3)"));
    // Play the game out, always taking the first legal action: it ends with
    // zero-sum returns, and a step after the end is refused.
    let mut history: Vec<u64> = (0..14).collect();
    let returns = loop {
        let line = format!("{{\"history\": {history:?}}}\n");
        let answer = &replay(&line)[0];
        if let Some(r) = answer["returns"].as_array() {
            break r.iter().map(|x| x.as_i64().unwrap()).collect::<Vec<_>>();
        }
        let legal = answer["legal"].as_array().unwrap();
        history.push(legal.last().unwrap()[0].as_u64().unwrap());
        assert!(history.len() <= 28, "a block game has at most 14 plays");
    };
    assert_eq!(returns.len(), 2);
    assert_eq!(returns[0] + returns[1], 0);
    history.push(0);
    let e = replay(&format!("{{\"history\": {history:?}}}\n"))[0]["error"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(e.contains("the game is over"), "{e}");
}

fn replay(input: &str) -> Vec<serde_json::Value> {
    TestCommand::new(&["openspiel", "replay", "--game", "python_block_dominoes"])
        .stdin(input)
        .stdout()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn openspiel_replay_refuses_an_unknown_game() {
    TestCommand::new(&["openspiel", "replay", "--game", "python_dominoes"]).assert_err(&[
        "python_dominoes",
        "python_block_dominoes",
        "python_team_dominoes",
    ]);
}
