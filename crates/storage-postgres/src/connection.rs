//! Database connections driven by the thread that asks: each pooled
//! connection owns a current-thread tokio runtime on which its
//! `tokio_postgres::Connection` task lives, and a storage call runs its
//! statements with that runtime's `block_on`, on the caller's own thread.
//! The socket is written, waited on and read there; no other thread is
//! woken for a query. (A shared multi-threaded client runtime cost four
//! thread hand-offs per PutItem, a spawn onto it and a channel back for each
//! of the read and the write: most of a node's CPU per request.)
//!
//! Statements are prepared once per connection and kept. A pool hands out
//! at most [`crate::POOL_SIZE`] connections; a call's deadline
//! ([`crate::OPERATION_TIMEOUT`] from its start) bounds the wait for one,
//! a new connection and the statements together. A connection that failed
//! below SQL or ran out of time is dropped, never returned. Because an
//! idle connection's task is not polled, a connection idle for a while is
//! first given a turn of its runtime so that a server that closed it (a
//! restart, a failover) is noticed before it is used.

use std::cell::RefCell;
use std::collections::HashMap;
use std::future::Future;
use std::time::{Duration, Instant};

use ferrodyn_storage::StorageError;
use parking_lot::{Condvar, Mutex};
use tokio::runtime::Runtime;
use tokio_postgres::{Client, Config, NoTls, Statement};

use crate::CONNECT_TIMEOUT;

/// Idle longer than this, a connection is checked before it is used.
const CHECK_AFTER_IDLE: Duration = Duration::from_millis(500);

/// One database session and the runtime that drives it.
pub(crate) struct Conn {
    /// Some until dropped (see `Drop`).
    runtime: Option<Runtime>,
    pub(crate) client: Client,
    statements: RefCell<HashMap<String, Statement>>,
    idle_since: Instant,
}

/// Runs `work` to completion on a connection's runtime, on the calling
/// thread. From a multi-threaded runtime's worker (never the request path:
/// the server calls storage on its blocking pool) it steps out of the worker
/// first; elsewhere that step only runs the closure.
fn drive<T>(runtime: &Runtime, work: impl Future<Output = T>) -> T {
    tokio::task::block_in_place(|| runtime.block_on(work))
}

impl Conn {
    pub(crate) fn open(
        config: &Config,
        target: &str,
        deadline: Instant,
    ) -> Result<Conn, StorageError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let allowed = deadline.saturating_duration_since(Instant::now());
        let connected = drive(&runtime, async {
            tokio::time::timeout(allowed, config.connect(NoTls)).await
        });
        let (client, connection) = match connected {
            Ok(Ok(pair)) => pair,
            Ok(Err(e)) => {
                runtime.shutdown_background();
                return Err(StorageError::Unavailable(format!(
                    "cannot connect to {target}: {e}"
                )));
            }
            Err(_) => {
                runtime.shutdown_background();
                return Err(StorageError::Unavailable(format!(
                    "cannot connect to {target}: no answer in time"
                )));
            }
        };
        // Polled whenever this runtime's block_on runs, i.e. while a
        // caller uses the connection.
        runtime.spawn(connection);
        for setting in crate::sql::SESSION_SETUP {
            let allowed = deadline.saturating_duration_since(Instant::now());
            let setup = client.batch_execute(setting);
            // A refusal (an engine without the setting) is ignored; no answer
            // in time fails the open: a session without `enable_seqscan =
            // off` would bring back the false serialization conflicts.
            let answered = drive(&runtime, async {
                tokio::time::timeout(allowed, setup).await
            });
            if answered.is_err() {
                runtime.shutdown_background();
                return Err(StorageError::Unavailable(format!(
                    "cannot set up a session on {target}: no answer in time"
                )));
            }
        }
        Ok(Conn {
            runtime: Some(runtime),
            client,
            statements: RefCell::new(HashMap::new()),
            idle_since: Instant::now(),
        })
    }

    /// Runs `work` on this connection's runtime, on the calling thread,
    /// until `deadline` (None: it ran out of time).
    pub(crate) fn block_on<T>(
        &self,
        work: impl Future<Output = T>,
        deadline: Instant,
    ) -> Option<T> {
        let runtime = self.runtime.as_ref().expect("open until dropped");
        let allowed = deadline.saturating_duration_since(Instant::now());
        drive(runtime, async {
            tokio::time::timeout(allowed, work).await.ok()
        })
    }

    /// The prepared statement for `sql`, prepared on first use.
    pub(crate) async fn prepared(&self, sql: &str) -> Result<Statement, tokio_postgres::Error> {
        if let Some(statement) = self.statements.borrow().get(sql) {
            return Ok(statement.clone());
        }
        let statement = self.client.prepare(sql).await?;
        (self.statements.borrow_mut()).insert(sql.to_string(), statement.clone());
        Ok(statement)
    }

    /// Lets the connection task read what arrived while idle (an EOF from
    /// a server that went away): two turns, so the task runs after the
    /// driver has seen the socket.
    fn still_open(&self) -> bool {
        let turns = async {
            tokio::task::yield_now().await;
            tokio::task::yield_now().await;
        };
        let _ = self.block_on(turns, Instant::now() + CONNECT_TIMEOUT);
        !self.client.is_closed()
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        // Never blocks, so a connection may be dropped on any thread.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// Up to `max` connections with one configuration.
pub(crate) struct Pool {
    config: Config,
    target: String,
    max: usize,
    state: Mutex<PoolState>,
    returned: Condvar,
}

struct PoolState {
    idle: Vec<Conn>,
    /// Connections handed out or idle.
    open: usize,
}

impl Pool {
    pub(crate) fn new(config: Config, target: &str, max: usize) -> Pool {
        Pool {
            config,
            target: target.to_string(),
            max,
            state: Mutex::new(PoolState {
                idle: Vec::new(),
                open: 0,
            }),
            returned: Condvar::new(),
        }
    }

    /// A connection: an idle one, a new one while fewer than `max` are
    /// open, or the first one returned before `deadline`.
    pub(crate) fn get(&self, deadline: Instant) -> Result<Leased<'_>, StorageError> {
        let mut state = self.state.lock();
        loop {
            if let Some(conn) = state.idle.pop() {
                drop(state);
                if conn.idle_since.elapsed() < CHECK_AFTER_IDLE || conn.still_open() {
                    return Ok(self.lease(conn));
                }
                self.forget(conn);
                state = self.state.lock();
                continue;
            }
            if state.open < self.max {
                state.open += 1;
                drop(state);
                return match Conn::open(&self.config, &self.target, deadline) {
                    Ok(conn) => Ok(self.lease(conn)),
                    Err(e) => {
                        self.state.lock().open -= 1;
                        self.returned.notify_one();
                        Err(e)
                    }
                };
            }
            if self.returned.wait_until(&mut state, deadline).timed_out() {
                return Err(StorageError::Unavailable(format!(
                    "no connection to {} came free in time",
                    self.target
                )));
            }
        }
    }

    /// A connection of this pool's configuration that is not counted in it
    /// and never returns to it: for a session held open for long (a view's
    /// transaction), which must not take a place short calls wait for.
    pub(crate) fn open_dedicated(&self, deadline: Instant) -> Result<Conn, StorageError> {
        Conn::open(&self.config, &self.target, deadline)
    }

    fn lease(&self, conn: Conn) -> Leased<'_> {
        Leased {
            pool: self,
            conn: Some(conn),
        }
    }

    fn forget(&self, conn: Conn) {
        drop(conn);
        self.state.lock().open -= 1;
        self.returned.notify_one();
    }
}

/// A connection taken from a [`Pool`]; back to it when dropped, unless
/// [`Leased::discard`]ed.
pub(crate) struct Leased<'a> {
    pool: &'a Pool,
    conn: Option<Conn>,
}

impl Leased<'_> {
    pub(crate) fn conn(&self) -> &Conn {
        self.conn.as_ref().expect("held until dropped")
    }

    /// The connection is broken or in an unknown state: close it.
    pub(crate) fn discard(mut self) {
        if let Some(conn) = self.conn.take() {
            self.pool.forget(conn);
        }
    }
}

impl Drop for Leased<'_> {
    fn drop(&mut self) {
        if let Some(mut conn) = self.conn.take() {
            conn.idle_since = Instant::now();
            self.pool.state.lock().idle.push(conn);
            self.pool.returned.notify_one();
        }
    }
}
