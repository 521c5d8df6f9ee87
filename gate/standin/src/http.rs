//! HTTP/1.1 on one connection: read one request (bounded), answer, close.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::State;

const MAX_HEAD: usize = 64 * 1024;
const MAX_BODY: usize = 256 << 20;

/// One request as received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    pub method: String,
    /// The path (percent-encoded as sent), without the query.
    pub path: String,
    /// The query pairs, percent-decoded.
    pub query: Vec<(String, String)>,
    /// Header names lower-cased, in order.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// When the request came as to a proxy: the host and port it was meant for (from a
    /// `CONNECT` tunnel or an absolute-form target).
    pub via_proxy: Option<String>,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == &name.to_ascii_lowercase())
            .map(|(_, v)| v.as_str())
    }

    pub fn query(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON (`Null` when it is not JSON).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or(serde_json::Value::Null)
    }

    /// `METHOD /path` for compact assertions.
    pub fn line(&self) -> String {
        format!("{} {}", self.method, self.path)
    }

    /// Everything received, as text, for searching a secret in it.
    pub fn raw_text(&self) -> String {
        let headers: Vec<String> = self
            .headers
            .iter()
            .map(|(n, v)| format!("{n}: {v}"))
            .collect();
        format!(
            "{} {} {:?}\n{}\n{}",
            self.method,
            self.path,
            self.query,
            headers.join("\n"),
            String::from_utf8_lossy(&self.body)
        )
    }
}

/// An answer.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn json(status: u16, value: &serde_json::Value) -> Self {
        Reply {
            status,
            headers: vec![(
                "content-type".into(),
                "application/json; charset=utf-8".into(),
            )],
            body: value.to_string().into_bytes(),
        }
    }

    pub fn empty(status: u16) -> Self {
        Reply {
            status,
            headers: Vec::new(),
            body: Vec::new(),
        }
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        302 => "Found",
        304 => "Not Modified",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        409 => "Conflict",
        411 => "Length Required",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

fn percent_decode(text: &str, plus_is_space: bool) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = (bytes[i] == b'%')
            .then(|| text.get(i + 1..i + 3))
            .flatten()
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match (escaped, bytes[i]) {
            (Some(b), _) => {
                out.push(b);
                i += 3;
            }
            (None, b'+') if plus_is_space => {
                out.push(b' ');
                i += 1;
            }
            (None, b) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// One value of an `application/x-www-form-urlencoded` body (`+` is a space).
pub fn decode_form(value: &str) -> String {
    percent_decode(value, true)
}

/// `value` percent-encoded for a query (every byte but the unreserved ones).
pub fn encode_form(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// One path segment, percent-decoded.
pub fn decode_segment(segment: &str) -> String {
    percent_decode(segment, false)
}

fn read_request(stream: &TcpStream) -> Option<Recorded> {
    let mut reader = BufReader::new(stream);
    let mut head = Vec::new();
    loop {
        let mut line = Vec::new();
        let n = reader.read_until(b'\n', &mut line).ok()?;
        if n == 0 {
            return None;
        }
        head.extend_from_slice(&line);
        if head.len() > MAX_HEAD {
            return None;
        }
        if line == b"\r\n" || line == b"\n" {
            break;
        }
    }
    let head = String::from_utf8(head).ok()?;
    let mut lines = head.lines();
    let request_line = lines.next()?;
    let mut parts = request_line.split(' ');
    let method = parts.next()?.to_owned();
    let target = parts.next()?.to_owned();
    let mut headers = Vec::new();
    for line in lines {
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':')?;
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
    }
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .map_or(Some(0), |(_, v)| v.parse().ok())?;
    if length > MAX_BODY {
        return None;
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body).ok()?;

    let (via_proxy, origin) = match target.strip_prefix("http://") {
        Some(rest) => {
            let at = rest.find('/').unwrap_or(rest.len());
            (Some(rest[..at].to_owned()), rest[at..].to_owned())
        }
        None if method == "CONNECT" => (Some(target.clone()), String::new()),
        None => (None, target),
    };
    let (path, query) = match origin.split_once('?') {
        Some((p, q)) => (p.to_owned(), q),
        None => (origin.clone(), ""),
    };
    let query = query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (percent_decode(k, true), percent_decode(v, true))
        })
        .collect();
    Some(Recorded {
        method,
        path,
        query,
        headers,
        body,
        via_proxy,
    })
}

pub fn serve(mut stream: TcpStream, addr: SocketAddr, state: &Arc<Mutex<State>>) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let _ = stream.set_write_timeout(Some(Duration::from_secs(10)));
    let Some(mut request) = read_request(&stream) else {
        return;
    };
    if request.method == "CONNECT" {
        // Act as the proxy: open the tunnel and serve the request that comes through it.
        let authority = request.via_proxy.clone();
        if stream
            .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
            .is_err()
        {
            return;
        }
        let Some(tunneled) = read_request(&stream) else {
            return;
        };
        request = Recorded {
            via_proxy: authority,
            ..tunneled
        };
    }
    let lock = || state.lock().unwrap_or_else(|p| p.into_inner());
    let (reply, service_time) = {
        let mut state = lock();
        state.limits.in_flight += 1;
        state.limits.max_in_flight = state.limits.max_in_flight.max(state.limits.in_flight);
        state.now += 1;
        state.requests.push(request.clone());
        let mut reply = crate::routes::handle(&mut state, &request, &format!("http://{addr}"));
        if let Some(reply) = &mut reply {
            crate::limits::account(&mut state, &request, reply);
        }
        (reply, state.scenario.rate_limits.service_time)
    };
    if !service_time.is_zero() {
        std::thread::sleep(service_time);
    }
    let done = || lock().limits.in_flight -= 1;
    let Some(mut reply) = reply else {
        // A scripted dropped connection.
        done();
        let _ = stream.shutdown(std::net::Shutdown::Both);
        return;
    };
    let date = {
        let state = state.lock().unwrap_or_else(|p| p.into_inner());
        state
            .scenario
            .send_date
            .then(|| github::date::format_http_date(state.now))
    };
    if let Some(date) = date {
        reply.headers.push(("date".into(), date));
    }
    let mut out = format!("HTTP/1.1 {} {}\r\n", reply.status, reason(reply.status));
    for (name, value) in &reply.headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str(&format!(
        "content-length: {}\r\nconnection: close\r\n\r\n",
        reply.body.len()
    ));
    // No longer served once the answer is written (before the client may send its next).
    done();
    let _ = stream.write_all(out.as_bytes());
    let _ = stream.write_all(&reply.body);
    let _ = stream.flush();
}
