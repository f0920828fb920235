//! A TCP proxy on loopback that a test cuts and restores: a network
//! partition between two servers (`--peer REGION=http://127.0.0.1:PORT`
//! pointing at the proxy). Plain threads, so it keeps forwarding whatever
//! the test's runtime is doing.

use parking_lot::Mutex;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

pub struct Proxy {
    port: u16,
    cut: Arc<AtomicBool>,
    /// Both ends of every connection open now, to close them on a cut.
    open: Arc<Mutex<Vec<TcpStream>>>,
}

impl Proxy {
    /// Forwards connections on a free port to `target` on loopback.
    pub fn start(target: u16) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let port = listener.local_addr().expect("bound").port();
        let cut = Arc::new(AtomicBool::new(false));
        let open: Arc<Mutex<Vec<TcpStream>>> = Arc::default();
        let (is_cut, conns) = (Arc::clone(&cut), Arc::clone(&open));
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let server = match is_cut.load(Ordering::SeqCst) {
                    true => None,
                    false => TcpStream::connect(("127.0.0.1", target)).ok(),
                };
                let Some(server) = server else {
                    let _ = client.shutdown(Shutdown::Both);
                    continue;
                };
                let ends = [&client, &server].map(|s| s.try_clone().expect("a socket clone"));
                conns.lock().extend(ends);
                pipe(
                    client.try_clone().expect("a socket clone"),
                    server.try_clone().expect("a socket clone"),
                );
                pipe(server, client);
            }
        });
        Proxy { port, cut, open }
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Refuses new connections and closes the open ones.
    pub fn cut(&self) {
        self.cut.store(true, Ordering::SeqCst);
        for stream in self.open.lock().drain(..) {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }

    /// Forwards again.
    pub fn restore(&self) {
        self.cut.store(false, Ordering::SeqCst);
    }
}

/// Copies `from` to `to` on a thread until either end closes.
fn pipe(mut from: TcpStream, mut to: TcpStream) {
    std::thread::spawn(move || {
        let mut buffer = [0u8; 16 * 1024];
        loop {
            match from.read(&mut buffer) {
                Ok(0) | Err(_) => break,
                Ok(n) if to.write_all(&buffer[..n]).is_err() => break,
                Ok(_) => {}
            }
        }
        let _ = to.shutdown(Shutdown::Both);
    });
}
