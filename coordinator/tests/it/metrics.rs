//! `GET /metrics`: the counts of tasks, games, workers and refusals, and the
//! KEDA rule's demand, which drops to zero when an experiment is cancelled.

use std::time::Duration;

use proto::*;

use crate::{SPEC, client, complete, fail, lease, start, submit};

/// `GET /metrics` over a plain HTTP/1.1 request.
pub async fn scrape(addr: std::net::SocketAddr) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut conn = tokio::net::TcpStream::connect(addr).await.unwrap();
    conn.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut body = String::new();
    conn.read_to_string(&mut body).await.unwrap();
    assert!(body.starts_with("HTTP/1.1 200"), "{body}");
    body
}

fn metric(text: &str, line_start: &str) -> f64 {
    text.lines()
        .find(|l| l.starts_with(line_start))
        .unwrap_or_else(|| panic!("no {line_start} in {text}"))
        .rsplit(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

#[tokio::test]
async fn metrics_count_tasks_games_workers_and_refusals() {
    let mut s = start(Duration::from_millis(300)).await;
    let mut c = client(&s.url).await;
    submit(&mut c, SPEC).await;
    let a = lease(&mut c, &s, "worker-a").await.unwrap();
    tokio::time::sleep(Duration::from_millis(400)).await;
    let b = lease(&mut c, &s, "worker-b").await.unwrap();
    assert!(!complete(&mut c, &s, &a, &a.lease_token).await.accepted);
    assert!(complete(&mut c, &s, &b, &b.lease_token).await.accepted);
    let t = lease(&mut c, &s, "worker-b").await.unwrap();
    assert!(fail(&mut c, "worker-b", &t, "flaky", true).await.accepted);
    let text = scrape(s.metrics).await;
    assert!(text.contains("# TYPE muggins_tasks gauge"), "{text}");
    assert_eq!(metric(&text, "muggins_tasks{stage=\"games\",state=\"done\"}"), 1.0);
    assert_eq!(metric(&text, "muggins_tasks{stage=\"games\",state=\"pending\"}"), 3.0);
    assert_eq!(metric(&text, "muggins_experiments{state=\"running\"}"), 1.0);
    assert_eq!(metric(&text, "muggins_games_completed "), 20.0);
    assert!(metric(&text, "muggins_games_per_second ") > 0.0);
    assert_eq!(metric(&text, "muggins_workers_alive "), 2.0);
    assert_eq!(metric(&text, "muggins_lease_expiries_total "), 1.0);
    assert_eq!(metric(&text, "muggins_stale_completions_rejected_total "), 1.0);
    assert_eq!(metric(&text, "muggins_task_retries_total "), 1.0);
    assert_eq!(metric(&text, "muggins_completions_total "), 1.0);
    s.stop().await;
}

/// The KEDA rule's query in deploy/kubernetes/keda/scaledobject.yaml,
/// `sum(muggins_tasks{state=~"pending|leased"})`, over a scrape.
fn keda_demand(text: &str) -> f64 {
    let rule = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../deploy/kubernetes/keda/scaledobject.yaml"
    ))
    .unwrap();
    assert!(
        rule.contains(r#"sum(muggins_tasks{state=~"pending|leased"})"#),
        "{rule}"
    );
    text.lines()
        .filter(|l| {
            l.starts_with("muggins_tasks{") && (l.contains(r#"state="pending""#) || l.contains(r#"state="leased""#))
        })
        .map(|l| l.rsplit(' ').next().unwrap().parse::<f64>().unwrap())
        .sum()
}

#[tokio::test]
async fn a_cancelled_experiments_tasks_are_not_pending_so_workers_scale_to_zero() {
    let mut s = start(Duration::from_secs(30)).await;
    let mut c = client(&s.url).await;
    let e = submit(&mut c, SPEC).await;
    let _held = lease(&mut c, &s, "worker-a").await.unwrap();
    assert!(keda_demand(&scrape(s.metrics).await) > 0.0);
    c.cancel_experiment(CancelExperimentRequest { id: e.id.clone() })
        .await
        .unwrap();
    let text = scrape(s.metrics).await;
    assert_eq!(keda_demand(&text), 0.0, "{text}");
    assert!(
        metric(&text, "muggins_tasks{stage=\"games\",state=\"abandoned\"}") >= 3.0,
        "{text}"
    );
    assert!(!text.contains(r#"state="pending""#), "{text}");
    s.stop().await;
}
