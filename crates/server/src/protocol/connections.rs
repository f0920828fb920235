//! The connection layer under the HTTP router: accepting TCP connections,
//! serving HTTP/1.1 on each with hyper, and keeping any one client from
//! starving the others.
//!
//! Every connection is in one phase, and each phase but `Busy` has a
//! deadline ([`ConnectionLimits`]):
//! - `Fresh` (opened, nothing received) and `Head` (a request's first bytes
//!   received, headers not yet complete): the headers must be complete within
//!   the header timeout, so connections that never send and slowloris
//!   senders (a header byte now and then) are closed;
//! - `Idle` (a keep-alive connection between requests) and `Body` (headers
//!   read, body still arriving): closed after the idle timeout;
//! - `Busy` (the operation runs or its response is being produced): no limit,
//!   a slow DeleteTable is not a slow client.
//!
//! The number of open connections is capped below the process's descriptor
//! limit (the storage engine needs descriptors too). At the cap a new
//! connection is still served if an open one is doing nothing: the
//! connection that has waited longest without sending a byte is closed to
//! make room (then the slowest sender, then the longest-idle keep-alive
//! connection), so attackers holding idle sockets cannot lock normal clients
//! out; only when every connection has a request running is the new one
//! refused.

use axum::body::Body;
use axum::Router;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Notify};
use tokio::time::Instant;
use tower_service::Service;

/// Connections the kernel may queue before we accept them (capped by
/// net.core.somaxconn). Tokio's `TcpListener::bind` asks for 128, the
/// standard library's figure: a thousand clients connecting at once then
/// overflow the queue, and the dropped handshakes are retried by the
/// client's TCP a second later (the 1.45 s p99.9 of one 1,000-connection
/// run, BENCHMARKS.md).
pub const LISTEN_BACKLOG: u32 = 4096;

/// Binds `host:port` (the first address `host` resolves to) with
/// [`LISTEN_BACKLOG`].
pub async fn bind(host: &str, port: u16) -> io::Result<TcpListener> {
    let address = tokio::net::lookup_host((host, port))
        .await?
        .next()
        .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no address"))?;
    let socket = if address.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.bind(address)?;
    socket.listen(LISTEN_BACKLOG)
}

/// How long clients may take, and how many connections may be open.
#[derive(Clone, Copy, Debug)]
pub struct ConnectionLimits {
    /// Time to send a request's complete headers, from the connection's
    /// opening or the request's first byte.
    pub header_timeout: Duration,
    /// Time a keep-alive connection may sit between requests, and a request
    /// body may take to arrive after its headers.
    pub idle_timeout: Duration,
    /// Most connections open at once.
    pub max_connections: usize,
}

impl Default for ConnectionLimits {
    fn default() -> ConnectionLimits {
        ConnectionLimits {
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            max_connections: 1024,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Fresh,
    Head,
    Body,
    Idle,
    Busy,
    /// Chosen to make room for a new connection; closing.
    Evicted,
}

/// One open connection's phase, shared by its reader, its service and the
/// accept loop.
struct Connection {
    state: Mutex<(Phase, Instant)>,
    evict: Notify,
}

impl Connection {
    fn set(&self, phase: Phase) {
        let mut state = self.state.lock();
        if state.0 != Phase::Evicted {
            *state = (phase, Instant::now());
        }
    }

    /// Bytes arrived: a waiting connection starts a request.
    fn received(&self) {
        let mut state = self.state.lock();
        match state.0 {
            Phase::Idle => *state = (Phase::Head, Instant::now()),
            // The header clock of a fresh connection runs from its opening.
            Phase::Fresh => state.0 = Phase::Head,
            _ => {}
        }
    }

    /// When the current phase runs out (None: it does not).
    fn deadline(&self, limits: &ConnectionLimits) -> Option<Instant> {
        let (phase, since) = *self.state.lock();
        match phase {
            Phase::Fresh | Phase::Head => Some(since + limits.header_timeout),
            Phase::Idle | Phase::Body => Some(since + limits.idle_timeout),
            Phase::Busy => None,
            Phase::Evicted => Some(since),
        }
    }
}

/// Marks, from the request's handler, that the request has been received in
/// full (its body read): the connection is busy, not slow, from then on.
/// Inserted into every request's extensions by [`serve_connections`].
#[derive(Clone)]
pub struct RequestReceived(Arc<Connection>);

impl RequestReceived {
    pub fn mark(&self) {
        self.0.set(Phase::Busy);
    }
}

/// The open connections, for the cap and for eviction.
#[derive(Default)]
struct Registry {
    open: Mutex<HashMap<u64, Arc<Connection>>>,
    next_id: AtomicU64,
}

impl Registry {
    fn add(&self) -> (u64, Arc<Connection>) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let connection = Arc::new(Connection {
            state: Mutex::new((Phase::Fresh, Instant::now())),
            evict: Notify::new(),
        });
        self.open.lock().insert(id, Arc::clone(&connection));
        (id, connection)
    }

    fn remove(&self, id: u64) {
        self.open.lock().remove(&id);
    }

    /// Makes room for one more connection if the cap allows it, closing the
    /// connection that has waited longest without sending anything (then the
    /// slowest sender, then the longest-idle keep-alive connection). False:
    /// every connection is busy.
    fn make_room(&self, max: usize) -> bool {
        let open = self.open.lock();
        let closing = open
            .values()
            .filter(|c| c.state.lock().0 == Phase::Evicted)
            .count();
        if open.len() - closing < max {
            return true;
        }
        let victim = open
            .values()
            .filter_map(|c| {
                let (phase, since) = *c.state.lock();
                // Connections that never sent anything go first, then slow
                // senders; keep-alive connections that completed a request
                // (clients, as far as anyone can tell) go last.
                let rank = match phase {
                    Phase::Fresh => 0,
                    Phase::Head => 1,
                    Phase::Body => 2,
                    Phase::Idle => 3,
                    Phase::Busy | Phase::Evicted => return None,
                };
                Some(((rank, since), c))
            })
            .min_by_key(|(key, _)| *key)
            .map(|(_, c)| Arc::clone(c));
        let Some(victim) = victim else {
            return false;
        };
        *victim.state.lock() = (Phase::Evicted, Instant::now());
        victim.evict.notify_one();
        true
    }
}

/// Serves `router` on `listener` within `limits` until `shutdown` resolves,
/// then lets in-flight requests finish.
pub async fn serve_connections(
    listener: TcpListener,
    router: Router,
    limits: ConnectionLimits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    let registry = Arc::new(Registry::default());
    let (closing_tx, closing_rx) = watch::channel(false);
    let mut tasks = tokio::task::JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            _ = &mut shutdown => break,
            Some(_) = tasks.join_next(), if !tasks.is_empty() => continue,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                // Out of descriptors or a connection reset before accept:
                // wait a moment rather than spin, and keep serving.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                }
            },
        };
        if !registry.make_room(limits.max_connections) {
            drop(stream);
            continue;
        }
        let (id, connection) = registry.add();
        let registry = Arc::clone(&registry);
        let (router, closing) = (router.clone(), closing_rx.clone());
        tasks.spawn(async move {
            serve_one(stream, router, Arc::clone(&connection), limits, closing).await;
            registry.remove(id);
        });
    }
    let _ = closing_tx.send(true);
    while tasks.join_next().await.is_some() {}
    Ok(())
}

/// Serves one connection until the client closes it, a deadline passes, it
/// is evicted, or the server shuts down (then after its in-flight request).
async fn serve_one(
    stream: TcpStream,
    router: Router,
    connection: Arc<Connection>,
    limits: ConnectionLimits,
    mut closing: watch::Receiver<bool>,
) {
    let _ = stream.set_nodelay(true);
    let io = TokioIo::new(Watched {
        inner: stream,
        connection: Arc::clone(&connection),
    });
    let service_connection = Arc::clone(&connection);
    let service = service_fn(move |mut request: hyper::Request<Incoming>| {
        service_connection.set(Phase::Body);
        request
            .extensions_mut()
            .insert(RequestReceived(Arc::clone(&service_connection)));
        let mut router = router.clone();
        let connection = Arc::clone(&service_connection);
        async move {
            let response = router.call(request.map(Body::new)).await;
            connection.set(Phase::Idle);
            response
        }
    });
    let http = http1::Builder::new().serve_connection(io, service);
    tokio::pin!(http);
    let mut shutting_down = false;
    loop {
        let deadline = connection
            .deadline(&limits)
            .unwrap_or_else(|| Instant::now() + limits.idle_timeout);
        tokio::select! {
            _ = http.as_mut() => return,
            _ = connection.evict.notified() => return,
            changed = closing.changed(), if !shutting_down => {
                shutting_down = true;
                if changed.is_ok() {
                    http.as_mut().graceful_shutdown();
                }
            }
            _ = tokio::time::sleep_until(deadline) => {
                if connection.deadline(&limits).is_some_and(|d| d <= Instant::now()) {
                    return;
                }
            }
        }
    }
}

/// A TCP stream that tells its connection when bytes arrive.
struct Watched {
    inner: TcpStream,
    connection: Arc<Connection>,
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let result = Pin::new(&mut self.inner).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.connection.received();
        }
        result
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}
