//! The web console's wiring (the console itself is `crates/console`):
//! `ferrodyn serve` mounts it at `/console` on its own port, driving itself
//! over loopback; `ferrodyn console` runs it alone in front of any endpoint,
//! AWS included. A token printed at start-up is demanded whenever the
//! console is reachable beyond loopback, the server verifies signatures, or
//! the endpoint is not local.

use clap::{Args, ValueEnum};
use ferrodyn_client::config::Environment;
use ferrodyn_client::{Client, ConnectionOptions};
use ferrodyn_console::{ConsoleOptions, BASE};
use std::collections::HashMap;
use std::net::SocketAddr;

/// An on/off option of `ferrodyn serve` (`--console`, `--partition-limits`).
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Switch {
    On,
    Off,
}

/// The console's router for `ferrodyn serve` listening on `address` (bound
/// from `host`), and the URL to print. With `credentials` the console signs
/// its calls with the first key (by id) and demands a token.
pub fn for_server(
    host: &str,
    address: SocketAddr,
    region: &str,
    credentials: Option<&HashMap<String, String>>,
) -> Result<(axum::Router, String), String> {
    let ip = address.ip();
    let own = if ip.is_unspecified() {
        if ip.is_ipv4() {
            "127.0.0.1".to_string()
        } else {
            "[::1]".to_string()
        }
    } else if ip.is_ipv6() {
        format!("[{ip}]")
    } else {
        ip.to_string()
    };
    let mut vars = HashMap::from([("AWS_REGION".to_string(), region.to_string())]);
    if let Some(keys) = credentials {
        let (id, secret) = keys
            .iter()
            .min_by(|a, b| a.0.cmp(b.0))
            .ok_or("--credentials given without a key")?;
        vars.insert("AWS_ACCESS_KEY_ID".into(), id.clone());
        vars.insert("AWS_SECRET_ACCESS_KEY".into(), secret.clone());
    }
    let endpoint = format!("http://{own}:{}", address.port());
    let client = Client::connect_with_env(
        &ConnectionOptions {
            endpoint_url: Some(endpoint),
            ..ConnectionOptions::default()
        },
        &Environment { vars, home: None },
    )
    .map_err(|e| format!("console: {e}"))?;
    let token = ferrodyn_console::needs_token(host, credentials.is_some())
        .then(ferrodyn_console::new_token);
    let shown = if ip.is_unspecified() {
        own
    } else {
        address_host(address)
    };
    Ok(build(
        client,
        None,
        host,
        token,
        &format!("{shown}:{}", address.port()),
    ))
}

fn address_host(address: SocketAddr) -> String {
    match address {
        SocketAddr::V4(a) => a.ip().to_string(),
        SocketAddr::V6(a) => format!("[{}]", a.ip()),
    }
}

/// The router and the URL to print (with `?token=` when one is required).
fn build(
    client: Client,
    streams_client: Option<Client>,
    host: &str,
    token: Option<String>,
    shown: &str,
) -> (axum::Router, String) {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let any_host = bare
        .parse::<std::net::IpAddr>()
        .is_ok_and(|ip| ip.is_unspecified());
    let url = match &token {
        Some(token) => format!("http://{shown}{BASE}?token={token}"),
        None => format!("http://{shown}{BASE}"),
    };
    let router = ferrodyn_console::router(ConsoleOptions {
        client,
        streams_client,
        token,
        hosts: vec![bare.to_string()],
        any_host,
    });
    (router, url)
}

#[derive(Args)]
#[command(after_help = "Examples:\n  \
    ferrodyn console                                   # in front of http://127.0.0.1:8000\n  \
    ferrodyn console --endpoint-url aws --region eu-west-1 --profile prod\n\n\
    Credentials come from the usual AWS places (AWS_* variables, ~/.aws/) and\n\
    never reach the browser. A token is printed and required unless both the\n\
    console and the endpoint are on this machine.")]
pub struct ConsoleArgs {
    /// The DynamoDB endpoint to drive [default: http://127.0.0.1:8000; `aws`
    /// means the region's AWS endpoint].
    #[arg(long, value_name = "URL")]
    endpoint_url: Option<String>,
    /// AWS region [default: AWS_REGION, the profile's, else us-east-1].
    #[arg(long)]
    region: Option<String>,
    /// Profile of ~/.aws/config and ~/.aws/credentials.
    #[arg(long)]
    profile: Option<String>,
    /// Address the console listens on.
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// Port the console listens on (0 picks a free one).
    #[arg(long, default_value_t = 8001)]
    port: u16,
}

/// AWS serves DynamoDB Streams on its own host; every other endpoint
/// (Ferrodyn, DynamoDB Local) on the same one.
fn streams_client(args: &ConsoleArgs, client: &Client) -> Result<Option<Client>, String> {
    let endpoint = client.endpoint();
    let Some(rest) = endpoint.strip_prefix("https://dynamodb.") else {
        return Ok(None);
    };
    Client::connect(&ConnectionOptions {
        endpoint_url: Some(format!("https://streams.dynamodb.{rest}")),
        region: args.region.clone(),
        profile: args.profile.clone(),
    })
    .map(Some)
    .map_err(|e| e.to_string())
}

/// `ferrodyn console`: the console alone, in front of any endpoint.
pub fn run(args: ConsoleArgs) -> Result<(), String> {
    let client = Client::connect(&ConnectionOptions {
        endpoint_url: args.endpoint_url.clone(),
        region: args.region.clone(),
        profile: args.profile.clone(),
    })
    .map_err(|e| e.to_string())?;
    let local = ferrodyn_client::config::is_local(client.endpoint());
    let streams = streams_client(&args, &client)?;
    let token = ferrodyn_console::needs_token(&args.host, !local).then(ferrodyn_console::new_token);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start runtime: {e}"))?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind((args.host.as_str(), args.port))
            .await
            .map_err(|e| format!("cannot listen on {}:{}: {e}", args.host, args.port))?;
        let address = listener.local_addr().map_err(|e| e.to_string())?;
        let endpoint = client.endpoint().to_string();
        let source = client.credentials_source().to_string();
        let shown = format!("{}:{}", address_host(address), address.port());
        let (router, url) = build(client, streams, &args.host, token, &shown);
        println!("ferrodyn console on {url}");
        println!("driving {endpoint} (credentials: {source})");
        axum::serve(listener, router)
            .with_graceful_shutdown(async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await
            .map_err(|e| format!("console error: {e}"))
    })
}
