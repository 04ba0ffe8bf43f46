//! [`LiveServer`]: the page and the WebSocket on one local port, a thread per connection.

use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, Ipv4Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use tungstenite::{Message, Utf8Bytes};

use super::command::Command;

/// Where the server listens.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerOptions {
    /// Address to bind; 127.0.0.1 by default.
    pub host: IpAddr,
    /// Port; 0: any free port (the bound one is [`LiveServer::addr`]).
    pub port: u16,
    /// Binding a non-loopback address is refused unless this is set (the server has no
    /// authentication: whoever reaches the port can steer the simulation).
    pub allow_remote: bool,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions { host: IpAddr::V4(Ipv4Addr::LOCALHOST), port: 0, allow_remote: false }
    }
}

/// A request head larger than this is refused.
const MAX_HEAD: usize = 16 * 1024;
/// How long a page's thread waits for a new frame before it reads the socket again.
const FRAME_WAIT: Duration = Duration::from_millis(10);
/// A page whose socket takes no bytes for this long is dropped.
const WRITE_TIMEOUT: Duration = Duration::from_secs(5);

/// What the server's threads share.
struct Shared {
    page: String,
    /// The newest frame and its number (0: none yet).
    frame: Mutex<(u64, Utf8Bytes)>,
    new_frame: Condvar,
    commands: Mutex<Vec<Command>>,
    pages: AtomicUsize,
    stop: AtomicBool,
    /// Host names a request may carry when the server is loopback only (DNS rebinding).
    hosts: Vec<String>,
}

/// The live viewer's server (see the module docs of [`crate::live`]); stops when dropped.
pub struct LiveServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
}

impl LiveServer {
    /// Binds `options` and serves `page` (the HTML) and the frame stream from a thread.
    pub fn start(options: &ServerOptions, page: String) -> Result<LiveServer> {
        if !options.host.is_loopback() && !options.allow_remote {
            bail!(
                "the live viewer listens on loopback addresses only (127.0.0.1, ::1), not {}: it has no \
                 authentication, anyone who reaches the port can steer the simulation; allow it explicitly \
                 (--live-allow-remote, allow_remote=True) on a network you trust",
                options.host
            );
        }
        let listener = TcpListener::bind((options.host, options.port))
            .with_context(|| format!("live viewer: cannot listen on {}:{}", options.host, options.port))?;
        let addr = listener.local_addr()?;
        let port = addr.port();
        let hosts = if options.allow_remote {
            Vec::new()
        } else {
            ["127.0.0.1", "localhost", "[::1]"].iter().map(|h| format!("{h}:{port}")).collect()
        };
        let shared = Arc::new(Shared {
            page,
            frame: Mutex::new((0, Utf8Bytes::from_static(""))),
            new_frame: Condvar::new(),
            commands: Mutex::new(Vec::new()),
            pages: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
            hosts,
        });
        let s = shared.clone();
        let accept = std::thread::Builder::new()
            .name("karakuri-live".into())
            .spawn(move || accept_loop(&listener, &s))?;
        Ok(LiveServer { addr, shared, accept: Some(accept) })
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The page's address, `http://127.0.0.1:PORT/`.
    pub fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    /// Makes `frame` the newest; pages' threads send it when they can. Never waits on a page.
    pub fn publish(&self, frame: String) {
        let mut slot = lock(&self.shared.frame);
        *slot = (slot.0 + 1, Utf8Bytes::from(frame));
        drop(slot);
        self.shared.new_frame.notify_all();
    }

    /// The commands received since the last call, oldest first.
    pub fn take_commands(&self, into: &mut Vec<Command>) {
        into.append(&mut lock(&self.shared.commands));
    }

    /// Pages connected to the stream now.
    pub fn pages(&self) -> usize {
        self.shared.pages.load(Ordering::SeqCst)
    }
}

impl Drop for LiveServer {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        self.shared.new_frame.notify_all();
        // wake the accept loop
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(200));
        if let Some(h) = self.accept.take() {
            let _ = h.join();
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn accept_loop(listener: &TcpListener, shared: &Arc<Shared>) {
    for stream in listener.incoming() {
        if shared.stop.load(Ordering::SeqCst) {
            return;
        }
        let Ok(stream) = stream else { continue };
        let s = shared.clone();
        // a connection's failure ends its own thread only
        let _ = std::thread::Builder::new()
            .name("karakuri-live-page".into())
            .spawn(move || {
                let _ = connection(stream, &s);
            });
    }
}

/// The request head, peeked (left in the socket for the WebSocket handshake to read).
fn peek_head(stream: &TcpStream) -> Result<String> {
    let mut buf = vec![0u8; MAX_HEAD];
    let start = Instant::now();
    loop {
        let n = stream.peek(&mut buf)?;
        if let Some(end) = buf[..n].windows(4).position(|w| w == b"\r\n\r\n") {
            return Ok(String::from_utf8_lossy(&buf[..end + 4]).into_owned());
        }
        if n == 0 || n == MAX_HEAD || start.elapsed() > Duration::from_secs(5) {
            bail!("no complete request head");
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().skip(1).find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.trim().eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

fn connection(mut stream: TcpStream, shared: &Shared) -> Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    stream.set_write_timeout(Some(WRITE_TIMEOUT))?;
    let head = peek_head(&stream)?;
    let path = head.split_whitespace().nth(1).unwrap_or("");
    let host_ok = shared.hosts.is_empty() || header(&head, "host").is_some_and(|h| shared.hosts.iter().any(|x| x == h));
    let upgrade = header(&head, "upgrade").is_some_and(|u| u.eq_ignore_ascii_case("websocket"));
    if !host_ok {
        return respond(&mut stream, &head, "403 Forbidden", "text/plain", "unknown Host\n");
    }
    if upgrade && path == "/ws" {
        return stream_frames(stream, shared);
    }
    if head.starts_with("GET ") && (path == "/" || path.starts_with("/?") || path.starts_with("/#")) {
        return respond(&mut stream, &head, "200 OK", "text/html; charset=utf-8", &shared.page);
    }
    respond(&mut stream, &head, "404 Not Found", "text/plain", "not found\n")
}

fn respond(stream: &mut TcpStream, head: &str, status: &str, kind: &str, body: &str) -> Result<()> {
    let mut skip = vec![0u8; head.len()];
    stream.read_exact(&mut skip)?;
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nCache-Control: no-store\r\n\
         Connection: close\r\n\r\n",
        body.len()
    )?;
    stream.write_all(body.as_bytes())?;
    stream.flush()?;
    let _ = stream.shutdown(Shutdown::Write);
    Ok(())
}

/// One page's WebSocket: the newest frame whenever the socket can take it, its commands queued.
fn stream_frames(stream: TcpStream, shared: &Shared) -> Result<()> {
    let mut ws = tungstenite::accept(stream).map_err(|e| anyhow::anyhow!("WebSocket handshake: {e}"))?;
    ws.get_mut().set_read_timeout(Some(Duration::from_millis(1)))?;
    shared.pages.fetch_add(1, Ordering::SeqCst);
    let result = frames_loop(&mut ws, shared);
    shared.pages.fetch_sub(1, Ordering::SeqCst);
    let _ = ws.close(None);
    let _ = ws.flush();
    result
}

fn frames_loop(ws: &mut tungstenite::WebSocket<TcpStream>, shared: &Shared) -> Result<()> {
    let mut sent = 0u64;
    let mut backlog = false;
    while !shared.stop.load(Ordering::SeqCst) {
        match ws.read() {
            Ok(Message::Text(t)) => {
                if let Some(c) = Command::parse(t.as_str()) {
                    lock(&shared.commands).push(c);
                }
            }
            Ok(Message::Close(_)) => return Ok(()),
            Ok(_) => {}
            Err(tungstenite::Error::Io(e)) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(e) => return Err(e.into()),
        }
        if backlog {
            // the socket did not take the last frame whole: finish it before a newer one
            match ws.flush() {
                Ok(()) => backlog = false,
                Err(tungstenite::Error::Io(e)) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        let frame = {
            let slot = lock(&shared.frame);
            let slot = if slot.0 == sent {
                shared.new_frame.wait_timeout(slot, FRAME_WAIT).unwrap_or_else(PoisonError::into_inner).0
            } else {
                slot
            };
            (slot.0 != sent).then(|| (slot.0, slot.1.clone()))
        };
        if let Some((n, text)) = frame {
            sent = n;
            ws.write(Message::Text(text))?;
            match ws.flush() {
                Ok(()) => {}
                Err(tungstenite::Error::Io(e)) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => backlog = true,
                Err(e) => return Err(e.into()),
            }
        }
    }
    Ok(())
}
