//! The coordinator service's wire types and stubs, generated from
//! `proto/muggins.proto`, and the descriptor set for server reflection.

#[allow(clippy::all, missing_debug_implementations, unreachable_pub)]
mod generated {
    tonic::include_proto!("muggins.v1");
}

pub use generated::*;

/// The encoded `FileDescriptorSet` of the service, for gRPC reflection.
pub const FILE_DESCRIPTOR_SET: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/muggins_descriptor.bin"));

/// Clients that present the coordinator's bearer token, when one is configured.
pub mod client {
    use std::fmt;

    use tonic::metadata::{Ascii, MetadataValue};
    use tonic::service::Interceptor;
    use tonic::service::interceptor::InterceptedService;
    use tonic::transport::Channel;

    use crate::coordinator_client::CoordinatorClient;

    /// Adds `authorization: Bearer <token>` to every request. Its `Debug`
    /// never shows the token.
    #[derive(Clone, Default)]
    pub struct Auth {
        header: Option<MetadataValue<Ascii>>,
    }

    impl fmt::Debug for Auth {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(if self.header.is_some() {
                "Auth(token)"
            } else {
                "Auth(none)"
            })
        }
    }

    impl Interceptor for Auth {
        fn call(&mut self, mut req: tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> {
            if let Some(h) = &self.header {
                req.metadata_mut().insert("authorization", h.clone());
            }
            Ok(req)
        }
    }

    /// A token that cannot travel in a header.
    #[derive(Debug, thiserror::Error)]
    #[error("the token must be visible ASCII without spaces")]
    pub struct BadToken;

    impl Auth {
        pub fn new(token: Option<&str>) -> Result<Auth, BadToken> {
            let header = match token {
                None => None,
                Some(t) if t.is_empty() || !t.bytes().all(|b| b.is_ascii_graphic()) => return Err(BadToken),
                Some(t) => Some(format!("Bearer {t}").parse().map_err(|_| BadToken)?),
            };
            Ok(Auth { header })
        }
    }

    /// How a client checks the coordinator's TLS certificate.
    #[derive(Clone, Debug)]
    pub struct ClientTls {
        /// The CA certificate (PEM) that signed the coordinator's certificate.
        pub ca_pem: Vec<u8>,
        /// The name the certificate must carry (default: the URL's host).
        pub domain: Option<String>,
    }

    /// An endpoint for `url`, with TLS when `tls` is given (`https://` URLs).
    pub fn endpoint(url: &str, tls: Option<&ClientTls>) -> Result<tonic::transport::Endpoint, tonic::transport::Error> {
        let mut e = tonic::transport::Endpoint::from_shared(url.to_string())?;
        if let Some(t) = tls {
            let mut c = tonic::transport::ClientTlsConfig::new()
                .ca_certificate(tonic::transport::Certificate::from_pem(&t.ca_pem));
            if let Some(d) = &t.domain {
                c = c.domain_name(d.clone());
            }
            e = e.tls_config(c)?;
        }
        Ok(e)
    }

    /// The coordinator client every muggins tool uses.
    pub type Client = CoordinatorClient<InterceptedService<Channel, Auth>>;

    /// A client over `channel` presenting `token`.
    pub fn new(channel: Channel, token: Option<&str>) -> Result<Client, BadToken> {
        Ok(with_auth(channel, Auth::new(token)?))
    }

    /// A client over `channel` with `auth`.
    pub fn with_auth(channel: Channel, auth: Auth) -> Client {
        CoordinatorClient::with_interceptor(channel, auth)
            .max_decoding_message_size(16 << 20)
            .max_encoding_message_size(8 << 20)
    }
}
