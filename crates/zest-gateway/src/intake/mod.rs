//! What clients may hold of a node before they are authenticated, or whatever they are: its
//! connections, its requests in progress and the bytes of the request bodies it is receiving,
//! each bounded per node and per client address (issue 62, "Memory that hostile or broken
//! clients cannot take"; docs/design/security.md, "Hostile clients").
//!
//! Without these bounds 400 REST connections, each sending half of a 2 MB body and then
//! nothing, took a node of 128 MiB to 830 MiB: every body was buffered whole, for as long as
//! its client liked. Now a body takes its place in the gateway's share of the memory budget
//! before it is read (by its `Content-Length`, or frame by frame as it comes), a body that does
//! not fit is refused at once, and one that stops coming is timed out ([`body::Counted`]).
//! Connections beyond the bounds are closed as they are accepted ([`conn`]).

pub mod body;
pub mod conn;
pub mod grpc;

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The bounds, per node and per client address (its IP).
#[derive(Clone, Debug)]
pub struct Limits {
    /// Bytes of request bodies (REST) and gRPC messages being received: the gateway's share of
    /// the memory budget (`zest_memory_budget_bytes{part="request_bodies"}`).
    pub body_bytes: usize,
    pub body_bytes_per_client: usize,
    /// Open connections, on the gRPC, REST and management ports together.
    pub connections: usize,
    pub connections_per_client: usize,
    /// Requests in progress: HTTP/1 requests and HTTP/2 streams (gRPC calls included).
    pub requests: usize,
    pub requests_per_client: usize,
    /// How long a client may take to send its request's headers (and, on HTTP/1, how long an
    /// idle kept-alive connection stays open), its first bytes on a new connection, and each
    /// part of a body after the one before.
    pub read_timeout: Duration,
    /// The slowest a body may come on the whole, in bytes per second, after `read_timeout`.
    pub min_body_rate: u64,
}

impl Limits {
    /// The bounds for a node whose gateway's share of the budget is `share` bytes and whose
    /// largest request is `max_message` bytes: a client may take half the share, and always
    /// one request of the largest size.
    pub fn new(share: usize, max_message: usize) -> Limits {
        let body_bytes = share.max(max_message);
        Limits {
            body_bytes,
            body_bytes_per_client: (body_bytes / 2).max(max_message),
            connections: 4096,
            connections_per_client: 1024,
            requests: 8192,
            requests_per_client: 4096,
            read_timeout: Duration::from_secs(20),
            min_body_rate: 16 << 10,
        }
    }
}

/// Why a client was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The node's bound was reached (by all its clients together).
    Node(String),
    /// This client's own bound was reached.
    Client(String),
    /// The client sent too slowly, or stopped.
    TooSlow(String),
}

impl Refusal {
    pub fn message(&self) -> &str {
        match self {
            Refusal::Node(m) | Refusal::Client(m) | Refusal::TooSlow(m) => m,
        }
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for Refusal {}

/// What is counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Connections,
    Requests,
    BodyBytes,
}

impl Kind {
    fn index(self) -> usize {
        self as usize
    }

    fn words(self) -> &'static str {
        match self {
            Kind::Connections => "open connections",
            Kind::Requests => "requests in progress",
            Kind::BodyBytes => "bytes of requests being received",
        }
    }

    /// The setting of the node's bound and of a client's.
    fn settings(self) -> (&'static str, &'static str) {
        match self {
            Kind::Connections => ("max-connections", "max-connections-per-ip"),
            Kind::Requests => ("max-requests", "max-requests-per-ip"),
            Kind::BodyBytes => ("memory-mb", "memory-mb"),
        }
    }
}

#[derive(Default)]
struct State {
    node: [usize; 3],
    clients: HashMap<IpAddr, [usize; 3]>,
}

/// The counts of one node, shared by its servers.
#[derive(Clone)]
pub struct Intake {
    limits: Arc<Limits>,
    state: Arc<Mutex<State>>,
}

impl Intake {
    pub fn new(limits: Limits) -> Intake {
        Intake {
            limits: Arc::new(limits),
            state: Arc::default(),
        }
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    fn bounds(&self, kind: Kind) -> (usize, usize) {
        let l = &self.limits;
        match kind {
            Kind::Connections => (l.connections, l.connections_per_client),
            Kind::Requests => (l.requests, l.requests_per_client),
            Kind::BodyBytes => (l.body_bytes, l.body_bytes_per_client),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes `amount` of `kind` for the client at `ip`, or says which bound it would pass.
    fn take(&self, ip: IpAddr, kind: Kind, amount: usize) -> Result<(), Refusal> {
        if amount == 0 {
            return Ok(());
        }
        let (node_bound, client_bound) = self.bounds(kind);
        let i = kind.index();
        let mut state = self.state();
        let client = state.clients.get(&ip).map_or(0, |c| c[i]);
        if client + amount > client_bound {
            return Err(Refusal::Client(format!(
                "Expected to accept the request, but this client ({ip}) already has {client} {} \
                 and the node allows {client_bound} a client ({}); retry later",
                kind.words(),
                kind.settings().1
            )));
        }
        if state.node[i] + amount > node_bound {
            return Err(Refusal::Node(format!(
                "Expected to accept the request, but the node's clients already have {} {} and \
                 it allows {node_bound} ({}); retry later",
                state.node[i],
                kind.words(),
                kind.settings().0
            )));
        }
        state.node[i] += amount;
        state.clients.entry(ip).or_default()[i] += amount;
        Ok(())
    }

    fn give_back(&self, ip: IpAddr, kind: Kind, amount: usize) {
        if amount == 0 {
            return;
        }
        let i = kind.index();
        let mut state = self.state();
        state.node[i] = state.node[i].saturating_sub(amount);
        if let Some(c) = state.clients.get_mut(&ip) {
            c[i] = c[i].saturating_sub(amount);
            if c.iter().all(|&n| n == 0) {
                state.clients.remove(&ip);
            }
        }
    }

    /// Takes `amount` of `kind` for `ip`, given back when the [`Held`] is dropped.
    pub fn hold(&self, ip: IpAddr, kind: Kind, amount: usize) -> Result<Held, Refusal> {
        self.take(ip, kind, amount)?;
        Ok(Held {
            intake: self.clone(),
            ip,
            kind,
            amount,
        })
    }

    /// What the node's clients hold now of `kind`, all together.
    pub fn held(&self, kind: Kind) -> usize {
        self.state().node[kind.index()]
    }
}

/// A part of a bound taken by one client; given back when dropped.
pub struct Held {
    intake: Intake,
    ip: IpAddr,
    kind: Kind,
    amount: usize,
}

impl Held {
    /// Takes `more` besides what is held.
    pub fn grow(&mut self, more: usize) -> Result<(), Refusal> {
        self.intake.take(self.ip, self.kind, more)?;
        self.amount += more;
        Ok(())
    }

    pub fn amount(&self) -> usize {
        self.amount
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.intake.give_back(self.ip, self.kind, self.amount);
    }
}

/// The address a request came from, put in its extensions by the server that accepted it.
#[derive(Clone, Copy, Debug)]
pub struct Peer(pub IpAddr);

/// The client address of a request: [`Peer`], or tonic's connection info; none for a request
/// made in the process (tests).
pub fn peer(extensions: &tonic::codegen::http::Extensions) -> Option<IpAddr> {
    extensions.get::<Peer>().map(|p| p.0).or_else(|| {
        extensions
            .get::<tonic::transport::server::TcpConnectInfo>()
            .and_then(|i| i.remote_addr())
            .map(|a| a.ip())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> Limits {
        Limits {
            body_bytes: 100,
            body_bytes_per_client: 60,
            ..Limits::new(100, 10)
        }
    }

    #[test]
    fn a_client_gets_its_share_and_the_node_its_bound() {
        let intake = Intake::new(limits());
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        let b: IpAddr = "10.0.0.2".parse().unwrap();
        let c: IpAddr = "10.0.0.3".parse().unwrap();
        let mut first = intake.hold(a, Kind::BodyBytes, 50).unwrap();
        assert!(matches!(first.grow(20), Err(Refusal::Client(_))));
        assert_eq!(first.amount(), 50, "a refused growth takes nothing");
        let second = intake.hold(b, Kind::BodyBytes, 40).unwrap();
        let refused = intake.hold(c, Kind::BodyBytes, 20).err().unwrap();
        assert!(matches!(refused, Refusal::Node(_)), "{refused}");
        assert!(refused.message().contains("memory-mb"), "{refused}");
        drop(first);
        assert_eq!(intake.held(Kind::BodyBytes), 40);
        let third = intake.hold(c, Kind::BodyBytes, 20).unwrap();
        drop((second, third));
        assert_eq!(intake.held(Kind::BodyBytes), 0);
        assert!(intake.state().clients.is_empty(), "no client is remembered");
    }
}
