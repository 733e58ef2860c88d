//! The web view over real HTTP on loopback: tokens (bearer, the sign-in
//! form's cookie, the read-only web token), escaping of what specs and
//! workers send, read-only methods. The browser test (scripts/web-test.py)
//! drives the same pages in Chromium.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::*;

const TOKEN: &str = "coordinator-token-0123456789";
const VIEW: &str = "read-only-view-token-0123456789";

/// A payload-laden agents spec: the name, agent names and comments.
const PAYLOAD: &str = r#"
# </pre><script>window.__pwned = 4</script><pre>
name = "<script>window.__pwned=1</script>\"><img src=x onerror=y>"
output = "payload"
seed = 3
[rules]
preset = "all-fives"
[grid]
information_source = ["oracle"]
observability = ["full"]
starting_states = "spread:20"
repeats = 1
agents = ["<img src=x onerror=window.__pwned=2>"]
opponents = ["random"]
[search]
depth = 1
[agents."<img src=x onerror=window.__pwned=2>"]
engine = "expectimax" # "><img src=x onerror=window.__pwned=5>
"#;

/// An HTTP/1.1 request: the status, the head and the body.
async fn http(
    addr: std::net::SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String, String) {
    let mut conn = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    conn.write_all(req.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    conn.read_to_end(&mut raw).await.unwrap();
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    (status, head.to_string(), body.to_string())
}

fn assert_no_markup_from_payloads(page: &str, body: &str) {
    for raw in ["<script>window", "<img src=x", "onerror=", "<pre><script", "\"><img"] {
        // `onerror=` may only appear escaped as text, never as markup: the
        // escaped forms hold no '<'.
        let markup = body
            .match_indices(raw)
            .any(|(i, _)| raw.starts_with('<') || body[..i].ends_with('<'));
        assert!(!markup, "{page}: raw payload {raw:?} in\n{body}");
    }
}

#[tokio::test]
async fn the_view_asks_for_a_token_escapes_what_specs_and_workers_send_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = start_config(dir, |c| {
        c.token = coordinator::Token::new(Some(TOKEN));
        c.web_token = coordinator::Token::new(Some(VIEW));
    })
    .await;
    let channel = tonic::transport::Endpoint::from_shared(s.url.clone())
        .unwrap()
        .connect()
        .await
        .unwrap();
    let auth: tonic::metadata::MetadataValue<_> = format!("Bearer {TOKEN}").parse().unwrap();
    let mut c = CoordinatorClient::with_interceptor(channel, move |mut r: tonic::Request<()>| {
        r.metadata_mut().insert("authorization", auth.clone());
        Ok(r)
    });
    let e = c
        .submit_experiment(SubmitExperimentRequest {
            spec_toml: PAYLOAD.into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .experiment
        .unwrap();
    assert!(
        e.id.chars().all(|ch| ch.is_ascii_alphanumeric() || "-_.".contains(ch)),
        "the id of a payload name is safe: {}",
        e.id
    );
    // A worker whose id is a payload calls in.
    let mut lease = lease_request(&s, "<b>w</b>\"><img src=x onerror=1>");
    lease.threads = 3;
    c.lease_task(lease).await.unwrap();

    // Without a token: the sign-in form, 401, on every page.
    for path in ["/", &format!("/experiments/{}", e.id), "/workers", "/api/experiments"] {
        let (status, _, body) = http(s.web, "GET", path, &[], "").await;
        assert_eq!(status, 401, "{path} without a token");
        assert!(body.contains("name=\"token\""), "{path}: the sign-in form");
        assert!(
            !body.contains("&lt;script&gt;window") && !body.contains("expectimax") && !body.contains("local-"),
            "{path} shows nothing of the experiments without a token"
        );
    }
    let (status, _, _) = http(
        s.web,
        "GET",
        "/",
        &[("Authorization", "Bearer wrong-token-0123456789")],
        "",
    )
    .await;
    assert_eq!(status, 401, "a wrong token");

    // The read-only token opens every page; payloads appear only escaped.
    let bearer = format!("Bearer {VIEW}");
    let auth = [("Authorization", bearer.as_str())];
    for path in [
        "/".to_string(),
        format!("/experiments/{}", e.id),
        "/workers".to_string(),
        format!("/experiments/{}/files/", e.id),
    ] {
        let (status, head, body) = http(s.web, "GET", &path, &auth, "").await;
        assert_eq!(status, 200, "{path}: {body}");
        assert!(
            head.to_ascii_lowercase()
                .contains("content-security-policy: default-src 'none'; script-src 'self'"),
            "{path}: {head}"
        );
        assert_no_markup_from_payloads(&path, &body);
    }
    let (_, _, page) = http(s.web, "GET", &format!("/experiments/{}", e.id), &auth, "").await;
    assert!(
        page.contains("&lt;script&gt;window.__pwned=1&lt;/script&gt;"),
        "the name, escaped: {page}"
    );
    assert!(
        page.contains("&lt;/pre&gt;&lt;script&gt;window.__pwned = 4"),
        "the comment, escaped"
    );
    let (_, _, workers) = http(s.web, "GET", "/workers", &auth, "").await;
    assert!(
        workers.contains("&lt;b&gt;w&lt;/b&gt;&quot;&gt;&lt;img"),
        "the worker id, escaped: {workers}"
    );
    assert!(workers.contains("<td class=\"num\">3</td>"), "its threads");
    let (_, _, list) = http(s.web, "GET", "/api/experiments", &auth, "").await;
    let list: serde_json::Value = serde_json::from_str(&list).unwrap();
    assert_eq!(list["experiments"][0]["id"], e.id.as_str());

    // The sign-in form: a wrong token is refused, a right one sets a
    // cookie (a digest, not the token) that opens the pages.
    let form = [("Content-Type", "application/x-www-form-urlencoded")];
    let (status, _, _) = http(s.web, "POST", "/login", &form, "token=nope&next=%2Fworkers").await;
    assert_eq!(status, 401);
    let (status, head, _) = http(s.web, "POST", "/login", &form, &format!("token={VIEW}&next=%2Fworkers")).await;
    assert_eq!(status, 303, "{head}");
    assert!(head.contains("location: /workers"), "{head}");
    let cookie = head
        .lines()
        .find_map(|l| l.strip_prefix("set-cookie: "))
        .and_then(|c| c.split(';').next())
        .unwrap()
        .to_string();
    assert!(!cookie.contains(VIEW), "the cookie is not the token");
    assert!(head.contains("HttpOnly") && head.contains("SameSite=Strict"), "{head}");
    let (status, _, _) = http(s.web, "GET", "/workers", &[("Cookie", &cookie)], "").await;
    assert_eq!(status, 200, "the cookie opens the view");
    let (_, head, _) = http(
        s.web,
        "POST",
        "/login",
        &form,
        &format!("token={VIEW}&next=%2F%2Fevil.example"),
    )
    .await;
    assert!(
        head.contains("location: /\r") || head.ends_with("location: /"),
        "no redirect off the site: {head}"
    );

    // Read-only: other methods are refused and change nothing.
    for method in ["POST", "PUT", "DELETE", "PATCH"] {
        let (status, _, _) = http(s.web, method, &format!("/experiments/{}", e.id), &auth, "x").await;
        assert_eq!(status, 405, "{method}");
    }
    let (_, _, after) = http(s.web, "GET", &format!("/experiments/{}", e.id), &auth, "").await;
    assert!(after.contains("s-running"), "the experiment still runs");

    // Files: nothing outside the experiment's directory, nothing hidden.
    for path in [
        "/files/..%2F..%2Fstate.sqlite",
        "/files/.muggins-results",
        "/files/%2Fetc%2Fpasswd",
    ] {
        let (status, _, _) = http(s.web, "GET", &format!("/experiments/{}{path}", e.id), &auth, "").await;
        assert_eq!(status, 404, "{path}");
    }
    tokio::time::sleep(Duration::from_millis(10)).await;
    s.stop().await;
}
