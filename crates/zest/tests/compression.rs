//! Compressed gRPC requests against a real `zest start`: Camunda's Node.js SDK (grpc-js) sends
//! every request gzip-compressed, the Java client does when configured. They are answered as
//! uncompressed ones are, the answers uncompressed (as Zeebe's gateway does), and the size
//! limits count the decompressed message, so a small compressed request that inflates beyond
//! them is refused while it is inflated.

mod common;

use common::{connect, deploy_one_task, rss, start_with, Client};
use tonic::codec::CompressionEncoding;
use tonic::Code;
use zest_gateway::proto;

async fn create(
    c: &mut Client,
) -> Result<tonic::Response<proto::CreateProcessInstanceResponse>, tonic::Status> {
    c.create_process_instance(proto::CreateProcessInstanceRequest {
        bpmn_process_id: "benchmark".into(),
        version: -1,
        variables: r#"{"n":1}"#.into(),
        ..Default::default()
    })
    .await
}

/// A deployment of one resource of `len` zero bytes: gzip makes about a thousandth of it.
fn zeros(len: usize) -> proto::DeployResourceRequest {
    proto::DeployResourceRequest {
        resources: vec![proto::Resource {
            name: "zeros.bpmn".into(),
            content: vec![0; len],
        }],
        tenant_id: String::new(),
    }
}

#[tokio::test]
async fn gzip_and_deflate_requests_are_answered_uncompressed() {
    let node = start_with("compression", &[]);
    let plain = connect(&node.gateway).await;
    for encoding in [CompressionEncoding::Gzip, CompressionEncoding::Deflate] {
        // as grpc-js does: requests compressed, compressed answers accepted
        let mut c = plain
            .clone()
            .send_compressed(encoding)
            .accept_compressed(encoding);
        let topology = c
            .topology(proto::TopologyRequest {})
            .await
            .unwrap_or_else(|s| panic!("{encoding:?} topology: {s:?}"))
            .into_inner();
        assert_eq!(topology.brokers.len(), 1, "{encoding:?}: {topology:?}");
        deploy_one_task(&mut c).await;
        let created = create(&mut c)
            .await
            .unwrap_or_else(|s| panic!("{encoding:?} create: {s:?}"));
        // Zeebe's gateway compresses no answer, whatever the client accepts
        assert!(
            created.metadata().get("grpc-encoding").is_none(),
            "{encoding:?}: the answer is compressed: {:?}",
            created.metadata()
        );
        let created = created.into_inner();
        assert!(created.process_instance_key > 0, "{created:?}");
        assert_eq!(created.bpmn_process_id, "benchmark");
    }
}

#[tokio::test]
async fn compressed_requests_beyond_the_limit_are_refused_by_their_inflated_size() {
    let limit = 1024 * 1024;
    let node = start_with("compression-limit", &["--max-message-size", "1048576"]);
    let mut c = connect(&node.gateway)
        .await
        .send_compressed(CompressionEncoding::Gzip);

    // 2 MiB inflated (a few KiB on the wire): the handler's check names the limit
    let refused = c
        .deploy_resource(zeros(2 * limit))
        .await
        .expect_err("a deployment of 2 MiB is refused");
    assert_eq!(refused.code(), Code::ResourceExhausted, "{refused:?}");
    assert!(
        refused
            .message()
            .contains("to be at most 1048576 bytes (the maximum message size)"),
        "{refused:?}"
    );

    // A gzip bomb: 64 KiB on the wire, 64 MiB inflated. It is refused once inflating passes
    // 4x the limit, before the rest is inflated and decoded.
    let before = rss(node.child.id());
    let refused = c
        .deploy_resource(zeros(64 * limit))
        .await
        .expect_err("a gzip bomb is refused");
    assert_eq!(refused.code(), Code::ResourceExhausted, "{refused:?}");
    assert!(
        refused
            .message()
            .contains("size limit, of 4194304 bytes, exceeded while decompressing"),
        "{refused:?}"
    );
    if let (Some(before), Some(after)) = (before, rss(node.child.id())) {
        // inflated and decoded, the bomb would have taken 128 MiB (its text and the request)
        assert!(
            after < before + 32 * 1024 * 1024,
            "the node grew from {before} to {after} bytes"
        );
    }

    // the node goes on answering, compressed requests within the limit too
    deploy_one_task(&mut c).await;
    let created = create(&mut c)
        .await
        .expect("an instance is created")
        .into_inner();
    assert!(created.process_instance_key > 0, "{created:?}");
}
