//! Where a connection's endpoint, region and credentials come from, resolved
//! the way the AWS CLI and SDKs do it so a user's existing setup just works:
//! explicit options, then environment variables, then the shared
//! `~/.aws/config` and `~/.aws/credentials` files, then defaults.
//!
//! Resolution reads an [`Environment`] value rather than the process
//! environment directly, so tests can describe a setup without touching
//! global state.

use crate::sigv4::Credentials;
use crate::{ClientError, ConnectionOptions};
use std::collections::HashMap;
use std::path::PathBuf;

/// The local Ferrodyn server, used when no endpoint is configured.
pub const DEFAULT_ENDPOINT: &str = "http://127.0.0.1:8000";

/// DynamoDB's default region, as in the AWS CLI when nothing is configured.
pub const DEFAULT_REGION: &str = "us-east-1";

/// The variables and files that configuration is read from.
#[derive(Debug, Clone, Default)]
pub struct Environment {
    /// Environment variables (only the `AWS_*` ones matter).
    pub vars: HashMap<String, String>,
    /// The home directory holding `.aws/`, if any.
    pub home: Option<PathBuf>,
}

impl Environment {
    /// This process's environment variables and `$HOME`.
    pub fn from_process() -> Environment {
        let vars: HashMap<String, String> = std::env::vars()
            .filter(|(name, _)| name.starts_with("AWS_") || name == "HOME")
            .collect();
        let home = vars.get("HOME").map(PathBuf::from);
        Environment { vars, home }
    }

    fn var(&self, name: &str) -> Option<&str> {
        self.vars
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }

    fn file(&self, override_var: &str, default_name: &str) -> Option<PathBuf> {
        match self.var(override_var) {
            Some(path) => Some(PathBuf::from(path)),
            None => self
                .home
                .as_ref()
                .map(|h| h.join(".aws").join(default_name)),
        }
    }
}

/// Everything a [`crate::Client`] needs to reach and sign for one endpoint.
#[derive(Debug, Clone)]
pub struct ResolvedConfig {
    /// Base URL, without a trailing slash.
    pub endpoint: String,
    pub region: String,
    pub credentials: Credentials,
    /// Where the credentials came from (for `--debug`-style reporting).
    pub credentials_source: String,
}

/// Resolves options against an environment; see the crate docs for the order.
pub fn resolve(
    options: &ConnectionOptions,
    env: &Environment,
) -> Result<ResolvedConfig, ClientError> {
    let profile = Profile::load(options, env)?;
    let region = options
        .region
        .clone()
        .or_else(|| env.var("AWS_REGION").map(str::to_string))
        .or_else(|| env.var("AWS_DEFAULT_REGION").map(str::to_string))
        .or_else(|| profile.config("region"))
        .unwrap_or_else(|| DEFAULT_REGION.to_string());
    let endpoint = options
        .endpoint_url
        .clone()
        .or_else(|| env.var("AWS_ENDPOINT_URL_DYNAMODB").map(str::to_string))
        .or_else(|| env.var("AWS_ENDPOINT_URL").map(str::to_string))
        .or_else(|| profile.config("endpoint_url"))
        .unwrap_or_else(|| DEFAULT_ENDPOINT.to_string());
    let endpoint = normalize_endpoint(&endpoint, &region)?;
    let (credentials, credentials_source) = choose_credentials(&profile, env, &endpoint)?;
    Ok(ResolvedConfig {
        endpoint,
        region,
        credentials,
        credentials_source,
    })
}

/// The AWS profile in use and its sections of `~/.aws/config` and
/// `~/.aws/credentials`.
struct Profile {
    name: String,
    /// Named by `--profile` (not by `AWS_PROFILE` or the default).
    explicit: bool,
    config: Option<HashMap<String, String>>,
    credentials: Option<HashMap<String, String>>,
}

impl Profile {
    fn load(options: &ConnectionOptions, env: &Environment) -> Result<Profile, ClientError> {
        let name = options
            .profile
            .clone()
            .or_else(|| env.var("AWS_PROFILE").map(str::to_string))
            .unwrap_or_else(|| "default".to_string());
        let mut config_file = read_ini(env.file("AWS_CONFIG_FILE", "config"))?;
        let mut credentials_file =
            read_ini(env.file("AWS_SHARED_CREDENTIALS_FILE", "credentials"))?;
        // In `config` a named profile's section is `[profile NAME]`; `[default]`
        // stays bare. In `credentials` sections are bare names.
        let config = if name == "default" {
            config_file
                .remove("default")
                .or_else(|| config_file.remove("profile default"))
        } else {
            config_file.remove(&format!("profile {name}"))
        };
        let credentials = credentials_file.remove(&name);
        let explicit = options.profile.is_some();
        if explicit && config.is_none() && credentials.is_none() {
            return Err(ClientError::Config(format!(
                "profile `{name}` is not in ~/.aws/config or ~/.aws/credentials"
            )));
        }
        Ok(Profile {
            name,
            explicit,
            config,
            credentials,
        })
    }

    /// A setting of the profile's `config` section.
    fn config(&self, key: &str) -> Option<String> {
        self.config.as_ref().and_then(|s| s.get(key)).cloned()
    }

    /// A setting from `credentials`, else from `config`.
    fn setting(&self, key: &str) -> Option<String> {
        self.credentials
            .as_ref()
            .and_then(|s| s.get(key))
            .cloned()
            .or_else(|| self.config(key))
    }

    fn keys(&self) -> Option<Credentials> {
        Some(Credentials {
            access_key_id: self.setting("aws_access_key_id")?,
            secret_access_key: self.setting("aws_secret_access_key")?,
            session_token: self.setting("aws_session_token"),
        })
    }
}

fn env_credentials(env: &Environment) -> Option<Credentials> {
    Some(Credentials {
        access_key_id: env.var("AWS_ACCESS_KEY_ID")?.to_string(),
        secret_access_key: env.var("AWS_SECRET_ACCESS_KEY")?.to_string(),
        session_token: env.var("AWS_SESSION_TOKEN").map(str::to_string),
    })
}

/// The credentials to sign with and where they came from. An explicit
/// `--profile` wins over credentials in the environment, as in the AWS CLI;
/// otherwise environment variables come first.
fn choose_credentials(
    profile: &Profile,
    env: &Environment,
    endpoint: &str,
) -> Result<(Credentials, String), ClientError> {
    let from_profile = || format!("profile {}", profile.name);
    match (profile.explicit, env_credentials(env), profile.keys()) {
        (true, _, Some(c)) => Ok((c, from_profile())),
        (_, Some(c), _) => Ok((c, "environment".to_string())),
        (_, None, Some(c)) => Ok((c, from_profile())),
        (_, None, None) if is_local(endpoint) => Ok((
            // A local server does not verify signatures, but requests must
            // still be signed, so any key will do.
            Credentials {
                access_key_id: "ferrodyn".to_string(),
                secret_access_key: "ferrodyn".to_string(),
                session_token: None,
            },
            "dummy (local endpoint)".to_string(),
        )),
        (true, _, None) => Err(ClientError::Config(format!(
            "profile `{}` has no aws_access_key_id/aws_secret_access_key",
            profile.name
        ))),
        (false, None, None) => Err(ClientError::Config(format!(
            "no credentials for {endpoint}: set AWS_ACCESS_KEY_ID and \
             AWS_SECRET_ACCESS_KEY, or add profile `{}` to ~/.aws/credentials",
            profile.name
        ))),
    }
}

/// Checks an endpoint URL and drops a trailing slash. The shorthand `aws`
/// stands for the region's public DynamoDB endpoint.
fn normalize_endpoint(endpoint: &str, region: &str) -> Result<String, ClientError> {
    if endpoint == "aws" {
        return Ok(format!("https://dynamodb.{region}.amazonaws.com"));
    }
    let trimmed = endpoint.trim_end_matches('/');
    let rest = trimmed
        .strip_prefix("http://")
        .or_else(|| trimmed.strip_prefix("https://"))
        .ok_or_else(|| {
            ClientError::Config(format!(
                "endpoint `{endpoint}` must start with http:// or https://"
            ))
        })?;
    if rest.is_empty() || rest.contains('/') {
        return Err(ClientError::Config(format!(
            "endpoint `{endpoint}` must be a scheme and host, like http://127.0.0.1:8000"
        )));
    }
    Ok(trimmed.to_string())
}

/// Whether an endpoint is on this machine (then dummy credentials are fine).
pub fn is_local(endpoint: &str) -> bool {
    let host = host_of(endpoint);
    let host = host
        .rsplit_once(':')
        .filter(|(_, port)| port.chars().all(|c| c.is_ascii_digit()))
        .map_or(host, |(h, _)| h);
    host == "localhost" || host.starts_with("127.") || host == "[::1]"
}

/// The `host[:port]` part of an endpoint URL.
pub fn host_of(endpoint: &str) -> &str {
    let rest = endpoint
        .strip_prefix("http://")
        .or_else(|| endpoint.strip_prefix("https://"))
        .unwrap_or(endpoint);
    rest.split('/').next().unwrap_or(rest)
}

type Ini = HashMap<String, HashMap<String, String>>;

/// Reads an INI-style AWS file; a missing file is an empty one.
fn read_ini(path: Option<PathBuf>) -> Result<Ini, ClientError> {
    let Some(path) = path else {
        return Ok(Ini::new());
    };
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok(parse_ini(&text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Ini::new()),
        Err(e) => Err(ClientError::Config(format!(
            "cannot read {}: {e}",
            path.display()
        ))),
    }
}

/// Parses `[section]` headers and `key = value` lines; `#`/`;` start comments.
/// Indented lines (nested settings such as `s3 =` blocks) are skipped.
pub fn parse_ini(text: &str) -> Ini {
    let mut sections = Ini::new();
    let mut current: Option<String> = None;
    for raw in text.lines() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            let name = name.split_whitespace().collect::<Vec<_>>().join(" ");
            sections.entry(name.clone()).or_default();
            current = Some(name);
            continue;
        }
        if raw.starts_with(char::is_whitespace) {
            continue;
        }
        if let (Some(section), Some((key, value))) = (&current, line.split_once('=')) {
            sections
                .entry(section.clone())
                .or_default()
                .insert(key.trim().to_string(), value.trim().to_string());
        }
    }
    sections
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_with(files: &[(&str, &str)], vars: &[(&str, &str)]) -> (Environment, tempfile::TempDir) {
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(home.path().join(".aws")).unwrap();
        for (name, text) in files {
            std::fs::write(home.path().join(".aws").join(name), text).unwrap();
        }
        let env = Environment {
            vars: vars
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            home: Some(home.path().to_path_buf()),
        };
        (env, home)
    }

    #[test]
    fn nothing_configured_means_local_server_us_east_1_and_dummy_credentials() {
        let (env, _home) = env_with(&[], &[]);
        let c = resolve(&ConnectionOptions::default(), &env).unwrap();
        assert_eq!(c.endpoint, DEFAULT_ENDPOINT);
        assert_eq!(c.region, "us-east-1");
        assert_eq!(c.credentials_source, "dummy (local endpoint)");
    }

    #[test]
    fn remote_endpoint_without_credentials_is_a_config_error() {
        let (env, _home) = env_with(&[], &[]);
        let options = ConnectionOptions {
            endpoint_url: Some("aws".into()),
            region: Some("eu-west-1".into()),
            profile: None,
        };
        let err = resolve(&options, &env).unwrap_err();
        assert!(matches!(err, ClientError::Config(m) if m.contains("no credentials")));
    }

    #[test]
    fn aws_shorthand_names_the_regional_endpoint() {
        let (env, _home) = env_with(
            &[],
            &[("AWS_ACCESS_KEY_ID", "A"), ("AWS_SECRET_ACCESS_KEY", "S")],
        );
        let options = ConnectionOptions {
            endpoint_url: Some("aws".into()),
            region: Some("eu-west-1".into()),
            profile: None,
        };
        let c = resolve(&options, &env).unwrap();
        assert_eq!(c.endpoint, "https://dynamodb.eu-west-1.amazonaws.com");
        assert_eq!(c.credentials_source, "environment");
    }

    #[test]
    fn region_order_is_option_then_env_then_profile() {
        let config = "[default]\nregion = ap-south-1\n[profile work]\nregion = eu-central-1\n";
        let (env, _home) = env_with(&[("config", config)], &[]);
        assert_eq!(
            resolve(&ConnectionOptions::default(), &env).unwrap().region,
            "ap-south-1"
        );
        let (env, _home) = env_with(
            &[("config", config)],
            &[("AWS_DEFAULT_REGION", "us-west-2")],
        );
        assert_eq!(
            resolve(&ConnectionOptions::default(), &env).unwrap().region,
            "us-west-2"
        );
        let (env, _home) = env_with(
            &[("config", config)],
            &[
                ("AWS_DEFAULT_REGION", "us-west-2"),
                ("AWS_REGION", "us-west-1"),
            ],
        );
        assert_eq!(
            resolve(&ConnectionOptions::default(), &env).unwrap().region,
            "us-west-1"
        );
        let options = ConnectionOptions {
            region: Some("sa-east-1".into()),
            ..Default::default()
        };
        assert_eq!(resolve(&options, &env).unwrap().region, "sa-east-1");
        let (env, _home) = env_with(&[("config", config)], &[("AWS_PROFILE", "work")]);
        assert_eq!(
            resolve(&ConnectionOptions::default(), &env).unwrap().region,
            "eu-central-1"
        );
    }

    #[test]
    fn profile_credentials_and_explicit_profile_beats_environment() {
        let credentials = "[default]\naws_access_key_id = DEF\naws_secret_access_key = defsecret\n\
                           [work]\naws_access_key_id = WORK\naws_secret_access_key = worksecret\naws_session_token = tok\n";
        let (env, _home) = env_with(
            &[("credentials", credentials)],
            &[
                ("AWS_ACCESS_KEY_ID", "ENV"),
                ("AWS_SECRET_ACCESS_KEY", "envsecret"),
            ],
        );
        let endpoint = Some("https://dynamodb.us-east-1.amazonaws.com".to_string());
        let implicit = ConnectionOptions {
            endpoint_url: endpoint.clone(),
            ..Default::default()
        };
        assert_eq!(
            resolve(&implicit, &env).unwrap().credentials.access_key_id,
            "ENV"
        );
        let explicit = ConnectionOptions {
            endpoint_url: endpoint,
            profile: Some("work".into()),
            ..Default::default()
        };
        let c = resolve(&explicit, &env).unwrap();
        assert_eq!(c.credentials.access_key_id, "WORK");
        assert_eq!(c.credentials.session_token.as_deref(), Some("tok"));
    }

    #[test]
    fn unknown_explicit_profile_is_reported() {
        let (env, _home) = env_with(&[], &[]);
        let options = ConnectionOptions {
            profile: Some("nope".into()),
            ..Default::default()
        };
        let err = resolve(&options, &env).unwrap_err();
        assert!(err.to_string().contains("profile `nope`"));
    }

    #[test]
    fn endpoints_are_checked_and_local_ones_recognised() {
        assert!(normalize_endpoint("localhost:8000", "r").is_err());
        assert_eq!(
            normalize_endpoint("http://h:1/", "r").unwrap(),
            "http://h:1"
        );
        assert!(is_local("http://127.0.0.1:8000"));
        assert!(is_local("http://localhost"));
        assert!(is_local("http://[::1]:8000"));
        assert!(!is_local("https://dynamodb.us-east-1.amazonaws.com"));
    }

    #[test]
    fn ini_parser_handles_comments_and_nested_blocks() {
        let ini = parse_ini(
            "# c\n[profile  x]\nregion=eu\ns3 =\n  max_concurrent_requests = 2\n; c\nkey = v = w\n",
        );
        let x = &ini["profile x"];
        assert_eq!(x["region"], "eu");
        assert_eq!(x["key"], "v = w");
        assert!(!x.contains_key("max_concurrent_requests"));
    }
}
