fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The gateway protocol is Zeebe's own `gateway.proto` (zeebe-gateway-protocol 8.8.0,
    // Apache-2.0), vendored unchanged so message and field numbers match the official clients.
    // protox compiles it in-process: no system protoc is needed.
    println!("cargo:rerun-if-changed=../../proto/gateway.proto");
    let fds = protox::compile(["gateway.proto"], ["../../proto"])?;
    // the descriptors, for clients that print messages as protojson (the `zest` CLI, as zbctl)
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(
        out.join("gateway_descriptor.bin"),
        prost::Message::encode_to_vec(&fds),
    )?;
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        // prost's codec, encoding each message into a buffer sized for it (see src/codec.rs)
        .codec_path("crate::codec::GatewayCodec")
        .compile_fds(fds)?;
    Ok(())
}
