//! No client can starve the server (issue 14): connections that never send,
//! slowloris senders and idle keep-alive connections are closed by the
//! header and idle timeouts, and at the connection cap (kept below the
//! descriptor limit) the connection idle longest makes room for a new one,
//! so normal SDK clients keep being served while attackers hold sockets.

use crate::util::{self, own_server, s};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The host:port of a server endpoint.
fn address(endpoint: &str) -> String {
    endpoint.trim_start_matches("http://").to_string()
}

/// Waits until the server closes `stream` (EOF or reset), up to `limit`;
/// returns how long that took, or None if it stayed open.
async fn closed_within(stream: &mut TcpStream, limit: Duration) -> Option<Duration> {
    let start = Instant::now();
    let mut buf = [0u8; 4096];
    loop {
        match tokio::time::timeout_at((start + limit).into(), stream.read(&mut buf)).await {
            Err(_) => return None,
            Ok(Ok(0)) | Ok(Err(_)) => return Some(start.elapsed()),
            Ok(Ok(_)) => continue, // a response; keep waiting for the close
        }
    }
}

#[tokio::test]
async fn idle_attackers_beyond_the_cap_do_not_lock_out_sdk_clients() {
    // 128 descriptors: the cap is 96 connections. The header timeout is long,
    // so only eviction at the cap can make room.
    let (server, client) = own_server(&["--open-files-limit", "128", "--header-timeout", "60"]);
    let table = util::table_s(&client).await;
    let mut attackers = Vec::new();
    for _ in 0..200 {
        attackers.push(
            TcpStream::connect(address(server.endpoint()))
                .await
                .unwrap(),
        );
    }
    for i in 0..20 {
        let started = Instant::now();
        let key = format!("k{i}");
        client
            .put_item()
            .table_name(&table)
            .item("p", s(&key))
            .send()
            .await
            .expect("PutItem is answered while attackers hold the cap");
        let got = client
            .get_item()
            .table_name(&table)
            .key("p", s(&key))
            .send()
            .await
            .expect("GetItem is answered while attackers hold the cap");
        assert!(got.item().is_some());
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "a put and a get took {:?}",
            started.elapsed()
        );
        // A fresh attacker after each call keeps the server at its cap.
        attackers.push(
            TcpStream::connect(address(server.endpoint()))
                .await
                .unwrap(),
        );
    }
    // Evicted connections close as their tasks wind down: probe until
    // enough are seen closed, for up to 5 s.
    let total = attackers.len();
    let mut closed = 0;
    let deadline = Instant::now() + Duration::from_secs(5);
    while closed < total - 96 && Instant::now() < deadline {
        let mut still_open = Vec::new();
        for mut stream in attackers {
            match closed_within(&mut stream, Duration::from_millis(5)).await {
                Some(_) => closed += 1,
                None => still_open.push(stream),
            }
        }
        attackers = still_open;
    }
    assert!(
        closed >= total - 96,
        "only {closed} of {total} idle attackers were closed"
    );
}

#[tokio::test]
async fn a_slowloris_sender_is_closed_within_the_header_timeout() {
    let (server, _) = own_server(&["--header-timeout", "1"]);
    let mut stream = TcpStream::connect(address(server.endpoint()))
        .await
        .unwrap();
    let started = Instant::now();
    let header =
        b"POST / HTTP/1.1\r\nHost: localhost\r\nX-Amz-Target: DynamoDB_20120810.ListTables\r\n";
    let mut closed = false;
    for byte in header.iter().cycle().take(100) {
        if stream.write_all(&[*byte]).await.is_err() {
            closed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        let mut probe = [0u8; 1];
        if let Ok(Ok(0) | Err(_)) =
            tokio::time::timeout(Duration::from_millis(1), stream.read(&mut probe)).await
        {
            closed = true;
            break;
        }
    }
    assert!(
        closed,
        "a header byte every 50 ms kept the connection open for 5 s"
    );
    let elapsed = started.elapsed();
    assert!(
        elapsed >= Duration::from_millis(900) && elapsed < Duration::from_secs(3),
        "closed after {elapsed:?}, header timeout 1 s"
    );
}

#[tokio::test]
async fn silent_and_idle_keep_alive_connections_are_closed() {
    let (server, _) = own_server(&["--header-timeout", "1", "--idle-timeout", "2"]);
    // Opened, never sends: the header timeout.
    let mut silent = TcpStream::connect(address(server.endpoint()))
        .await
        .unwrap();
    let after = closed_within(&mut silent, Duration::from_secs(4)).await;
    assert!(
        after.is_some_and(|d| d >= Duration::from_millis(900)),
        "silent connection closed after {after:?}"
    );
    // One request, then idle: the idle timeout.
    let mut idle = TcpStream::connect(address(server.endpoint()))
        .await
        .unwrap();
    idle.write_all(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .await
        .unwrap();
    let mut response = [0u8; 256];
    let n = idle.read(&mut response).await.unwrap();
    assert!(
        String::from_utf8_lossy(&response[..n]).starts_with("HTTP/1.1 200"),
        "health check answered"
    );
    let after = closed_within(&mut idle, Duration::from_secs(5)).await;
    assert!(
        after.is_some_and(|d| d >= Duration::from_millis(1800)),
        "idle keep-alive connection closed after {after:?}, idle timeout 2 s"
    );
}
