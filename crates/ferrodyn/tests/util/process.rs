//! Server processes and the CLI, as the tests start them:
//!
//! - [`server_binary`]: the `ferrodyn` binary Cargo built for this test run
//!   (`CARGO_BIN_EXE_ferrodyn`), so a test never runs a stale binary;
//! - [`ServerProcess`]: `ferrodyn serve ... --port 0 --exit-on-stdin-eof` as a
//!   child with stdin piped (it exits when the test process goes away and the
//!   pipe closes), its endpoint read from the first stdout line,
//!   `ferrodyn listening on http://127.0.0.1:PORT`, and its stderr in a log
//!   file under `target/tmp/ferrodyn-tests`;
//! - [`fresh_postgres_database`]: an empty database on the PostgreSQL server
//!   the PostgreSQL tests are given;
//! - [`cli_command`]: the binary as a client command, with the user's AWS
//!   settings removed so tests do not depend on who runs them.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc;
use std::time::Duration;

/// How long a spawned server may take to print its listening line.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(60);

/// How long a server may take to exit after SIGTERM.
const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(20);

/// The Cargo workspace (for the scripts the PostgreSQL tests run).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("workspace root exists")
}

/// The `ferrodyn` binary of this build.
pub fn server_binary() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_ferrodyn"))
}

/// A `ferrodyn serve` child process and the endpoint it listens on.
///
/// Dropping it kills the process (SIGKILL) and reaps it.
pub struct ServerProcess {
    child: Child,
    /// Held open so the server keeps running; closing it stops the server.
    stdin: Option<ChildStdin>,
    endpoint: String,
    log: PathBuf,
}

impl ServerProcess {
    /// Spawns `ferrodyn serve --port 0 --exit-on-stdin-eof` plus `extra` args
    /// and waits for its listening line.
    pub fn spawn(extra: &[&str]) -> ServerProcess {
        ServerProcess::spawn_on(extra, 0)
    }

    /// [`ServerProcess::spawn`] on a given port (servers that name each
    /// other, a server restarted where its peers expect it).
    pub fn spawn_on(extra: &[&str], port: u16) -> ServerProcess {
        static SERIAL: AtomicU32 = AtomicU32::new(0);
        let bin = server_binary();
        let log_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ferrodyn-tests");
        std::fs::create_dir_all(&log_dir).expect("log dir can be created");
        let log = log_dir.join(format!(
            "server-{}-{}.log",
            std::process::id(),
            SERIAL.fetch_add(1, Ordering::Relaxed)
        ));
        let mut child = Command::new(bin)
            .arg("serve")
            .args(extra)
            .args(["--port", &port.to_string(), "--exit-on-stdin-eof"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(File::create(&log).expect("log file can be created"))
            .spawn()
            .unwrap_or_else(|e| panic!("cannot spawn {}: {e}", bin.display()));
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout is piped");

        // A thread reads the first line and then keeps draining stdout, so a
        // chatty server never blocks on a full pipe.
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            let _ = tx.send(lines.next());
            for _ in lines {}
        });
        let first = match rx.recv_timeout(STARTUP_TIMEOUT) {
            Ok(Some(Ok(line))) => line,
            other => {
                let _ = child.kill();
                let status = child.wait();
                panic!(
                    "ferrodyn did not print its listening line ({other:?}, exit {status:?}); log: {}\n{}",
                    log.display(),
                    std::fs::read_to_string(&log).unwrap_or_default()
                );
            }
        };
        let endpoint = first
            .strip_prefix("ferrodyn listening on ")
            .unwrap_or_else(|| panic!("unexpected first line from ferrodyn: {first:?}"))
            .split_whitespace()
            .next()
            .unwrap_or_else(|| panic!("no URL in ferrodyn's first line: {first:?}"))
            .to_string();
        ServerProcess {
            child,
            stdin,
            endpoint,
            log,
        }
    }

    /// A throwaway in-memory server; with `FERRODYN_TEST_STORAGE` set to a
    /// PostgreSQL server (`postgres://USER@HOST:PORT`), a server over a
    /// fresh database there instead (see [`fresh_postgres_database`]), so
    /// the same tests run on the shared backend.
    pub fn in_memory() -> ServerProcess {
        match std::env::var("FERRODYN_TEST_STORAGE") {
            Ok(server) if !server.is_empty() => {
                let url = fresh_postgres_database(&server);
                ServerProcess::spawn(&["--storage", &url])
            }
            _ => ServerProcess::spawn(&["--in-memory"]),
        }
    }

    /// A durable server storing its data in `dir`.
    pub fn with_data_dir(dir: &Path) -> ServerProcess {
        let dir = dir.to_str().expect("temp dir path is UTF-8");
        ServerProcess::spawn(&["--data-dir", dir])
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The server's base URL, e.g. `http://127.0.0.1:40123`.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// The file the server's stderr goes to.
    pub fn log(&self) -> &Path {
        &self.log
    }

    /// Sends SIGTERM (a clean shutdown) and waits for the process to exit.
    pub fn terminate(mut self) -> ExitStatus {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("kill can be run");
        assert!(status.success(), "kill -TERM failed");
        // A bounded wait: a server that ignores SIGTERM (or waits forever for
        // idle keep-alive connections) fails the test instead of hanging it.
        let deadline = std::time::Instant::now() + SHUTDOWN_TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait().expect("server can be waited for") {
                return status;
            }
            if std::time::Instant::now() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!("ferrodyn did not exit within {SHUTDOWN_TIMEOUT:?} of SIGTERM");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Sends SIGKILL (a crash) and waits for the process to exit.
    pub fn kill(mut self) {
        self.child.kill().expect("server can be killed");
        self.child.wait().expect("server can be waited for");
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        drop(self.stdin.take());
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A TCP port free on loopback now (for servers that must know each
/// other's address before they start).
pub fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port exists");
    listener.local_addr().expect("a bound address").port()
}

/// Creates an empty database on the PostgreSQL server `server`
/// (`postgres://USER@HOST:PORT`, no database) with `psql`, and returns its
/// connection string. Databases are named per test process and call, and
/// left for the test cluster's teardown (`scripts/pg-cluster.sh stop`).
pub fn fresh_postgres_database(server: &str) -> String {
    static SERIAL: AtomicU32 = AtomicU32::new(0);
    let server = server.trim_end_matches('/');
    let name = format!(
        "ferrodyn_test_{}_{}",
        std::process::id(),
        SERIAL.fetch_add(1, Ordering::Relaxed)
    );
    let output = Command::new("psql")
        .arg(format!("{server}/postgres"))
        .args(["-q", "-c", &format!("CREATE DATABASE {name}")])
        .output()
        .expect("psql can be run (PostgreSQL's client)");
    assert!(
        output.status.success(),
        "cannot create database {name} on {server}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    format!("{server}/{name}")
}

/// The `ferrodyn` binary as a client command, with the user's AWS settings
/// removed and `HOME` pointed at an empty directory, so tests do not depend
/// on who runs them.
pub fn cli_command() -> Command {
    let mut command = Command::new(server_binary());
    for (name, _) in std::env::vars() {
        if name.starts_with("AWS_") {
            command.env_remove(name);
        }
    }
    command.env("HOME", std::env::temp_dir().join("ferrodyn-tests-home"));
    command
}
