fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The internal protocol between Zest nodes; protox compiles it in-process (no protoc).
    println!("cargo:rerun-if-changed=../../proto/internal.proto");
    let fds = protox::compile(["internal.proto"], ["../../proto"])?;
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .compile_fds(fds)?;
    Ok(())
}
