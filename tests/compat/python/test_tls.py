"""pyzeebe over TLS (issue 62): a zest started with a certificate made for the run (Zeebe's
ZEEBE_BROKER_GATEWAY_SECURITY_* settings), and pyzeebe's secure channel given the CA, as its docs
show: a deployment, an instance run with its result, its job completed by a worker. A plaintext
channel to the same port gets no answer. Zest only (ZEEBE_ADDRESS skips it)."""

import asyncio
import os
import subprocess
from pathlib import Path

import grpc
import pytest
from pyzeebe import Job, ZeebeClient, ZeebeWorker, create_insecure_channel, create_secure_channel

from conftest import ZestProcess
from test_pyzeebe import _deploy, run, running

MAKE_CERTS = Path(__file__).resolve().parent.parent / "make_certs.sh"


@pytest.fixture
def tls_zest(tmp_path):
    binary = os.environ.get("ZEST_BIN")
    if os.environ.get("ZEEBE_ADDRESS") or not binary:
        pytest.skip("starts zest with a certificate of its own (needs ZEST_BIN)")
    subprocess.run([str(MAKE_CERTS), str(tmp_path)], check=True)
    os.environ.update({
        "ZEEBE_BROKER_GATEWAY_SECURITY_ENABLED": "true",
        "ZEEBE_BROKER_GATEWAY_SECURITY_CERTIFICATECHAINPATH": str(tmp_path / "server.pem"),
        "ZEEBE_BROKER_GATEWAY_SECURITY_PRIVATEKEYPATH": str(tmp_path / "server.key"),
    })
    zest = ZestProcess(binary)
    try:
        zest.start()
    finally:
        for name in ("ENABLED", "CERTIFICATECHAINPATH", "PRIVATEKEYPATH"):
            os.environ.pop(f"ZEEBE_BROKER_GATEWAY_SECURITY_{name}")
    try:
        yield zest.address, (tmp_path / "ca.pem").read_bytes()
    finally:
        zest.stop()


def test_deploy_run_and_complete_over_tls(tls_zest, model):
    address, ca = tls_zest
    process_id, path = model("one_task.bpmn", "benchmark")
    job_type = process_id + "-task"

    def secure():
        return create_secure_channel(
            grpc_address=address,
            channel_credentials=grpc.ssl_channel_credentials(root_certificates=ca))

    async def go():
        client = ZeebeClient(secure())
        await _deploy(client, path, process_id)
        worker = ZeebeWorker(secure(), name="pyzeebe-tls", request_timeout=2000)

        @worker.task(task_type=job_type, timeout_ms=20000)
        async def pay(job: Job) -> dict:
            return {"paid": True}

        async with running(worker):
            return await client.run_process_with_result(process_id, {"orderId": "T-1"}, timeout=20000)

    result = run(go())
    assert result.bpmn_process_id == process_id
    assert result.variables == {"orderId": "T-1", "paid": True}

    async def plaintext():
        client = ZeebeClient(create_insecure_channel(grpc_address=address))
        await asyncio.wait_for(client.topology(), 10)

    with pytest.raises(Exception):
        run(plaintext())
