//! Each rule flags a planted violation, in the forms a grep misses, and
//! passes the code that only looks like one.

use super::*;

fn check(path: &str, text: &str) -> Vec<Violation> {
    check_source(path, text, Rules::of(path)).expect("parses")
}

fn long_fn(name: &str, body_lines: usize, filler: &str) -> String {
    let mut s = format!("fn {name}() {{\n");
    for _ in 0..body_lines {
        s.push_str(filler);
        s.push('\n');
    }
    s.push_str("}\n");
    s
}

#[test]
fn a_function_over_the_limit_is_flagged_at_its_fn_line() {
    let ok = long_fn("fits", MAX_FN_LINES - 2, "    let _x = 1;");
    assert!(check("full/src/a.rs", &ok).is_empty());
    let text = format!(
        "// a file\n{}",
        long_fn("too_long", MAX_FN_LINES - 1, "    let _x = 1;")
    );
    let found = check("full/src/a.rs", &text);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].line, 2);
    assert!(found[0].what.contains("too_long is 151 lines"), "{}", found[0]);
}

#[test]
fn braces_in_strings_comments_and_macros_do_not_end_a_function() {
    // A brace counter that read these would end the function early.
    let filler = r#"    let _s = "}}"; // }
    let _b = b'}';
    let _f = format!("{{}}}}{}", 1);"#;
    let text = long_fn("braces", 60, filler);
    let found = check("jobs/src/a.rs", &text);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].what.contains("function braces is 182 lines"), "{}", found[0]);
}

#[test]
fn methods_trait_defaults_and_nested_functions_are_counted() {
    let body = "        let _x = 1;\n".repeat(MAX_FN_LINES);
    for text in [
        format!("struct S;\nimpl S {{\n    fn m(&self) {{\n{body}    }}\n}}\n"),
        format!("trait T {{\n    fn d(&self) {{\n{body}    }}\n}}\n"),
        format!("fn outer() {{\n    fn inner() {{\n{body}    }}\n}}\n"),
    ] {
        let found = check("cli/tests/it/a.rs", &text);
        assert!(!found.is_empty(), "{text:.60}");
    }
}

#[test]
fn proto_paths_beyond_the_edges_are_flagged_in_every_form() {
    for planted in [
        "use proto::Task;",
        "use ::proto::Chunk;",
        "use {proto::Experiment};",
        "fn f(_t: proto::Task) {}",
        "fn f() { let _ = proto::Stage::default(); }",
        "fn f() -> String { format!(\"{:?}\", proto :: Task::default()) }",
    ] {
        let found = check("coordinator/src/web/pages.rs", planted);
        assert!(!found.is_empty(), "not flagged in the web view: {planted}");
        let found = check("jobs/src/lib.rs", planted);
        assert!(!found.is_empty(), "not flagged in jobs: {planted}");
        // The edges may name the wire (what they build is the other rule's).
        for edge in [
            "coordinator/src/wire.rs",
            "coordinator/src/service.rs",
            "worker/src/task.rs",
        ] {
            let found = check(edge, planted);
            assert!(
                !found.iter().any(|v| v.what.contains("edges")),
                "flagged at the edge {edge}: {planted}: {found:?}"
            );
        }
    }
    // A comment or a string that mentions it is not a use.
    let text = "// proto::Task is the wire's\nfn f() -> &'static str { \"proto::Task\" }\n";
    assert!(check("coordinator/src/web/pages.rs", text).is_empty());
}

#[test]
fn row_messages_are_built_only_in_wire_and_assignment() {
    for planted in [
        "fn m() -> proto::Task { proto::Task { id: 1, ..Default::default() } }",
        "fn d() { let mut t = proto::Task::default(); t.id = 3; }",
        "use proto::Task as Wire;\nfn r() -> Wire { Wire { id: 2 } }",
        "use proto::*;\nfn c() { let _ = Chunk::default(); }",
        "fn l() { let t: proto::Experiment = Default::default(); drop(t); }",
    ] {
        let found = check("coordinator/src/service.rs", planted);
        assert!(
            found.iter().any(|v| v.what.contains("only wire.rs / assignment.rs")),
            "not flagged: {planted}: {found:?}"
        );
        assert!(
            check("worker/src/task.rs", planted)
                .iter()
                .any(|v| v.what.contains("only wire.rs / assignment.rs")),
            "not flagged in the worker: {planted}"
        );
        assert!(check("coordinator/src/wire.rs", planted).is_empty(), "{planted}");
        assert!(check("worker/src/assignment.rs", planted).is_empty(), "{planted}");
    }
    // Requests and responses, and a local type that shares a name, are not rows.
    let text = "struct Task { id: u32 }\nfn ok() -> (proto::LeaseRequest, Task) { (proto::LeaseRequest::default(), Task { id: 1 }) }";
    assert!(check("coordinator/src/service.rs", text).is_empty());
}

#[test]
fn the_tree_checks_clean() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let found = check_tree(&root).expect("the tree parses");
    assert!(
        found.is_empty(),
        "{}",
        found.iter().map(|v| v.to_string()).collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn a_file_that_does_not_parse_is_an_error_naming_it() {
    let e = check_source("full/src/bad.rs", "fn f( {", Rules::of("full/src/bad.rs")).unwrap_err();
    assert!(e.to_string().starts_with("full/src/bad.rs:1:"), "{e}");
}
