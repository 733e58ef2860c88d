//! What the server shows on the wire: gRPC reflection (v1 and v1alpha), the
//! bearer token required on every RPC, and TLS with rustls.

use std::time::Duration;

use proto::*;

use crate::{SPEC, channel, client, lease_request, start, start_with};

/// The services a reflection client lists, in protocol `$v` (`v1` or
/// `v1alpha`): the two protocols' generated types are distinct, so one
/// macro asks both the same way.
macro_rules! listed_services {
    ($v:ident, $channel:expr) => {{
        use tonic_reflection::pb::$v::ServerReflectionRequest;
        use tonic_reflection::pb::$v::server_reflection_client::ServerReflectionClient;
        use tonic_reflection::pb::$v::server_reflection_request::MessageRequest;
        use tonic_reflection::pb::$v::server_reflection_response::MessageResponse;
        let mut r = ServerReflectionClient::new($channel);
        let req = ServerReflectionRequest {
            host: String::new(),
            message_request: Some(MessageRequest::ListServices(String::new())),
        };
        let mut stream = r
            .server_reflection_info(tokio_stream::iter(vec![req]))
            .await
            .unwrap()
            .into_inner();
        let msg = stream.message().await.unwrap().unwrap();
        let Some(MessageResponse::ListServicesResponse(list)) = msg.message_response else {
            panic!("unexpected reflection answer: {msg:?}");
        };
        list.service.into_iter().map(|s| s.name).collect::<Vec<String>>()
    }};
}

#[tokio::test]
async fn grpc_reflection_lists_the_service() {
    let mut s = start(Duration::from_secs(30)).await;
    client(&s.url).await;
    let names = listed_services!(v1, channel(&s.url).await);
    assert!(names.contains(&"muggins.v1.Coordinator".to_string()), "{names:?}");
    s.stop().await;
}

#[tokio::test]
async fn reflection_v1alpha_lists_the_service_for_grpcio_clients() {
    let mut s = start(Duration::from_secs(30)).await;
    let names = listed_services!(v1alpha, channel(&s.url).await);
    assert!(names.contains(&"muggins.v1.Coordinator".to_string()), "{names:?}");
    s.stop().await;
}

#[tokio::test]
async fn a_configured_token_is_required_on_every_rpc() {
    let token = "s3cret-token-0123456789";
    let mut s = start_with(tempfile::tempdir().unwrap(), Duration::from_secs(30), Some(token)).await;
    let channel = channel(&s.url).await;
    for bad in [None, Some("wrong-token-0123456789"), Some("s3cret-token-012345678")] {
        let mut c = proto::client::new(channel.clone(), bad).unwrap();
        let e = c.list_experiments(ListExperimentsRequest {}).await.unwrap_err();
        assert_eq!(e.code(), tonic::Code::Unauthenticated, "{bad:?}");
        assert!(e.message().contains("bearer token"));
        assert!(!e.message().contains(token), "the token is never echoed");
        let e = c.lease_task(lease_request(&s, "w")).await.unwrap_err();
        assert_eq!(e.code(), tonic::Code::Unauthenticated);
        let e = c
            .submit_experiment(SubmitExperimentRequest {
                spec_toml: SPEC.into(),
                ..Default::default()
            })
            .await
            .unwrap_err();
        assert_eq!(e.code(), tonic::Code::Unauthenticated);
    }
    // Reflection is behind the token too.
    {
        use tonic_reflection::pb::v1::ServerReflectionRequest;
        use tonic_reflection::pb::v1::server_reflection_client::ServerReflectionClient;
        use tonic_reflection::pb::v1::server_reflection_request::MessageRequest;
        let mut r = ServerReflectionClient::new(channel.clone());
        let req = ServerReflectionRequest {
            host: String::new(),
            message_request: Some(MessageRequest::ListServices(String::new())),
        };
        let e = r
            .server_reflection_info(tokio_stream::iter(vec![req]))
            .await
            .unwrap_err();
        assert_eq!(e.code(), tonic::Code::Unauthenticated);
    }
    let mut c = proto::client::new(channel, Some(token)).unwrap();
    let e = c
        .submit_experiment(SubmitExperimentRequest {
            spec_toml: SPEC.into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert!(e.created);
    assert!(
        c.lease_task(lease_request(&s, "w"))
            .await
            .unwrap()
            .into_inner()
            .task
            .is_some()
    );
    assert!(
        proto::client::new(
            tonic::transport::Endpoint::from_static("http://127.0.0.1:1").connect_lazy(),
            Some("has space")
        )
        .is_err()
    );
    assert_eq!(format!("{:?}", coordinator::Token::new(Some(token))), "Token(set)");
    s.stop().await;
}

#[tokio::test]
async fn tls_with_rustls_serves_clients_that_trust_the_certificate() {
    let ck = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    let tls = coordinator::Tls {
        cert_pem: ck.cert.pem().into_bytes(),
        key_pem: ck.signing_key.serialize_pem().into_bytes(),
    };
    assert_eq!(format!("{tls:?}"), "Tls(cert, key)");
    let dir = tempfile::tempdir().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let mut config = coordinator::Config::new(dir.path().join("state.sqlite"), dir.path().join("results"));
    config.tls = Some(tls);
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let handle = tokio::spawn(coordinator::serve(listener, config, async {
        let _ = rx.await;
    }));
    let trust = proto::client::ClientTls {
        ca_pem: ck.cert.pem().into_bytes(),
        domain: None,
    };
    let url = format!("https://localhost:{port}");
    let mut ok = None;
    for _ in 0..100 {
        if let Ok(ch) = proto::client::endpoint(&url, Some(&trust)).unwrap().connect().await {
            ok = Some(ch);
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut c = proto::client::new(ok.expect("a TLS connection"), None).unwrap();
    let e = c
        .submit_experiment(SubmitExperimentRequest {
            spec_toml: SPEC.into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert!(e.created);
    // A plaintext client gets nowhere.
    let plain = tonic::transport::Endpoint::from_shared(format!("http://127.0.0.1:{port}"))
        .unwrap()
        .connect()
        .await;
    if let Ok(ch) = plain {
        let mut c = proto::client::new(ch, None).unwrap();
        assert!(c.list_experiments(ListExperimentsRequest {}).await.is_err());
    }
    // A client that does not trust the certificate cannot connect.
    let other = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    let wrong = proto::client::ClientTls {
        ca_pem: other.cert.pem().into_bytes(),
        domain: None,
    };
    let res = proto::client::endpoint(&url, Some(&wrong)).unwrap().connect().await;
    match res {
        Err(_) => {}
        Ok(ch) => assert!(
            proto::client::new(ch, None)
                .unwrap()
                .list_experiments(ListExperimentsRequest {})
                .await
                .is_err()
        ),
    }
    let _ = tx.send(());
    handle.await.unwrap().unwrap();
}
