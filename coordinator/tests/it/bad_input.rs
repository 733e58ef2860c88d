//! Malformed specs and requests, each answered with a clear error, while the
//! coordinator keeps serving.

use std::time::Duration;

use bytes::{Buf, BufMut};
use proto::*;
use tonic::Code;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};

use crate::{SPEC, start_with};

const TOKEN: &str = "bad-input-token-0123456789";

/// Sends raw bytes as a request body: for messages protobuf cannot decode.
#[derive(Debug, Default, Clone)]
struct Raw;
#[derive(Debug)]
struct RawEnc;
#[derive(Debug)]
struct RawDec;

impl Encoder for RawEnc {
    type Item = Vec<u8>;
    type Error = tonic::Status;
    fn encode(&mut self, item: Vec<u8>, dst: &mut EncodeBuf<'_>) -> Result<(), tonic::Status> {
        dst.put_slice(&item);
        Ok(())
    }
}

impl Decoder for RawDec {
    type Item = Vec<u8>;
    type Error = tonic::Status;
    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Vec<u8>>, tonic::Status> {
        let v = src.chunk().to_vec();
        src.advance(v.len());
        Ok(Some(v))
    }
}

impl Codec for Raw {
    type Encode = Vec<u8>;
    type Decode = Vec<u8>;
    type Encoder = RawEnc;
    type Decoder = RawDec;
    fn encoder(&mut self) -> RawEnc {
        RawEnc
    }
    fn decoder(&mut self) -> RawDec {
        RawDec
    }
}

async fn raw_call(channel: tonic::transport::Channel, method: &'static str, body: Vec<u8>) -> tonic::Status {
    let mut grpc = tonic::client::Grpc::new(channel);
    grpc.ready().await.unwrap();
    let mut req = tonic::Request::new(body);
    req.metadata_mut()
        .insert("authorization", format!("Bearer {TOKEN}").parse().unwrap());
    let path = tonic::codegen::http::uri::PathAndQuery::from_static(method);
    grpc.unary(req, path, Raw)
        .await
        .expect_err("a malformed message is refused")
}

fn code<T: std::fmt::Debug>(r: Result<tonic::Response<T>, tonic::Status>) -> Code {
    r.expect_err("the request is refused").code()
}

fn spec_with(line: &str) -> String {
    format!("{SPEC}{line}\n")
}

/// The specs the coordinator must refuse, each with the text its error names
/// (the key and value, or why).
fn bad_specs() -> Vec<(String, &'static str)> {
    vec![
        ("name = ".into(), "not valid TOML"),
        (spec_with("colour = 1"), "unknown key `shards.colour`"),
        (SPEC.replace("seed = 5", "seed = \"five\""), "seed = \"five\""),
        (SPEC.replace("seed = 5", "seed = -5"), "seed = -5"),
        (SPEC.replace("repeats = 1", "repeats = 0"), "grid.repeats = 0"),
        (SPEC.replace("target = [\"scorer\"]", "target = []"), "grid.target = []"),
        (
            SPEC.replace("target = [\"scorer\"]", "target = [\"cheater\"]"),
            "grid.target = \"cheater\"",
        ),
        (
            SPEC.replace("target = [\"scorer\"]", "target = [\"scorer\", \"scorer\"]"),
            "twice",
        ),
        (
            SPEC.replace("\"0-19\"", "\"0-5000\""),
            "grid.starting_states = \"0-5000\"",
        ),
        (SPEC.replace("\"0-19\"", "\"19-0\""), "backwards"),
        (spec_with("[rules]\nboneyard = 9"), "rules.boneyard = 9"),
        (spec_with("[rules]\nset = 10"), "rules.set = 10"),
        (
            SPEC.replace("repeats = 1", "repeats = 1000000")
                .replace("\"0-19\"", "\"all\""),
            "at most 100000000",
        ),
        (format!("output = \"../../etc\"\n{SPEC}"), "output = \"../../etc\""),
        (format!("output = \"/tmp/x\"\n{SPEC}"), "output = \"/tmp/x\""),
        (
            SPEC.replace("name = \"tiny\"", "name = \"_hidden\""),
            "name = \"_hidden\"",
        ),
        (
            format!("{SPEC}[search]\ndepth = 300\n").replace("[shards]\ngames = 20\n", ""),
            "search.depth = 300",
        ),
        (
            format!("{SPEC}[search]\nworlds = 0\n").replace("[shards]\ngames = 20\n", ""),
            "search.worlds = 0",
        ),
        (SPEC.replace("games = 20", "games = 0"), "shards.games = 0"),
        (
            format!("{SPEC}[classifier]\nholdout = 1.5\n")
                .replace("[shards]\ngames = 20\n", "")
                .replace(r#"["oracle"]"#, r#"["oracle", "classifier"]"#),
            "classifier.holdout = 1.5",
        ),
        (format!("{SPEC}# {}\n", "x".repeat(2 << 20)), "at most 1048576 bytes"),
    ]
}

/// Specs: each refused with the key and value named. Returns the number checked.
async fn bad_specs_are_refused_naming_key_and_value(c: &mut proto::client::Client) -> usize {
    let mut checked = 0;
    for (text, want) in &bad_specs() {
        let e = c
            .submit_experiment(SubmitExperimentRequest {
                spec_toml: text.clone(),
                ..Default::default()
            })
            .await
            .unwrap_err();
        assert_eq!(e.code(), Code::InvalidArgument, "{want}: {}", e.message());
        assert!(e.message().contains(want), "{:?} lacks {want:?}", e.message());
        checked += 1;
    }
    checked
}

/// Requests naming no experiment, no worker or no lease. Returns the number checked.
async fn bad_requests_are_refused(c: &mut proto::client::Client) -> usize {
    assert_eq!(
        code(c.get_experiment(GetExperimentRequest { id: "nope".into() }).await),
        Code::NotFound
    );
    assert_eq!(
        code(c.get_experiment(GetExperimentRequest { id: String::new() }).await),
        Code::InvalidArgument
    );
    assert_eq!(
        code(c.cancel_experiment(CancelExperimentRequest { id: "nope".into() }).await),
        Code::NotFound
    );
    assert_eq!(
        code(c.watch_experiment(GetExperimentRequest { id: "nope".into() }).await),
        Code::NotFound
    );
    assert_eq!(
        code(
            c.lease_task(LeaseTaskRequest {
                worker_id: String::new(),
                threads: 1,
                ..Default::default()
            })
            .await
        ),
        Code::InvalidArgument
    );
    assert_eq!(
        code(
            c.lease_task(LeaseTaskRequest {
                worker_id: "w".repeat(300),
                threads: 1,
                ..Default::default()
            })
            .await
        ),
        Code::InvalidArgument
    );
    let hb = HeartbeatRequest {
        chunks: Vec::new(),
        worker_id: "w".into(),
        task_id: "games-00000".into(),
        lease_token: String::new(),
        games_done: 0,
    };
    assert_eq!(code(c.heartbeat(hb.clone()).await), Code::InvalidArgument);
    let hb = HeartbeatRequest {
        chunks: Vec::new(),
        lease_token: "0000000000000000".into(),
        ..hb
    };
    assert!(!c.heartbeat(hb).await.unwrap().into_inner().lease_valid);
    8
}

/// A completion of a task under a lease nobody was given.
fn never_leased() -> CompleteTaskRequest {
    CompleteTaskRequest {
        chunks: Vec::new(),
        worker_id: "w".into(),
        task_id: "games-00000".into(),
        lease_token: "ffffffffffffffffffffffffffffffff".into(),
        rows: 20,
        checksum: "x".into(),
        temp_file: "tiny/games/.part-00000.tmp".into(),
        ..Default::default()
    }
}

/// Completing or failing a task one never leased. Returns the number checked.
async fn tasks_never_leased_are_refused(c: &mut proto::client::Client) -> usize {
    let never = never_leased();
    let r = c.complete_task(never.clone()).await.unwrap().into_inner();
    assert!(!r.accepted && r.reason.contains("stale lease"), "{}", r.reason);
    let r = c
        .fail_task(FailTaskRequest {
            worker_id: "w".into(),
            task_id: "games-00000".into(),
            lease_token: "ffffffffffffffffffffffffffffffff".into(),
            error: "x".into(),
            retryable: true,
            release: false,
        })
        .await
        .unwrap()
        .into_inner();
    assert!(!r.accepted && r.reason.contains("stale lease"));
    assert_eq!(
        code(
            c.complete_task(CompleteTaskRequest {
                chunks: Vec::new(),
                checksum: "c".repeat(500),
                ..never.clone()
            })
            .await
        ),
        Code::InvalidArgument
    );
    3
}

/// A real lease, then a completion naming a path outside its directory.
/// Returns the submitted experiment's id and the number checked.
async fn completions_outside_their_directory_are_refused(
    c: &mut proto::client::Client,
    s: &crate::Server,
) -> (String, usize) {
    let never = never_leased();
    let e = c
        .submit_experiment(SubmitExperimentRequest {
            spec_toml: SPEC.into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let t = c
        .lease_task(crate::lease_request(s, "w"))
        .await
        .unwrap()
        .into_inner()
        .task
        .unwrap();
    let mut checked = 0;
    for path in [
        "../../../etc/passwd",
        "tiny/games/part-00000.parquet",
        "tiny/games/../x/.p",
        "/abs/.p",
    ] {
        let r = c
            .complete_task(CompleteTaskRequest {
                chunks: Vec::new(),
                task_id: t.task_id.clone(),
                lease_token: t.lease_token.clone(),
                temp_file: path.into(),
                ..never.clone()
            })
            .await
            .unwrap()
            .into_inner();
        assert!(
            !r.accepted && r.reason.contains("hidden file directly under"),
            "{path}: {}",
            r.reason
        );
        checked += 1;
    }
    (e.experiment.as_ref().unwrap().id.clone(), checked)
}

/// Truncated and garbage protobuf, and too large a message. Returns the number checked.
async fn malformed_messages_are_refused(channel: &tonic::transport::Channel) -> usize {
    let mut checked = 0;
    for body in [vec![0x0a, 0x50, b'a', b'b'], vec![0xff; 9], vec![0x0a]] {
        let st = raw_call(channel.clone(), "/muggins.v1.Coordinator/SubmitExperiment", body).await;
        assert!(matches!(st.code(), Code::Internal | Code::InvalidArgument), "{st:?}");
        assert!(st.message().to_lowercase().contains("decode"), "{}", st.message());
        checked += 1;
    }
    // Too large a message.
    let st = raw_call(
        channel.clone(),
        "/muggins.v1.Coordinator/SubmitExperiment",
        vec![0u8; 5 << 20],
    )
    .await;
    assert!(
        matches!(st.code(), Code::OutOfRange | Code::ResourceExhausted | Code::Internal),
        "{st:?}"
    );
    checked += 1;
    checked
}

/// Missing and wrong tokens, asking for experiment `id`. Returns the number checked.
async fn missing_and_wrong_tokens_are_refused(channel: &tonic::transport::Channel, id: &str) -> usize {
    let mut checked = 0;
    for bad in [None, Some("wrong-token-wrong-token")] {
        let mut anon = proto::client::new(channel.clone(), bad).unwrap();
        assert_eq!(
            code(anon.get_experiment(GetExperimentRequest { id: id.to_string() }).await),
            Code::Unauthenticated
        );
        checked += 1;
    }
    checked
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thirty_and_more_bad_inputs_get_clear_errors_and_the_server_keeps_serving() {
    let mut s = start_with(tempfile::tempdir().unwrap(), Duration::from_secs(30), Some(TOKEN)).await;
    let channel = crate::channel(&s.url).await;
    let mut c = proto::client::new(channel.clone(), Some(TOKEN)).unwrap();
    let mut checked = 0;
    checked += bad_specs_are_refused_naming_key_and_value(&mut c).await;
    checked += bad_requests_are_refused(&mut c).await;
    checked += tasks_never_leased_are_refused(&mut c).await;
    let (id, n) = completions_outside_their_directory_are_refused(&mut c, &s).await;
    checked += n;
    checked += malformed_messages_are_refused(&channel).await;
    checked += missing_and_wrong_tokens_are_refused(&channel, &id).await;
    assert!(checked >= 30, "{checked} bad inputs");
    // Still serving.
    let list = c
        .list_experiments(ListExperimentsRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(list.experiments.len(), 1);
    let ok = c
        .submit_experiment(SubmitExperimentRequest {
            spec_toml: SPEC.replace("name = \"tiny\"", "name = \"tiny2\""),
            ..Default::default()
        })
        .await;
    assert!(ok.unwrap().into_inner().created);
    s.stop().await;
}
