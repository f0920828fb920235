//! Who may use the console: same-origin requests only.
//!
//! - **Host** must be a loopback name or one the console was bound to, so a
//!   page on `evil.example` whose DNS is rebound to 127.0.0.1 gets 403.
//! - **Origin** (and `Sec-Fetch-Site`) of a request to the API must match the
//!   Host: a cross-origin POST gets 403. No CORS headers are ever sent, so
//!   browsers also refuse to hand other origins the answers.
//! - **Token**: when required (the console is reachable beyond loopback, or
//!   the server verifies signatures), every API request carries it in the
//!   `ferrodyn_console` cookie (set when the page is opened with
//!   `?token=...`, as Jupyter does) or an `X-Console-Token` header.

use crate::api::ApiFailure;
use crate::assets;
use axum::body::Body;
use axum::http::{header, HeaderMap, Method, Response, StatusCode};

/// Name of the cookie holding the token.
pub const COOKIE: &str = "ferrodyn_console";

pub struct Guard {
    token: Option<String>,
    hosts: Vec<String>,
    any_host: bool,
}

/// Whether `host` (a name or address, `[::1]` bracketed or not) is loopback.
pub fn is_loopback(host: &str) -> bool {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    bare == "localhost"
        || bare
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// The host name of a Host header value, without its port.
fn host_name(value: &str) -> &str {
    if let Some(rest) = value.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    value.rsplit_once(':').map_or(value, |(name, _)| name)
}

impl Guard {
    pub fn new(token: Option<String>, hosts: Vec<String>, any_host: bool) -> Guard {
        Guard {
            token,
            hosts,
            any_host,
        }
    }

    /// Refuses a Host header the console was not bound to (DNS rebinding).
    pub fn check_host(&self, headers: &HeaderMap) -> Result<(), ApiFailure> {
        let host = headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .unwrap_or("");
        let name = host_name(host);
        let known = is_loopback(name) || self.hosts.iter().any(|h| h.eq_ignore_ascii_case(name));
        if known || (self.any_host && !name.is_empty()) {
            return Ok(());
        }
        Err(ApiFailure::forbidden(&format!(
            "the console does not answer to Host '{host}' (DNS rebinding protection)"
        )))
    }

    /// Host, origin and token checks for an API request.
    pub fn check_api(&self, method: &Method, headers: &HeaderMap) -> Result<(), ApiFailure> {
        self.check_host(headers)?;
        let site = headers
            .get("sec-fetch-site")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        if site == "cross-site" || site == "same-site" {
            return Err(ApiFailure::forbidden("cross-origin requests are refused"));
        }
        if !matches!(*method, Method::GET | Method::HEAD) && !self.same_origin(headers) {
            return Err(ApiFailure::forbidden("cross-origin requests are refused"));
        }
        if !self.has_token(headers) {
            return Err(ApiFailure {
                status: StatusCode::UNAUTHORIZED,
                code: "MissingConsoleToken".into(),
                message: "this console needs the token printed when the server started: \
                          open the console URL with ?token=..."
                    .into(),
                body: None,
            });
        }
        Ok(())
    }

    /// A request without Origin (curl, same-origin GET) passes; one with an
    /// Origin must name this host.
    fn same_origin(&self, headers: &HeaderMap) -> bool {
        let Some(origin) = headers.get(header::ORIGIN).and_then(|o| o.to_str().ok()) else {
            return true;
        };
        let host = headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .unwrap_or("");
        origin == format!("http://{host}") || origin == format!("https://{host}")
    }

    fn has_token(&self, headers: &HeaderMap) -> bool {
        let Some(token) = &self.token else {
            return true;
        };
        let from_header = headers.get("x-console-token").and_then(|v| v.to_str().ok());
        let from_cookie = headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|pair| pair.trim().split_once('='))
            .find(|(name, _)| *name == COOKIE)
            .map(|(_, value)| value);
        [from_header, from_cookie]
            .into_iter()
            .flatten()
            .any(|given| constant_time_eq(given.as_bytes(), token.as_bytes()))
    }

    /// The console page; with a token required, `?token=` sets the cookie
    /// and redirects to the bare URL (so the token leaves the address bar).
    pub fn page(&self, headers: &HeaderMap, query: Option<&str>) -> Response<Body> {
        let given = query
            .into_iter()
            .flat_map(|q| q.split('&'))
            .filter_map(|pair| pair.split_once('='))
            .find(|(name, _)| *name == "token")
            .map(|(_, value)| value);
        if let (Some(token), Some(given)) = (&self.token, given) {
            if constant_time_eq(given.as_bytes(), token.as_bytes()) {
                let mut response = Response::new(Body::empty());
                *response.status_mut() = StatusCode::SEE_OTHER;
                let headers = response.headers_mut();
                headers.insert(header::LOCATION, "/console".parse().expect("valid"));
                let cookie = format!("{COOKIE}={token}; Path=/console; HttpOnly; SameSite=Strict");
                headers.insert(header::SET_COOKIE, cookie.parse().expect("valid"));
                return response;
            }
        }
        if !self.has_token(headers) {
            return assets::token_page();
        }
        assets::index()
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_names_lose_their_port() {
        assert_eq!(host_name("127.0.0.1:8000"), "127.0.0.1");
        assert_eq!(host_name("[::1]:8000"), "::1");
        assert_eq!(host_name("localhost"), "localhost");
        assert!(is_loopback("::1") && is_loopback("[::1]") && is_loopback("127.0.0.2"));
        assert!(!is_loopback("0.0.0.0") && !is_loopback("evil.example"));
    }
}
