#!/usr/bin/env python3
"""PostgreSQL stopped under load and started again; a node SIGKILLed while it exports.

    outage.py ZEST_BIN POSTGRES_SH PG_DIR PG_PORT PG_URL [--outage-s 60] [--cluster]

Single node (default): `zest start --history-url` on a schema of its own; instances created
over the REST API at a steady rate (a process of a few elements that needs no worker, each
instance with the typical payload's 30 variables); PostgreSQL stopped (fast shutdown) for
--outage-s while the load goes on, then started again.

--cluster: three `zest start` processes (3 partitions, replication factor 3) sharing one
schema, every replica exporting to it; the leader of partition 1 is SIGKILLed mid-load, left
dead for --outage-s, and started again on its data directory.

Then it checks what a user is promised:
- processing never stopped: creations kept being acknowledged during the fault;
- nothing lost: every instance whose creation was acknowledged is in history, completed, and
  the REST API's search finds as many as the store holds;
- nothing twice: every instance has the same rows as every other (elements, variables,
  sequence flows) and no incident count, so no record's effect was applied twice.
"""
import argparse
import http.client
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))

PROCESS = """<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d"
    targetNamespace="http://bpmn.io/schema/bpmn">
  <bpmn:process id="outage" isExecutable="true">
    <bpmn:startEvent id="start" />
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="step" />
    <bpmn:intermediateThrowEvent id="step" />
    <bpmn:sequenceFlow id="f2" sourceRef="step" targetRef="end" />
    <bpmn:endEvent id="end" />
  </bpmn:process>
</bpmn:definitions>
"""


def log(msg):
    print(f"outage: {msg}", flush=True)


STARTED = []  # every zest process started, killed when the script ends


def fail(msg):
    print(f"outage: FAIL: {msg}", flush=True)
    sys.exit(1)


def start_node(zest, data, extra, env):
    out = open(data + ".out", "w")
    err = open(data + ".err", "a")
    p = subprocess.Popen([zest, "start", "--data-dir", data] + extra, stdout=out,
                         stderr=err, env=env)
    STARTED.append(p)
    return p


def wait_ready(data, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            text = open(data + ".out").read()
        except FileNotFoundError:
            text = ""
        m = re.search(r"READY gateway=(\S+) management=(\S+) rest=(\S+)", text)
        if m:
            return m.group(1), m.group(2), m.group(3)
        time.sleep(0.2)
    fail(f"{data} did not start: {open(data + '.err').read()[-2000:]}")


def metric(mgmt, name):
    try:
        text = urllib.request.urlopen(f"http://{mgmt}/metrics", timeout=5).read().decode()
    except OSError:
        return 0.0
    return sum(float(l.rsplit(" ", 1)[1]) for l in text.splitlines()
               if l.startswith(name + "{") or l.startswith(name + " "))


def deploy(rest):
    boundary = "zestoutage"
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"resources\"; "
            f"filename=\"outage.bpmn\"\r\nContent-Type: application/xml\r\n\r\n{PROCESS}\r\n"
            f"--{boundary}--\r\n").encode()
    req = urllib.request.Request(f"http://{rest}/v2/deployments", data=body, headers={
        "Content-Type": f"multipart/form-data; boundary={boundary}"})
    urllib.request.urlopen(req, timeout=30).read()


class Load:
    """Creations over REST from a few threads at `rate` per second in all, round robin over
    the live nodes; the keys of the acknowledged ones, and when each was acknowledged."""

    def __init__(self, nodes, rate, variables):
        self.nodes = nodes
        self.rate = rate
        self.body = json.dumps({"processDefinitionId": "outage", "variables": variables})
        self.acked = []  # (time, key)
        self.failed = 0
        self.stop = False
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self.run, args=(i,), daemon=True)
                        for i in range(4)]

    def start(self):
        for t in self.threads:
            t.start()

    def run(self, i):
        interval = len(self.threads) / self.rate
        conns = {}
        turn = i
        next_at = time.time()
        while not self.stop:
            node = self.nodes[turn % len(self.nodes)]
            turn += 1
            if node.get("dead"):
                continue
            rest = node["rest"]
            try:
                c = conns.get(rest) or http.client.HTTPConnection(rest, timeout=10)
                conns[rest] = c
                c.request("POST", "/v2/process-instances", self.body,
                          {"Content-Type": "application/json"})
                r = c.getresponse()
                data = r.read()
                if r.status == 200:
                    key = int(json.loads(data)["processInstanceKey"])
                    with self.lock:
                        self.acked.append((time.time(), key))
                else:
                    with self.lock:
                        self.failed += 1
            except (OSError, http.client.HTTPException):
                conns.pop(rest, None)
                with self.lock:
                    self.failed += 1
                time.sleep(0.05)
            next_at += interval
            time.sleep(max(0.0, next_at - time.time()))

    def finish(self):
        self.stop = True
        for t in self.threads:
            t.join(timeout=30)

    def acked_between(self, t0, t1):
        with self.lock:
            return sum(1 for t, _ in self.acked if t0 <= t < t1)


def psql(url, schema, sql, stdin=None):
    env = dict(os.environ, PGOPTIONS=f"-c search_path={schema}")
    out = subprocess.run(["psql", url, "-qAtX", "-v", "ON_ERROR_STOP=1", "-c", sql], env=env,
                         check=True, capture_output=True, text=True, input=stdin)
    return out.stdout.strip()


def search_total(rest, body):
    req = urllib.request.Request(f"http://{rest}/v2/process-instances/search",
                                 data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.load(r)["page"]["totalItems"]


def start_cluster(args, url, work, env):
    ports = [27700 + i for i in range(3)]
    contact = ",".join(f"127.0.0.1:{p}" for p in ports)
    nodes = []
    for i in range(3):
        extra = ["--node-id", str(i), "--cluster-size", "3", "--partitions", "3",
                 "--replication-factor", "3", "--internal-address", f"127.0.0.1:{ports[i]}",
                 "--contact-points", contact, "--gateway-address", "127.0.0.1:0",
                 "--management-address", "127.0.0.1:0", "--rest-address", "127.0.0.1:0",
                 "--history-url", url]
        data = os.path.join(work, f"node{i}")
        nodes.append({"data": data, "extra": extra, "p": start_node(args.zest, data, extra, env)})
    return nodes


def leaders(rest):
    topo = json.load(urllib.request.urlopen(f"http://{rest}/v2/topology", timeout=5))
    return {p["partitionId"]: b["nodeId"] for b in topo["brokers"] for p in b["partitions"]
            if p["role"] == "leader"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("zest")
    ap.add_argument("postgres_sh")
    ap.add_argument("pg_dir")
    ap.add_argument("pg_port")
    ap.add_argument("pg_url")
    ap.add_argument("--outage-s", type=float, default=60)
    ap.add_argument("--cluster", action="store_true")
    ap.add_argument("--rate", type=int, default=100)
    args = ap.parse_args()

    schema = "outage_cluster" if args.cluster else "outage"
    subprocess.run(["psql", args.pg_url, "-qAtX", "-c",
                    f"SET client_min_messages = warning; DROP SCHEMA IF EXISTS {schema} CASCADE; "
                    f"CREATE SCHEMA {schema}"],
                   check=True)
    url = f"{args.pg_url}?options=-c%20search_path%3D{schema}"
    work = tempfile.mkdtemp(prefix="zest-outage-")
    env = dict(os.environ, ZEST_LOG="warn")
    if args.cluster:
        nodes = start_cluster(args, url, work, env)
    else:
        extra = ["--gateway-address", "127.0.0.1:0", "--management-address", "127.0.0.1:0",
                 "--rest-address", "127.0.0.1:0", "--history-url", url]
        data = os.path.join(work, "node")
        nodes = [{"data": data, "extra": extra, "p": start_node(args.zest, data, extra, env)}]
    for n in nodes:
        n["gateway"], n["mgmt"], n["rest"] = wait_ready(n["data"])
    deadline = time.time() + 60
    while args.cluster and time.time() < deadline:
        try:
            if len(leaders(nodes[0]["rest"])) == 3:
                break
        except OSError:
            pass
        time.sleep(0.5)
    deploy(nodes[0]["rest"])
    time.sleep(1)
    variables = json.load(open(os.path.join(ROOT, "crates/zest/bench/typical_payload.json")))
    load = Load(nodes, args.rate, variables)
    load.start()
    time.sleep(8)
    fault_start = time.time()
    if args.cluster:
        leader = leaders(nodes[0]["rest"])[1]
        victim = nodes[leader]
        log(f"SIGKILL node {leader}, the leader of partition 1, "
            f"after {len(load.acked)} creations")
        victim["dead"] = True
        victim["p"].send_signal(signal.SIGKILL)
        victim["p"].wait()
        time.sleep(args.outage_s)
        fault_end = time.time()
        log(f"restart node {leader}")
        victim["p"] = start_node(args.zest, victim["data"], victim["extra"], env)
        victim["gateway"], victim["mgmt"], victim["rest"] = wait_ready(victim["data"])
        victim["dead"] = False
    else:
        log(f"PostgreSQL stopped after {len(load.acked)} creations")
        subprocess.run([args.postgres_sh, "stop", args.pg_dir], check=True)
        time.sleep(args.outage_s)
        fault_end = time.time()
        failures = metric(nodes[0]["mgmt"], "zest_exporter_failures_total")
        subprocess.run([args.postgres_sh, "start", args.pg_dir, args.pg_port], check=True,
                       stdout=subprocess.DEVNULL)
        log(f"PostgreSQL started again; {failures:.0f} export attempts had failed")
        if not failures:
            fail("the exporter never noticed PostgreSQL was gone")
    during = load.acked_between(fault_start, fault_end)
    expected = args.rate * args.outage_s
    log(f"{during} creations acknowledged during the fault ({expected:.0f} asked)")
    if during < expected / 2:
        fail("processing stalled during the fault")
    time.sleep(10)
    load.finish()
    acked = sorted(k for _, k in load.acked)
    log(f"{len(acked)} creations acknowledged, {load.failed} refused or failed")
    if len(set(acked)) != len(acked):
        fail("a key was acknowledged twice")
    # every acknowledged instance, completed, in the store (loaded into a temporary table)
    keys = "\n".join(str(k) for k in acked) + "\n"
    deadline = time.time() + 120
    while True:
        missing = psql(args.pg_url, schema,
                       "CREATE TEMP TABLE acked (key BIGINT PRIMARY KEY); "
                       "COPY acked FROM STDIN; "
                       "SELECT count(*) FROM acked a LEFT JOIN process_instance p "
                       "ON p.key = a.key WHERE p.state IS DISTINCT FROM 'COMPLETED'",
                       stdin=keys)
        missing = int(missing.splitlines()[-1])
        if missing == 0 or time.time() > deadline:
            break
        time.sleep(2)
    if missing:
        fail(f"{missing} acknowledged instances are not in history as completed")
    stored = int(psql(args.pg_url, schema, "SELECT count(*) FROM process_instance"))
    found = search_total(nodes[0]["rest"], {"page": {"limit": 1}})
    log(f"history: {stored} instances stored, {found} found by the search, "
        f"{len(acked)} acknowledged")
    if found != stored or stored < len(acked):
        fail("the search and the store disagree, or the store lacks instances")
    checks = {"with incident counts":
              "SELECT count(*) FROM process_instance WHERE incidents <> 0"}
    for table in ("element_instance", "variable", "sequence_flow"):
        checks[table] = (
            f"SELECT count(DISTINCT c) || ':' || count(*) || ':' || min(c) FROM "
            f"(SELECT process_instance_key, count(*) c FROM {table} "
            f"GROUP BY process_instance_key) x")
    results = {k: psql(args.pg_url, schema, q) for k, q in checks.items()}
    log(f"rows per instance (shapes:instances:rows): {results}")
    if results["with incident counts"] != "0":
        fail("an incident count was applied twice")
    for table in ("element_instance", "variable", "sequence_flow"):
        shapes, instances, _ = results[table].split(":")
        if shapes != "1" or int(instances) != stored:
            fail(f"{table}: the instances differ in their rows: a record was lost or applied "
                 f"twice")
    for n in nodes:
        n["p"].send_signal(signal.SIGTERM)
    for n in nodes:
        n["p"].wait(timeout=30)
    shutil.rmtree(work, ignore_errors=True)
    log("PASS: nothing lost, nothing twice, processing never stopped")


if __name__ == "__main__":
    try:
        main()
    finally:
        for p in STARTED:
            if p.poll() is None:
                p.kill()
                p.wait()
