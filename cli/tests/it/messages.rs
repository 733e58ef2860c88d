//! What the job commands say when something is wrong: bad coordinator URLs,
//! nothing listening, the wrong server, a missing token, an unknown
//! experiment id, a results root given as an experiment directory; and logs
//! without colour codes when they do not go to a terminal.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::cluster::{coordinator_with, free_port};
use crate::util::{Dir, TestCommand};

const TOKEN: &str = "a-token-of-more-than-16-chars";

/// `muggins args` with `env` and none of the muggins variables of the
/// environment the tests run in, in an empty directory of its own; killed
/// (and failed) after a minute.
fn client(args: &[&str], env: &[(&str, &str)]) -> TestCommand {
    let mut cmd = TestCommand::new(args);
    cmd.in_empty_dir().timeout(Duration::from_secs(60));
    for v in [
        "MUGGINS_COORDINATOR",
        "MUGGINS_TOKEN",
        "MUGGINS_TOKEN_FILE",
        "MUGGINS_TLS_CA",
        "MUGGINS_LOG",
        "NO_COLOR",
    ] {
        cmd.env_remove(v);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

/// Runs a command that must fail, checks that its message has every one of
/// `parts` and none of `absent`, and returns the message.
#[track_caller]
fn refused(args: &[&str], env: &[(&str, &str)], parts: &[&str], absent: &[&str]) -> String {
    let err = client(args, env).assert_err(parts);
    for a in absent {
        assert!(!err.contains(a), "{args:?}: {err:?} should not say {a:?}");
    }
    err
}

/// Every command that talks to a coordinator, with `url` as its coordinator.
fn each_client(spec: &Path, url: &str, mut check: impl FnMut(&[&str])) {
    let spec = spec.to_str().unwrap();
    check(&["status", "--coordinator", url]);
    check(&["status", "some-id", "--coordinator", url]);
    check(&["cancel", "some-id", "--coordinator", url]);
    check(&["submit", spec, "--coordinator", url]);
    check(&["worker", "--exit-when-done", "--threads", "1", "--coordinator", url]);
}

#[test]
fn coordinator_urls_other_than_http_and_https_are_refused_by_every_command() {
    let dir = Dir::new();
    let spec = dir.create_spec(jobs::SMOKE_SPEC);
    for url in ["grpc://127.0.0.1:1", "grpcs://127.0.0.1:1", "ftp://127.0.0.1:1"] {
        let scheme = url.split("://").next().unwrap();
        each_client(&spec, url, |args| {
            refused(
                args,
                &[],
                &[
                    url,
                    &format!("scheme {scheme}:// is not supported"),
                    "use http://127.0.0.1:1 (or https://127.0.0.1:1 with --tls-ca)",
                ],
                &["refused", "dns error"],
            );
        });
    }
    // Without a scheme: said once, with the URL to use.
    each_client(&spec, "127.0.0.1:50051", |args| {
        let err = refused(
            args,
            &[],
            &["\"127.0.0.1:50051\"", "scheme is missing: use http://127.0.0.1:50051"],
            &[],
        );
        assert_eq!(err.matches("scheme is missing").count(), 1, "{err}");
    });
    // https:// needs the CA, and the token must not go out in plain text.
    each_client(&spec, "https://127.0.0.1:1", |args| {
        refused(
            args,
            &[],
            &["https://127.0.0.1:1", "--tls-ca", "MUGGINS_TLS_CA"],
            &["refused"],
        );
    });
    // A port that cannot be is not a refused connection.
    each_client(&spec, "http://127.0.0.1:99999", |args| {
        refused(
            args,
            &[],
            &["http://127.0.0.1:99999", "port \"99999\" is invalid", "1 to 65535"],
            &["refused"],
        );
    });
    // A CA with a plain http:// URL would send the token unencrypted too.
    let ca = dir.create("ca.pem", "not read");
    refused(
        &[
            "status",
            "--coordinator",
            "http://127.0.0.1:1",
            "--tls-ca",
            ca.to_str().unwrap(),
        ],
        &[],
        &[
            "--tls-ca is given but the URL is plain http://",
            "use https://127.0.0.1:1",
        ],
        &[],
    );
}

#[test]
fn connection_errors_name_the_url_and_what_answered_there() {
    // Nothing listens: said once, with the URL.
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}");
    let err = refused(
        &["status", "--coordinator", &url],
        &[],
        &[&format!("nothing listens at {url}"), "--coordinator"],
        &["tcp connect error"],
    );
    assert_eq!(err.lines().count(), 1, "{err}");

    let dir = Dir::new();
    let (port, metrics) = (free_port(), free_port());
    let metrics_addr = format!("127.0.0.1:{metrics}");
    let _coord = coordinator_with(
        port,
        dir.path(),
        30,
        &["--token", TOKEN, "--metrics-listen", &metrics_addr],
    );
    let url = format!("http://127.0.0.1:{port}");
    // The metrics port answers HTTP, but it is not the coordinator.
    let metrics_url = format!("http://{metrics_addr}");
    refused(
        &["status", "--coordinator", &metrics_url],
        &[("MUGGINS_TOKEN", TOKEN)],
        &[&metrics_url, "is not a muggins coordinator", "metrics port"],
        &[],
    );
    // No token, a wrong one, then the right one.
    refused(
        &["status", "--coordinator", &url],
        &[],
        &[&url, "requires a token", "MUGGINS_TOKEN", "--token"],
        &[],
    );
    refused(
        &["status", "--coordinator", &url, "--token", "not-the-right-token-at-all"],
        &[],
        &[&url, "refused the token", "MUGGINS_TOKEN", "--token"],
        &[],
    );
    let out = client(&["status", "--coordinator", &url], &[("MUGGINS_TOKEN", TOKEN)]).stdout();
    assert_eq!(out.trim(), "no experiments");

    // The token from a file (issue 42): only its owner may read it.
    use std::os::unix::fs::PermissionsExt;
    let file = dir.path().join("token");
    std::fs::write(&file, format!("{TOKEN}\n")).unwrap();
    let path = file.to_str().unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    refused(
        &["status", "--coordinator", &url, "--token-file", path],
        &[],
        &[path, "mode 0644", "chmod 600"],
        &[TOKEN],
    );
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let out = client(&["status", "--coordinator", &url, "--token-file", path], &[]).stdout();
    assert_eq!(out.trim(), "no experiments");
    refused(
        &["status", "--coordinator", &url, "--token-file", path],
        &[("MUGGINS_TOKEN", "another-token-of-sixteen-chars")],
        &["two different tokens"],
        &[TOKEN, "another-token"],
    );
    refused(
        &["status", "--coordinator", &url, "--token-file", "/nonexistent/token"],
        &[],
        &["--token-file /nonexistent/token"],
        &[],
    );
}

#[test]
fn the_coordinator_takes_its_token_from_a_file_that_only_its_owner_reads() {
    use std::os::unix::fs::PermissionsExt;
    let dir = Dir::new();
    let file = dir.path().join("token");
    std::fs::write(&file, format!("{TOKEN}\n")).unwrap();
    let path = file.to_str().unwrap();
    let state = dir.path().join("state.sqlite");
    let results = dir.path().join("results");
    let coordinator = |extra: &[&str]| {
        let port = free_port().to_string();
        let mut args = vec!["coordinator", "--listen"];
        let listen = format!("127.0.0.1:{port}");
        args.push(&listen);
        args.extend(extra);
        let (state, results) = (state.to_str().unwrap(), results.to_str().unwrap());
        args.extend(["--state", state, "--results", results]);
        client(&args, &[]).assert_err(&[])
    };
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
    let err = coordinator(&["--token-file", path]);
    assert!(
        err.contains(path) && err.contains("mode 0640") && err.contains("chmod 600"),
        "{err}"
    );
    assert!(!err.contains(TOKEN), "{err}");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let err = coordinator(&["--token-file", path, "--token", "another-token-of-sixteen-chars"]);
    assert!(err.contains("two different tokens"), "{err}");
    // With the file alone, it requires the file's token.
    let port = free_port();
    let _coord = coordinator_with(port, dir.path(), 30, &["--token-file", path]);
    let url = format!("http://127.0.0.1:{port}");
    refused(&["status", "--coordinator", &url], &[], &["requires a token"], &[]);
    let out = client(&["status", "--coordinator", &url], &[("MUGGINS_TOKEN", TOKEN)]).stdout();
    assert_eq!(out.trim(), "no experiments");
}

#[test]
fn an_unknown_experiment_id_suggests_the_ids_of_that_name() {
    let dir = Dir::new();
    let port = free_port();
    let _coord = coordinator_with(port, dir.path(), 30, &["--token", TOKEN]);
    let url = format!("http://127.0.0.1:{port}");
    let env = [("MUGGINS_TOKEN", TOKEN), ("MUGGINS_COORDINATOR", url.as_str())];
    refused(
        &["status", "smoke"],
        &env,
        &["no experiment with id \"smoke\"", "no experiments", "muggins submit"],
        &[],
    );
    let spec = dir.create_spec(jobs::SMOKE_SPEC);
    let id = client(&["submit", spec.to_str().unwrap()], &env)
        .stdout()
        .trim()
        .to_string();
    assert!(id.starts_with("smoke-") && id.len() == "smoke-".len() + 12, "{id}");
    let hint = format!("no experiment with id \"smoke\"; did you mean {id}?");
    refused(&["status", "smoke"], &env, &[&hint], &[]);
    refused(&["status", "smoke", "--watch"], &env, &[&hint], &[]);
    refused(&["cancel", "smoke"], &env, &[&hint], &[]);
    // The right name with the wrong hash, and a prefix of the id.
    refused(
        &["status", "smoke-000000000000"],
        &env,
        &[&format!("did you mean {id}?")],
        &[],
    );
    refused(&["status", &id[..9]], &env, &[&format!("did you mean {id}?")], &[]);
    // Nothing alike: the ids there are.
    refused(
        &["status", "other"],
        &env,
        &[&format!("no experiment with id \"other\"; the experiments are: {id}")],
        &[],
    );
    // The id itself works.
    let out = client(&["status", &id], &env).stdout();
    assert!(out.starts_with(&format!("{id}  running")));
}

#[test]
fn report_of_a_results_root_names_the_experiment_directories_inside() {
    let dir = Dir::new();
    let root = dir.join("results");
    dir.create_dir("results/smoke/games");
    dir.create_dir("results/not-an-experiment");
    let shown = root.display().to_string();
    refused(
        &["report", &shown],
        &[],
        &[&format!(
            "{shown} has no games/ folder: it is not an experiment directory; did you mean {}?",
            root.join("smoke").display()
        )],
        &[],
    );
    dir.create_dir("results/local/games");
    refused(
        &["report", &shown],
        &[],
        &[&format!(
            "did you mean one of {}, {}?",
            root.join("local").display(),
            root.join("smoke").display()
        )],
        &[],
    );
    let empty = root.join("not-an-experiment");
    refused(
        &["report", &empty.display().to_string()],
        &[],
        &["has no games/ folder", "<results>/<experiment>"],
        &[],
    );
    refused(
        &["report", &root.join("absent").display().to_string()],
        &[],
        &["absent: no such directory"],
        &[],
    );
}

#[test]
fn logs_carry_no_colour_codes_when_stderr_is_not_a_terminal() {
    let dir = Dir::new();
    let port = free_port();
    // A file, like a pipe, is not a terminal.
    let log_path = dir.join("coordinator.log");
    let _coord = TestCommand::new(&["coordinator", "--listen", &format!("127.0.0.1:{port}")])
        .arg("--state")
        .arg(dir.join("s.sqlite"))
        .arg("--results")
        .arg(dir.join("r"))
        .env_remove("NO_COLOR")
        .env_remove("MUGGINS_LOG")
        .env_remove("MUGGINS_TOKEN")
        .stdout_to(Stdio::null())
        .stderr_to(std::fs::File::create(&log_path).unwrap())
        .spawn();
    let log = || std::fs::read_to_string(&log_path).unwrap();
    crate::cluster::wait_for("the coordinator's first log line", 20, || {
        log().contains("coordinator listening")
    });
    let log = log();
    assert!(log.contains("INFO"), "{log}");
    assert!(!log.contains("\x1b["), "escape codes in {log:?}");
}

#[test]
fn state_file_errors_name_the_state_file_not_the_results_root() {
    let dir = Dir::new();
    let results = dir.join("results");
    let err = TestCommand::new(&[
        "coordinator",
        "--listen",
        "127.0.0.1:0",
        "--state",
        "/dev/null/nested/state.sqlite",
        "--results",
        results.to_str().unwrap(),
    ])
    .assert_err(&["--state /dev/null/nested/state.sqlite", "cannot create its directory"]);
    assert!(!err.contains("results root"), "{err}");
    // A state file that is not a database: one line that says so.
    let bogus = dir.create("bogus.sqlite", vec![b'x'; 4096]);
    let err = TestCommand::new(&[
        "coordinator",
        "--listen",
        "127.0.0.1:0",
        "--state",
        bogus.to_str().unwrap(),
        "--results",
        results.to_str().unwrap(),
    ])
    .assert_err(&[]);
    assert_eq!(err.matches("not a muggins state database").count(), 1, "{err}");
    assert!(!err.contains("file is not a database"), "{err}");
}

/// Python's stock `grpcio-reflection` client speaks only reflection v1alpha:
/// it must find the service (scripts/ci.sh installs it; the test fails, not
/// skips, without it).
#[test]
fn pythons_grpcio_reflection_client_finds_the_service() {
    let dir = Dir::new();
    let port = free_port();
    let _coord = coordinator_with(port, dir.path(), 30, &[]);
    let script = "import sys, grpc\n\
        from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase\n\
        db = ProtoReflectionDescriptorDatabase(grpc.insecure_channel(sys.argv[1]))\n\
        print('\\n'.join(db.get_services()))\n";
    let o = Command::new("python3")
        .args(["-c", script, &format!("127.0.0.1:{port}")])
        .output()
        .expect("python3");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "grpcio-reflection failed (python3 -m pip install grpcio grpcio-reflection): {}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(out.lines().any(|l| l == "muggins.v1.Coordinator"), "{out}");
}

#[test]
fn cancel_without_an_id_asks_for_it_and_never_shows_the_token_as_required() {
    let err = refused(
        &["cancel"],
        &[("MUGGINS_TOKEN", TOKEN)],
        &["cancel needs the experiment's id", "muggins status"],
        &["--token <TOKEN>", TOKEN],
    );
    assert!(!err.contains("Usage"), "{err}");
}

#[test]
fn play_refuses_settings_that_would_change_nothing() {
    for (args, parts) in [
        (
            &["play", "--preset", "all-fives", "--state", "5", "--set", "3"][..],
            &["--set", "--seats"][..],
        ),
        (
            &["play", "--preset", "all-fives", "--state", "5", "--match", "0"][..],
            &["--match", "0"][..],
        ),
        (&["play", "--state", "5", "--repeat", "0"][..], &["--repeat", "0"][..]),
        (
            &[
                "play",
                "--preset",
                "all-fives",
                "--state",
                "5",
                "--eval",
                "learned",
                "--agent",
                "heaviest",
            ][..],
            &["--eval learned", "fixed strategy"][..],
        ),
    ] {
        refused(args, &[], parts, &["panicked"]);
    }
    let help = TestCommand::new(&["play", "--help"]).stdout();
    assert!(help.contains("dominai"), "{help}");
}
