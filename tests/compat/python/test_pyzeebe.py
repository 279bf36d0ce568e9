"""pyzeebe (4.x) against the server under test: deploy, a pyzeebe worker completing jobs with
variables, create-with-result, a failing task exhausting its retries into an incident, and the
error mapping of a few rejections."""

import asyncio
import contextlib

import grpc
import pytest
from pyzeebe import Job, ZeebeClient, ZeebeWorker, create_insecure_channel
from pyzeebe.errors import MessageAlreadyExistsError, ProcessDefinitionNotFoundError, ProcessInvalidError
from pyzeebe.proto import gateway_pb2, gateway_pb2_grpc

from conftest import TESTDATA, unique_id

TIMEOUT_S = 30


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, TIMEOUT_S))


async def _deploy(client: ZeebeClient, path, process_id: str, version: int = 1):
    resp = await client.deploy_resource(str(path))
    assert len(resp.deployments) == 1
    p = resp.deployments[0]
    assert p.bpmn_process_id == process_id
    assert p.version == version
    assert p.process_definition_key > 0
    return p


@contextlib.asynccontextmanager
async def running(worker: ZeebeWorker):
    """Runs worker.work() in the background (register tasks before entering)."""
    task = asyncio.create_task(worker.work())
    try:
        yield worker
    finally:
        await worker.stop()
        try:
            await asyncio.wait_for(task, 10)
        except (asyncio.TimeoutError, asyncio.CancelledError):
            task.cancel()


def test_topology(zeebe_address):
    async def go():
        client = ZeebeClient(create_insecure_channel(grpc_address=zeebe_address))
        topo = await client.topology()
        assert topo.cluster_size >= 1
        assert topo.partitions_count >= 1
        assert len(topo.brokers) >= 1

    run(go())


def test_worker_completes_jobs_with_variables(zeebe_address, model):
    process_id, path = model("one_task.bpmn", "benchmark")
    job_type = process_id + "-task"  # one_task.bpmn's type "benchmark-task", token replaced
    seen_jobs: list[int] = []

    async def go():
        channel = create_insecure_channel(grpc_address=zeebe_address)
        client = ZeebeClient(channel)
        await _deploy(client, path, process_id)
        worker = ZeebeWorker(create_insecure_channel(grpc_address=zeebe_address), name="pyzeebe-compat", request_timeout=2000)

        @worker.task(task_type=job_type, timeout_ms=20000)
        async def double(x: int, job: Job) -> dict:
            # pyzeebe fetches only the variables named by the parameters (x) and injects the Job.
            seen_jobs.append(job.key)
            assert job.type == job_type
            assert job.bpmn_process_id == process_id
            assert job.variables == {"x": x}
            return {"doubled": x * 2, "by": "pyzeebe"}

        async with running(worker):
            results = await asyncio.gather(*[
                client.run_process_with_result(process_id, {"x": i, "keep": f"k{i}"}, timeout=20000)
                for i in range(5)
            ])
        return results

    results = run(go())
    assert len(results) == 5
    for i, r in enumerate(sorted(results, key=lambda r: r.variables["x"])):
        assert r.bpmn_process_id == process_id
        assert r.variables == {"x": i, "keep": f"k{i}", "doubled": 2 * i, "by": "pyzeebe"}
    assert len(seen_jobs) == 5 and len(set(seen_jobs)) == 5


def test_failing_task_exhausts_retries_into_incident(zeebe_address, model):
    """simple_task.bpmn has retries="3"; pyzeebe's default exception handler fails the job with
    retries-1, so the task runs 3 times and then the job (retries 0) raises an incident."""
    process_id, path = model("simple_task.bpmn", "zest_proc")
    job_type = process_id + ".task"
    attempts: list[tuple[int, int]] = []

    async def go():
        channel = create_insecure_channel(grpc_address=zeebe_address)
        client = ZeebeClient(channel)
        await _deploy(client, path, process_id)
        created = await client.run_process(process_id, {"n": 1})
        worker = ZeebeWorker(create_insecure_channel(grpc_address=zeebe_address), name="pyzeebe-failing", request_timeout=2000)

        @worker.task(task_type=job_type, timeout_ms=20000)
        async def explode(job: Job) -> dict:
            attempts.append((job.key, job.retries))
            raise RuntimeError("boom")

        async with running(worker):
            loop = asyncio.get_running_loop()
            deadline = loop.time() + 15
            while len(attempts) < 3 and loop.time() < deadline:
                await asyncio.sleep(0.1)
            await asyncio.sleep(1.5)  # no 4th attempt may follow

        # The incident: ResolveIncident on the keys after the job's answers NOT_FOUND until it
        # hits the incident, which it refuses with FAILED_PRECONDITION while the job has no
        # retries (see the Go suite's resolveIncidentAfter for why incident keys are probed).
        stub = gateway_pb2_grpc.GatewayStub(channel)
        job_key = attempts[0][0]
        incident = None
        for k in range(job_key + 1, job_key + 200):
            try:
                await stub.ResolveIncident(gateway_pb2.ResolveIncidentRequest(incidentKey=k), timeout=10)
                pytest.fail(f"ResolveIncident {k} succeeded while the job has no retries")
            except grpc.aio.AioRpcError as e:
                if e.code() == grpc.StatusCode.NOT_FOUND:
                    continue
                assert e.code() == grpc.StatusCode.FAILED_PRECONDITION, e
                incident = k
                break
        assert incident is not None, "no incident found"
        await client.cancel_process_instance(created.process_instance_key)
        return created

    created = run(go())
    assert [r for _, r in attempts] == [3, 2, 1], attempts
    assert len({k for k, _ in attempts}) == 1
    assert created.process_instance_key > 0


def test_deploy_invalid_model_is_rejected(zeebe_address, tmp_path):
    bad = tmp_path / f"{unique_id('malformed')}.bpmn"
    bad.write_text((TESTDATA / "malformed.bpmn").read_text())

    async def go():
        client = ZeebeClient(create_insecure_channel(grpc_address=zeebe_address))
        with pytest.raises(ProcessInvalidError):
            await client.deploy_resource(str(bad))

    run(go())


def test_unknown_process_is_not_found(zeebe_address):
    async def go():
        client = ZeebeClient(create_insecure_channel(grpc_address=zeebe_address))
        with pytest.raises(ProcessDefinitionNotFoundError):
            await client.run_process(unique_id("no_such_process"), {"a": 1})

    run(go())


def test_publish_message_completes_receive_task(zeebe_address, model):
    """A buffered message (TTL 10 s) completes a receive task with its variables; the same
    message id again while it is buffered is refused."""
    process_id, path = model("receive_message.bpmn", "zest_proc")

    async def go():
        client = ZeebeClient(create_insecure_channel(grpc_address=zeebe_address))
        await _deploy(client, path, process_id)
        resp = await client.publish_message(
            process_id + "-paid", process_id, {"amount": 42},
            time_to_live_in_milliseconds=10000, message_id="m-" + process_id,
        )
        assert resp.key > 0
        result = await client.run_process_with_result(process_id, {"orderId": process_id}, timeout=20000)
        with pytest.raises(MessageAlreadyExistsError):
            await client.publish_message(
                process_id + "-paid", process_id, time_to_live_in_milliseconds=10000,
                message_id="m-" + process_id,
            )
        return result

    result = run(go())
    assert result.variables == {"orderId": process_id, "amount": 42}


def test_broadcast_signal_starts_an_instance(zeebe_address, model):
    """A broadcast signal starts an instance at its signal start event, with the signal's
    variables; a pyzeebe worker sees them in the instance's first job."""
    process_id, path = model("signal_start.bpmn", "zest_proc")
    job_type = process_id + "-started"

    async def go():
        client = ZeebeClient(create_insecure_channel(grpc_address=zeebe_address))
        await _deploy(client, path, process_id)
        seen: asyncio.Future = asyncio.get_running_loop().create_future()
        worker = ZeebeWorker(create_insecure_channel(grpc_address=zeebe_address), name="pyzeebe-compat", request_timeout=2000)

        @worker.task(task_type=job_type, timeout_ms=20000)
        async def started(job: Job) -> dict:
            if not seen.done():
                seen.set_result((job.bpmn_process_id, dict(job.variables)))
            return {}

        resp = await client.broadcast_signal(process_id + "-start", {"n": 7})
        assert resp.key > 0
        async with running(worker):
            return await asyncio.wait_for(seen, 20)

    bpmn_process_id, variables = run(go())
    assert bpmn_process_id == process_id
    assert variables == {"n": 7}
