//! The walls, tried from inside with a shell script: what it can see, read,
//! write and reach, and that nothing it starts outlives it.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use sandbox::{Config, Limits, start};

fn config(dir: &Path, read: Vec<std::path::PathBuf>) -> Config {
    Config {
        walls: true,
        required: false,
        network: false,
        limits: Limits {
            memory_mb: 1024,
            processes: 64,
            open_files: 256,
            cpu_s: 0,
        },
        read,
        dir: dir.to_path_buf(),
    }
}

/// Runs `script` with `sh` in the walls; its stdout.
fn run(script: &str, config: &Config) -> (String, Vec<&'static str>) {
    let mut cmd = Command::new("sh");
    cmd.args(["-c", script])
        .current_dir(&config.dir)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut started = start(cmd, config).expect("starts");
    let mut out = String::new();
    started
        .process
        .child()
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    started.process.kill();
    (out, started.missing)
}

#[test]
fn inside_it_sees_only_its_processes_reads_and_writes_only_what_it_is_given() {
    let root = tempfile::tempdir().unwrap();
    let own = root.path().join("own");
    let given = root.path().join("given");
    let secret = root.path().join("secret");
    for d in [&own, &given, &secret] {
        std::fs::create_dir(d).unwrap();
    }
    std::fs::write(given.join("f"), "given-text").unwrap();
    std::fs::write(secret.join("f"), "secret-text").unwrap();
    let c = config(&own, vec![given.clone()]);
    let script = format!(
        "ls /proc | grep -c '^[0-9]' ; cat {g}/f; echo; cat {s}/f 2>/dev/null || echo no-secret; \
         echo x > {own}/w && echo wrote-own; echo x > {g}/w 2>/dev/null || echo no-write-given; \
         echo x > /tmp/muggins-sandbox-probe-$$ 2>/dev/null || echo no-write-tmp; \
         cat /proc/1/environ >/dev/null && echo own-environ",
        g = given.display(),
        s = secret.display(),
        own = own.display()
    );
    let (out, missing) = run(&script, &c);
    assert!(missing.is_empty(), "every wall is up on this machine: {missing:?}");
    let lines: Vec<&str> = out.lines().collect();
    // sh, ls and grep, and nothing of the worker's.
    let procs: u32 = lines[0].trim().parse().unwrap();
    assert!(procs <= 4, "{out}");
    assert_eq!(
        &lines[1..],
        [
            "given-text",
            "no-secret",
            "wrote-own",
            "no-write-given",
            "no-write-tmp",
            "own-environ"
        ],
        "{out}"
    );
    assert!(own.join("w").exists());
}

#[test]
fn a_protected_path_under_a_readable_one_is_covered() {
    let root = tempfile::tempdir().unwrap();
    let own = root.path().join("own");
    std::fs::create_dir(&own).unwrap();
    let results = root.path().join("results");
    std::fs::create_dir(&results).unwrap();
    std::fs::write(results.join("rows"), "rows").unwrap();
    let token = root.path().join("token");
    std::fs::write(&token, "s3cret").unwrap();
    sandbox::protect(&results);
    sandbox::protect(&token);
    let c = config(&own, vec![root.path().to_path_buf()]);
    let script = format!(
        "cat {r}/rows 2>/dev/null || echo no-rows; cat {t} 2>/dev/null; echo end",
        r = results.display(),
        t = token.display()
    );
    let (out, missing) = run(&script, &c);
    assert!(missing.is_empty(), "{missing:?}");
    assert_eq!(out.lines().collect::<Vec<_>>(), ["no-rows", "end"], "{out}");
}

#[test]
fn no_network_without_network() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let own = tempfile::tempdir().unwrap();
    // bash's /dev/tcp, if bash is there; else sh cannot connect at all.
    let script = format!("bash -c 'echo hi > /dev/tcp/127.0.0.1/{port}' 2>/dev/null && echo connected || echo refused");
    let (out, _) = run(&script, &config(own.path(), vec![]));
    assert_eq!(out.trim(), "refused");
    let mut c = config(own.path(), vec![]);
    c.network = true;
    let (out, _) = run(&script, &c);
    assert_eq!(out.trim(), "connected");
}

fn alive(pid: u32) -> bool {
    // A zombie is not alive.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| !s.rsplit(')').next().unwrap_or("").trim_start().starts_with('Z'))
        .unwrap_or(false)
}

/// Processes of this machine whose command line holds `tag`.
fn with_tag(tag: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&p| alive(p))
        .filter(|p| {
            std::fs::read(format!("/proc/{p}/cmdline"))
                .map(|c| String::from_utf8_lossy(&c).contains(tag))
                .unwrap_or(false)
        })
        .collect()
}

#[test]
fn nothing_it_starts_outlives_it_sandboxed_or_not() {
    for walls in [true, false] {
        let own = tempfile::tempdir().unwrap();
        let tag = format!("muggins-orphan-{}-{walls}", std::process::id());
        // A child in its group, one in a session of its own, then it
        // waits on a third; each a shell with the tag in its arguments.
        std::fs::write(own.path().join("child.sh"), "sleep 300; :\n").unwrap();
        let file = own.path().join("run.sh");
        std::fs::write(
            &file,
            "sh child.sh \"$1\" & setsid sh child.sh \"$1\" & sh child.sh \"$1\"; :\n",
        )
        .unwrap();
        let mut c = config(own.path(), vec![own.path().to_path_buf()]);
        c.walls = walls;
        let mut cmd = Command::new("sh");
        cmd.arg(&file)
            .arg(&tag)
            .current_dir(own.path())
            .env("PATH", "/usr/bin:/bin");
        let mut started = start(cmd, &c).unwrap();
        let t = Instant::now();
        while with_tag(&tag).len() < 4 && t.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(20));
        }
        // At least: a shell's fork is counted too until it has exec'd.
        assert!(
            with_tag(&tag).len() >= 4,
            "walls {walls}: the script and its three children run"
        );
        started.process.kill();
        let t = Instant::now();
        while !with_tag(&tag).is_empty() && t.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(with_tag(&tag), Vec::<u32>::new(), "walls {walls}: none survives");
    }
}

#[test]
fn a_path_to_read_under_a_protected_one_is_refused_naming_both() {
    let root = tempfile::tempdir().unwrap();
    let secret = root.path().join("secret-root");
    let inside = secret.join("agent");
    std::fs::create_dir_all(&inside).unwrap();
    sandbox::protect(&secret);
    let own = root.path().join("own");
    std::fs::create_dir(&own).unwrap();
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg("true").current_dir(&own);
    match start(cmd, &config(&own, vec![inside.clone()])) {
        Err(sandbox::StartError::Protected { path, under }) => assert_eq!((path, under), (inside, secret)),
        other => panic!("{other:?}"),
    }
}
