//! The gateways: Zeebe's gRPC `gateway_protocol.Gateway` service (same messages, field numbers,
//! semantics and status codes) and the Camunda 8 REST API v2 (`rest`), translating requests
//! into commands for the broker's partitions and records back into responses.

pub mod admission;
pub mod auth;
pub mod commands;
mod convert;
pub mod intake;
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
///
/// Requests may be compressed with gzip or deflate (`grpc-encoding`): Camunda's Node.js SDK
/// (grpc-js) sends every request gzip-compressed, and the Java client does when configured.
/// Zeebe's gateway (grpc-java) accepts gzip and answers uncompressed; so does this one, as no
/// response is compressed (`send_compressed` is not set), whatever the client accepts. An
/// encoding that is not accepted is answered with UNIMPLEMENTED, naming the ones that are.
///
/// The size limits count the decompressed message: tonic stops inflating a request at the
/// decoding limit (RESOURCE_EXHAUSTED, "size limit ... exceeded while decompressing"), so a
/// small compressed request cannot make the node hold more than an uncompressed one could,
/// and the handlers check the decoded message against `max_message_size` as before. A call
/// is decompressed while it holds its place in [`admission::Admitted`].
pub fn server(
    service: GatewayService,
) -> admission::Admitted<proto::gateway_server::GatewayServer<GatewayService>> {
    use tonic::codec::CompressionEncoding;
    let limit = service.config().max_message_size;
    let server = proto::gateway_server::GatewayServer::new(service)
        .accept_compressed(CompressionEncoding::Gzip)
        .accept_compressed(CompressionEncoding::Deflate)
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
