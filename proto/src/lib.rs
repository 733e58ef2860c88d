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

    /// A coordinator URL that cannot be used. The messages do not repeat the
    /// URL (callers name it once) but say what to use instead.
    #[derive(Debug, thiserror::Error)]
    pub enum EndpointError {
        #[error("scheme is missing: use http://{0}")]
        NoScheme(String),
        #[error("scheme {scheme}:// is not supported: use http://{rest} (or https://{rest} with --tls-ca)")]
        Scheme { scheme: String, rest: String },
        #[error(
            "https:// needs the CA certificate that signed the coordinator's: give --tls-ca FILE (or set \
             MUGGINS_TLS_CA), or use http://{0} if the coordinator does not speak TLS"
        )]
        HttpsWithoutCa(String),
        #[error(
            "--tls-ca is given but the URL is plain http://, which would send the token unencrypted: use \
             https://{0}"
        )]
        HttpWithCa(String),
        #[error("the host is missing: use http://HOST:PORT, e.g. http://127.0.0.1:50051")]
        NoHost,
        #[error("port {0:?} is invalid: a port is a number from 1 to 65535")]
        Port(String),
        #[error("not a valid URL: {0}")]
        Invalid(String),
        #[error("cannot set up TLS: {0}")]
        Tls(String),
    }

    /// Checks a coordinator URL: `http://HOST:PORT`, or `https://HOST:PORT`
    /// when `tls` is set. Any other scheme is refused rather than used as
    /// plain text, and so is a mismatch between the scheme and `tls`: either
    /// would send the token unencrypted.
    pub fn check_url(url: &str, tls: bool) -> Result<(), EndpointError> {
        let Some((scheme, rest)) = url.split_once("://") else {
            return Err(EndpointError::NoScheme(url.to_string()));
        };
        let rest_owned = rest.to_string();
        match (scheme.to_ascii_lowercase().as_str(), tls) {
            ("http", false) | ("https", true) => {}
            ("https", false) => return Err(EndpointError::HttpsWithoutCa(rest_owned)),
            ("http", true) => return Err(EndpointError::HttpWithCa(rest_owned)),
            _ => {
                return Err(EndpointError::Scheme {
                    scheme: scheme.to_string(),
                    rest: rest_owned,
                });
            }
        }
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        let host_port = authority.rsplit_once('@').map_or(authority, |(_, hp)| hp);
        // `http::Uri` keeps a port it cannot read as u16 and connects to the
        // scheme's default port instead, so check it here.
        let port = match host_port.strip_prefix('[') {
            Some(v6) => v6.split_once(']').and_then(|(_, p)| p.strip_prefix(':')),
            None => host_port.rsplit_once(':').map(|(_, p)| p),
        };
        let host = host_port.strip_suffix(port.map_or("", |p| p)).unwrap_or(host_port);
        if host.trim_end_matches(':').is_empty() {
            return Err(EndpointError::NoHost);
        }
        if let Some(p) = port
            && !p.parse::<u16>().is_ok_and(|n| n > 0)
        {
            return Err(EndpointError::Port(p.to_string()));
        }
        url.parse::<tonic::codegen::http::Uri>()
            .map_err(|e| EndpointError::Invalid(e.to_string()))?;
        Ok(())
    }

    /// An endpoint for `url` (checked by [`check_url`]), with TLS when `tls`
    /// is given (`https://` URLs).
    pub fn endpoint(url: &str, tls: Option<&ClientTls>) -> Result<tonic::transport::Endpoint, EndpointError> {
        check_url(url, tls.is_some())?;
        let mut e = tonic::transport::Endpoint::from_shared(url.to_string())
            .map_err(|e| EndpointError::Invalid(error_chain(&e)))?;
        if let Some(t) = tls {
            let mut c = tonic::transport::ClientTlsConfig::new()
                .ca_certificate(tonic::transport::Certificate::from_pem(&t.ca_pem));
            if let Some(d) = &t.domain {
                c = c.domain_name(d.clone());
            }
            e = e.tls_config(c).map_err(|e| EndpointError::Tls(error_chain(&e)))?;
        }
        Ok(e)
    }

    /// An error and its sources as one line, leaving out the generic
    /// "transport error" and any source that repeats the message before it
    /// (hyper and tonic wrap errors in layers that print the same text).
    pub fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
        let mut parts: Vec<String> = Vec::new();
        let mut next = Some(e);
        while let Some(err) = next {
            let text = err.to_string();
            let repeated = parts
                .last()
                .is_some_and(|last| last.contains(&text) || text.contains(last.as_str()));
            if repeated {
                // Keep the longer (more specific) of the two.
                if text.len() > parts.last().map_or(0, String::len) {
                    *parts.last_mut().expect("checked") = text;
                }
            } else if text != "transport error" {
                parts.push(text);
            }
            next = err.source();
        }
        parts.join(": ")
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
