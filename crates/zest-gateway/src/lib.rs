//! The gateways: Zeebe's gRPC `gateway_protocol.Gateway` service (same messages, field numbers,
//! semantics and status codes) and the Camunda 8 REST API v2 (`rest`), translating requests
//! into commands for the broker's partitions and records back into responses.

pub mod admission;
pub mod commands;
mod convert;
pub mod rest;
mod service;

pub mod codec;
pub mod proto {
    #![allow(clippy::all, clippy::pedantic, missing_docs)]
    tonic::include_proto!("gateway_protocol");
}

pub use commands::{Commands, GatewayConfig};
pub use service::GatewayService;

/// The gateway protocol's file descriptor set (encoded `google.protobuf.FileDescriptorSet`), so
/// that clients can print its messages as protojson.
pub const FILE_DESCRIPTOR_SET: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/gateway_descriptor.bin"));

/// The tonic server of the gateway service, with the message size limit applied.
pub fn server(
    service: GatewayService,
) -> admission::Admitted<proto::gateway_server::GatewayServer<GatewayService>> {
    let limit = service.config().max_message_size;
    let server = proto::gateway_server::GatewayServer::new(service)
        // Requests up to 4x the limit are decoded so that the handler can answer with a clear
        // RESOURCE_EXHAUSTED naming the limit; beyond that tonic refuses them itself.
        .max_decoding_message_size(limit.saturating_mul(4))
        .max_encoding_message_size(limit.saturating_mul(4));
    admission::Admitted::new(server, admission::MAX_CALLS_IN_PROGRESS)
}

/// The host and port of a `host:port` address (port 26500 when it has none).
pub(crate) fn host_and_port(address: &str) -> (String, u16) {
    match address.rsplit_once(':') {
        Some((h, p)) => (h.to_string(), p.parse().unwrap_or(26500)),
        None => (address.to_string(), 26500),
    }
}
