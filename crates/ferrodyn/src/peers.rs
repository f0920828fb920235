//! The other Ferrodyn servers that hold regions of this server's global
//! tables (`ferrodyn serve --peer REGION=URL`, repeatable). The engine sees
//! them only as a `PeerLink` (engine/src/replication/); this module owns
//! the HTTP call: a POST of the message to the peer's
//! `/ferrodyn/replication`, signed (SigV4, service `dynamodb`, the target
//! region) with the first `--credentials` key, which the servers share, or
//! with a placeholder key when the servers verify no signatures.

use ferrodyn_client::sigv4;
use ferrodyn_engine::replication::{PeerError, PeerLink};
use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

/// How long one message may take: a peer that does not answer is a
/// failure the sender retries with a back-off, never a hang.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
const PATH: &str = "/ferrodyn/replication";

/// `--peer` values as a map of region → base URL.
pub fn parse(specs: &[String], own_region: &str) -> Result<BTreeMap<String, String>, String> {
    let mut peers = BTreeMap::new();
    for spec in specs {
        let (region, url) = (spec.split_once('='))
            .filter(|(r, u)| {
                !r.is_empty() && (u.starts_with("http://") || u.starts_with("https://"))
            })
            .ok_or_else(|| format!("invalid --peer '{spec}': expected REGION=http://HOST:PORT"))?;
        if region == own_region {
            return Err(format!(
                "--peer {region}: that is this server's own --region"
            ));
        }
        if peers
            .insert(region.to_string(), url.trim_end_matches('/').to_string())
            .is_some()
        {
            return Err(format!("--peer {region} is given twice"));
        }
    }
    Ok(peers)
}

/// The signed HTTP client of peer messages.
pub struct PeerClient {
    agent: ureq::Agent,
    credentials: sigv4::Credentials,
}

impl PeerClient {
    /// A client signing with `key` (ACCESS_KEY_ID, SECRET), the first
    /// `--credentials` key.
    pub fn new(key: Option<(String, String)>) -> PeerClient {
        let (access_key_id, secret_access_key) =
            key.unwrap_or_else(|| ("ferrodyn-peer".into(), "ferrodyn-peer".into()));
        PeerClient {
            agent: ureq::Agent::config_builder()
                .http_status_as_error(false)
                .timeout_global(Some(REQUEST_TIMEOUT))
                .build()
                .into(),
            credentials: sigv4::Credentials {
                access_key_id,
                secret_access_key,
                session_token: None,
            },
        }
    }
}

/// A peer's answers that say it did not accept this server's signature.
const AUTHENTICATION_ERRORS: [&str; 5] = [
    "UnrecognizedClientException",
    "InvalidSignatureException",
    "IncompleteSignatureException",
    "MissingAuthenticationTokenException",
    "AccessDeniedException",
];

impl PeerLink for PeerClient {
    fn call(&self, url: &str, message: &[u8]) -> Result<Vec<u8>, PeerError> {
        let host = (url.split_once("://").map_or(url, |(_, rest)| rest))
            .split('/')
            .next()
            .unwrap_or_default()
            .to_string();
        let region = region_of(message);
        let headers = [
            ("content-type", "application/json"),
            ("host", host.as_str()),
        ];
        let signed = sigv4::sign(
            &sigv4::Request {
                method: "POST",
                path: PATH,
                query: &[],
                headers: &headers,
                body: message,
            },
            &self.credentials,
            &region,
            "dynamodb",
            SystemTime::now(),
        );
        let mut builder =
            (self.agent.post(format!("{url}{PATH}"))).header("content-type", "application/json");
        for (name, value) in &signed {
            builder = builder.header(name, value);
        }
        let unreachable = PeerError::Unreachable;
        let mut response = (builder.send(message))
            .map_err(|e| unreachable(format!("cannot reach the peer at {url}: {e}")))?;
        let status = response.status().as_u16();
        let body = (response.body_mut().read_to_vec())
            .map_err(|e| unreachable(format!("reading the peer's answer: {e}")))?;
        if status == 200 {
            return Ok(body);
        }
        let json: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
        let kind = json["__type"].as_str().unwrap_or("HTTP error");
        let kind = kind.rsplit('#').next().unwrap_or(kind);
        let text = json["message"].as_str().unwrap_or_default();
        // A client error is the peer's answer to this message; anything
        // else (a 5xx, a proxy's page) says the region is not there now, and
        // so does a refused signature (the servers' --credentials disagree:
        // nothing the client can mend).
        let refused = (400..500).contains(&status)
            && kind != "HTTP error"
            && !AUTHENTICATION_ERRORS.contains(&kind);
        match refused {
            true => Err(PeerError::Refused {
                name: kind.to_string(),
                message: text.to_string(),
            }),
            false => Err(unreachable(format!("{kind} (HTTP {status}): {text}"))),
        }
    }
}

/// The region a message addresses (its signature's scope).
fn region_of(message: &[u8]) -> String {
    let json: serde_json::Value = serde_json::from_slice(message).unwrap_or_default();
    json["to"]["Region"]
        .as_str()
        .unwrap_or("us-east-1")
        .to_string()
}
