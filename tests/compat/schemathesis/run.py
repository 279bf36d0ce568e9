#!/usr/bin/env python3
"""schemathesis against Camunda's own OpenAPI document of the REST API v2 (8.8).

    run.py REST_URL            # e.g. http://127.0.0.1:8080 (the server's REST address)

Reads the spec from $ROOT/../shared/specs/camunda-rest-api-8.8.yaml (the shared folder beside
the checkout; never copied into the project), seeds the server over REST (deployments, instances,
an incident, a user task, a decision evaluation, a message) so that gets and searches hit real
data, then runs schemathesis's checks over every operation Zest serves: no 5xx
(not_a_server_error), responses that match the spec's schemas (response_schema_conformance),
status codes the spec documents (status_code_conformance) and content types it documents
(content_type_conformance). A fixed seed and a bound on examples per operation keep it
deterministic and within about three minutes on two cores. Exit status: schemathesis's.
"""

import json
import os
import shutil
import subprocess
import tempfile
import sys
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent.parent
# CAMUNDA_SPEC: another copy of the same document (a checkout without shared/ beside it)
SPEC = Path(os.environ.get("CAMUNDA_SPEC",
                           ROOT.parent / "shared" / "specs" / "camunda-rest-api-8.8.yaml"))
# CAMUNDA_SPEC_89: the same for 8.9's bundle, read for the operations only 8.9 has
SPEC_89 = Path(os.environ.get("CAMUNDA_SPEC_89",
                              SPEC.parent / "camunda-rest-api-8.9.bundle.json"))
# 8.9's operations that Zest serves and 8.8's document lacks (issue 60 takes them from 8.9)
OPERATIONS_89 = [
    "getProcessDefinitionInstanceStatistics",
    "getProcessDefinitionInstanceVersionStatistics",
    "getProcessInstanceStatisticsByError",
    "getProcessInstanceStatisticsByDefinition",
    "evaluateExpression",
    "deleteProcessInstance",
    "deleteDecisionInstance",
    "deleteProcessInstancesBatchOperation",
    "deleteDecisionInstancesBatchOperation",
]
TESTDATA = HERE.parent / "testdata"
SEED = 60
MAX_EXAMPLES = int(os.environ.get("SCHEMATHESIS_MAX_EXAMPLES", "12"))
CHECKS = "not_a_server_error,response_schema_conformance,status_code_conformance,content_type_conformance"

# Tags left out: identity (the security issue) and documents (not in issue 60's scope).
EXCLUDED_TAGS = {
    "Authentication": "identity: belongs to the security issue",
    "Authorization": "identity: belongs to the security issue",
    "Group": "identity: belongs to the security issue",
    "Mapping rule": "identity: belongs to the security issue",
    "Role": "identity: belongs to the security issue",
    "Setup": "identity: belongs to the security issue",
    "Tenant": "identity: belongs to the security issue",
    "User": "identity: belongs to the security issue",
    "Document": "documents: outside issue 60",
}

# Operations Zest does not serve yet (they answer 404), by operationId, with the reason.
EXCLUDED_OPERATIONS = {
    "cancelProcessInstancesBatchOperation": "batch operations: not in this suite yet (their by-filter POSTs start real batches over the seeded instances; covered by crates/zest/tests/batch_operations.rs)",
    "resolveIncidentsBatchOperation": "batch operations: not in this suite yet (their by-filter POSTs start real batches over the seeded instances; covered by crates/zest/tests/batch_operations.rs)",
    "migrateProcessInstancesBatchOperation": "batch operations: not in this suite yet (their by-filter POSTs start real batches over the seeded instances; covered by crates/zest/tests/batch_operations.rs)",
    "modifyProcessInstancesBatchOperation": "batch operations: not in this suite yet (their by-filter POSTs start real batches over the seeded instances; covered by crates/zest/tests/batch_operations.rs)",
    "getBatchOperation": "batch operations: not in this suite yet (their by-filter POSTs start real batches over the seeded instances; covered by crates/zest/tests/batch_operations.rs)",
    "searchBatchOperations": "batch operations: not in this suite yet (their by-filter POSTs start real batches over the seeded instances; covered by crates/zest/tests/batch_operations.rs)",
    "cancelBatchOperation": "batch operations: not in this suite yet (their by-filter POSTs start real batches over the seeded instances; covered by crates/zest/tests/batch_operations.rs)",
    "suspendBatchOperation": "batch operations: not in this suite yet (their by-filter POSTs start real batches over the seeded instances; covered by crates/zest/tests/batch_operations.rs)",
    "resumeBatchOperation": "batch operations: not in this suite yet (their by-filter POSTs start real batches over the seeded instances; covered by crates/zest/tests/batch_operations.rs)",
    "searchBatchOperationItems": "batch operations: not in this suite yet (their by-filter POSTs start real batches over the seeded instances; covered by crates/zest/tests/batch_operations.rs)",
}


def adjusted_spec(tmpdir):
    """The spec as schemathesis reads it: the document itself, with the changes below (each with
    its reason), written as JSON into a temporary folder (never into the project)."""
    import yaml  # PyYAML: a dependency of schemathesis

    spec = yaml.safe_load(SPEC.read_text())
    schemas = spec["components"]["schemas"]
    # ProblemDetail.instance is `format: uri`, yet its own description says "a URI path" and its
    # example is `/v2/jobs/activation`: Camunda sends the request's path, a relative reference,
    # which JSON Schema's `uri` (absolute URIs only) refuses. Checked as what it is: a URI reference.
    schemas["ProblemDetail"]["properties"]["instance"]["format"] = "uri-reference"
    # Job activation long-polls for requestTimeout ms (0: the server's default, 15 s in Zest; the
    # spec's example: 60 s): a bound of 1 s keeps each activation within the run's time budget
    # (one without requestTimeout still waits 15 s: few do).
    timeout = schemas["JobActivationRequest"]["properties"]["requestTimeout"]
    timeout.update({"minimum": 1, "maximum": 1000, "example": 500, "default": 500})
    # Page cursors: 8.9 always sends startCursor and endCursor, null on an empty page, and its
    # spec says so (nullable); 8.8's leaves them optional. Zest answers as 8.9 does.
    page = schemas["SearchQueryPageResponse"]["properties"]
    for name in ("startCursor", "endCursor"):
        page[name]["nullable"] = True
    # Cursors: the spec bounds them to 300 characters, yet a cursor holds the sort values of a
    # row (Camunda's is base64 of them as JSON: its example decodes to [2251799813687102]), so a
    # page sorted by a long text (an incident's errorMessage) has a longer one, in Camunda too.
    for name in ("StartCursor", "EndCursor"):
        schemas[name].pop("maxLength", None)
    # ResourceKey is oneOf four key schemas that are all the same LongKey string: every key is
    # valid under all four, so none is under exactly one; any of them, as the spec means.
    schemas["ResourceKey"]["anyOf"] = schemas["ResourceKey"].pop("oneOf")
    # Status codes the 8.8 spec leaves out where Camunda sends them (its gateway answers an
    # unknown key or definition with its engine's NOT_FOUND rejection, 404, and a key that is
    # not a number with 400 "The provided ... is not a valid key", on every operation): each
    # operation documents 400 and 404 as problem details.
    problem = {"description": "A problem detail (added by the runner: see run.py)",
               "content": {"application/problem+json": {
                   "schema": {"$ref": "#/components/schemas/ProblemDetail"}}}}
    for ops in spec["paths"].values():
        for method, op in ops.items():
            if method in ("get", "post", "put", "patch", "delete"):
                for code in ("400", "404"):
                    op["responses"].setdefault(code, problem)
    out = Path(tmpdir) / "camunda-rest-api-8.8.json"
    out.write_text(json.dumps(spec))
    return out


def adjusted_spec_89(tmpdir):
    """8.9's document for pass 3, with the one change of `adjusted_spec` that its operations
    need: a key that is not a number is answered 400 ("The provided ... is not a valid key"),
    as on every operation, which 8.9 leaves out of the deletions' responses."""
    spec = json.loads(SPEC_89.read_text())
    problem = {"description": "A problem detail (added by the runner: see run.py)",
               "content": {"application/problem+json": {
                   "schema": {"$ref": "#/components/schemas/ProblemDetail"}}}}
    for ops in spec["paths"].values():
        for method, op in ops.items():
            if method in ("get", "post", "put", "patch", "delete"):
                op["responses"].setdefault("400", problem)
    out = Path(tmpdir) / "camunda-rest-api-8.9.json"
    out.write_text(json.dumps(spec))
    return out


def request(base, method, path, body=None, headers=None):
    data = None
    headers = dict(headers or {})
    if body is not None and not isinstance(body, bytes):
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    elif body is not None:
        data = body
    req = urllib.request.Request(base + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            raw = resp.read()
            return resp.status, json.loads(raw) if raw else None
    except urllib.error.HTTPError as err:
        raw = err.read()
        raise SystemExit(f"seed: {method} {path} answered {err.code}: {raw[:400]!r}")


def deploy(base, files):
    boundary = uuid.uuid4().hex
    parts = []
    for name in files:
        content = (TESTDATA / name).read_bytes()
        parts.append(
            f"--{boundary}\r\nContent-Disposition: form-data; name=\"resources\"; "
            f"filename=\"{name}\"\r\nContent-Type: application/octet-stream\r\n\r\n".encode()
            + content
            + b"\r\n"
        )
    body = b"".join(parts) + f"--{boundary}--\r\n".encode()
    _, out = request(
        base, "POST", "/v2/deployments", body,
        {"Content-Type": f"multipart/form-data; boundary={boundary}"},
    )
    return out


def seed(base):
    """A few definitions, instances in every state, an incident, a user task, a decision."""
    deploy(base, ["one_task.bpmn", "user_tasks.bpmn", "review.form", "pricing.dmn",
                  "receive_message.bpmn"])
    for i in range(3):
        request(base, "POST", "/v2/process-instances",
                {"processDefinitionId": "benchmark", "variables": {"n": i, "name": f"seed-{i}"}})
    request(base, "POST", "/v2/process-instances",
            {"processDefinitionId": "user_tasks", "variables": {"owner": "demo"}})
    request(base, "POST", "/v2/process-instances",
            {"processDefinitionId": "zest_proc", "variables": {"orderId": "order-1"}})
    # one job completed, one failed without retries (an incident), one left active
    _, jobs = request(base, "POST", "/v2/jobs/activation",
                      {"type": "benchmark-task", "maxJobsToActivate": 2, "timeout": 60000,
                       "worker": "schemathesis-seed"})
    jobs = jobs["jobs"]
    if len(jobs) == 2:
        request(base, "POST", f"/v2/jobs/{jobs[0]['jobKey']}/completion", {"variables": {"done": True}})
        request(base, "POST", f"/v2/jobs/{jobs[1]['jobKey']}/failure",
                {"retries": 0, "errorMessage": "seeded incident"})
    request(base, "POST", "/v2/decision-definitions/evaluation",
            {"decisionDefinitionId": "discount", "variables": {"customer": "gold", "amount": 100}})
    request(base, "POST", "/v2/messages/publication",
            {"name": "order", "correlationKey": "order-1", "timeToLive": 0})
    # the history is written behind the log: wait until the searches show the seed
    deadline = time.time() + 30
    while time.time() < deadline:
        _, out = request(base, "POST", "/v2/incidents/search", {})
        if out["page"]["totalItems"] > 0:
            break
        time.sleep(0.3)
    _, out = request(base, "POST", "/v2/process-instances/search", {})
    print(f"schemathesis: seeded {out['page']['totalItems']} process instances", flush=True)


# The gets' path parameters, filled from the seed in a second pass: parameter -> (the search
# that finds one, its field). schemathesis 4.32.5 fails on its own dictionary bindings (a mix of
# seeded and generated values, "Pointer '/x-bundled/...' does not exist"), so the first pass
# generates keys (mostly 404s) and the second gets real entities.
KEY_SOURCES = {
    "processInstanceKey": ("process-instances", "processInstanceKey"),
    "processDefinitionKey": ("process-definitions", "processDefinitionKey"),
    "elementInstanceKey": ("element-instances", "elementInstanceKey"),
    "incidentKey": ("incidents", "incidentKey"),
    "variableKey": ("variables", "variableKey"),
    "userTaskKey": ("user-tasks", "userTaskKey"),
    "decisionDefinitionKey": ("decision-definitions", "decisionDefinitionKey"),
    "decisionRequirementsKey": ("decision-requirements", "decisionRequirementsKey"),
    "decisionEvaluationInstanceKey": ("decision-instances", "decisionEvaluationInstanceKey"),
    "resourceKey": ("process-definitions", "processDefinitionKey"),
}


def seeded_keys_config(base, tmpdir):
    """A schemathesis.toml that gives each key parameter a key the seed made."""
    bindings = []
    for param, (resource, field) in KEY_SOURCES.items():
        _, out = request(base, "POST", f"/v2/{resource}/search", {"page": {"limit": 1}})
        if out["items"]:
            bindings.append(f'"path.{param}" = {json.dumps(str(out["items"][0][field]))}')
    path = Path(tmpdir) / "schemathesis.toml"
    path.write_text("[parameters]\n" + "\n".join(bindings) + "\n")
    return path


def schemathesis(spec, base, options, cwd, config=None):
    """One `schemathesis run` over the operations Zest serves; its exit status."""
    exe = str(Path(sys.executable).parent / "schemathesis")
    args = [exe, "--no-color"] + (["--config-file", str(config)] if config else [])
    args += [
        "run", str(spec),
        "--url", base + "/v2",
        "--checks", CHECKS,
        "--seed", str(SEED),
        # one worker: hypothesis's threads hit CPython 3.11's "AST constructor recursion depth
        # mismatch" (a SystemError in ast.parse) now and then; one also keeps runs repeatable
        "--workers", "1",
        # above Zest's default long poll (15 s), which a job activation without requestTimeout gets
        "--request-timeout", "20",
        "--suppress-health-check", "all",
        "--generation-database", "none",
    ] + options
    for tag in EXCLUDED_TAGS:
        args += ["--exclude-tag", tag]
    for op in EXCLUDED_OPERATIONS:
        args += ["--exclude-operation-id", op]
    args += os.environ.get("SCHEMATHESIS_ARGS", "").split()
    # its cwd: the temporary folder, where schemathesis keeps its own files (.schemathesis/)
    return subprocess.call(args, cwd=cwd)


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    base = sys.argv[1].rstrip("/")
    if not SPEC.is_file():
        raise SystemExit(f"schemathesis: Camunda's OpenAPI document is missing: expected {SPEC} "
                         "(the shared/ folder beside the checkout)")
    seed(base)
    tmp = tempfile.mkdtemp(prefix="zest-schemathesis-")
    try:
        spec = adjusted_spec(tmp)
        for op, why in sorted(EXCLUDED_OPERATIONS.items()):
            print(f"schemathesis: excluded {op}: {why}")
        print("schemathesis: pass 1: every operation, generated values", flush=True)
        first = schemathesis(spec, base, [
            "--max-examples", str(MAX_EXAMPLES), "--phases", "examples,coverage,fuzzing",
        ], tmp)
        print("schemathesis: pass 2: the gets, with the seed's keys in their paths", flush=True)
        config = seeded_keys_config(base, tmp)
        second = schemathesis(spec, base, [
            "--include-method", "GET", "--max-examples", "4", "--phases", "examples,fuzzing",
        ], tmp, config)
        print("schemathesis: pass 3: 8.9's statistics, expression evaluation and history "
              "deletion, 8.9's document",
              flush=True)
        third = 0
        if SPEC_89.is_file():
            only = [a for op in OPERATIONS_89 for a in ("--include-operation-id", op)]
            third = schemathesis(adjusted_spec_89(tmp), base, only + [
                "--max-examples", str(MAX_EXAMPLES), "--phases", "examples,coverage,fuzzing",
            ], tmp)
        else:
            print(f"schemathesis: pass 3 skipped: {SPEC_89} is missing")
        return first or second or third
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
