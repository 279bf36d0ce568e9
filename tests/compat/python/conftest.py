"""Server for the pyzeebe suite.

ZEEBE_ADDRESS=host:port: use that server (e.g. the real Zeebe engine).
ZEST_BIN=/path/to/zest: start `zest start --data-dir DIR` with port 0 for its addresses (the
node binds what the kernel gives it, so no port is picked that another process could take
first) and a temp data dir, read the addresses from the READY line on stdout, SIGTERM it at the
end of the session.
"""

import os
import re
import secrets
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest

TESTDATA = Path(__file__).resolve().parent.parent / "testdata"
READY_TIMEOUT_S = 60


def _ready_field(line: str, name: str) -> str:
    """The value of `name=` in zest's READY line."""
    match = re.search(rf"\b{name}=(\S+)", line)
    if not match:
        raise RuntimeError(f"no {name}= in the READY line: {line!r}")
    return match.group(1)


class ZestProcess:
    def __init__(self, binary: str, extra: list[str] | None = None):
        self.extra = extra or []
        self.binary = os.path.abspath(binary)
        if not os.path.isfile(self.binary):
            raise RuntimeError(f"ZEST_BIN={binary} is not a file")
        self.data_dir = tempfile.mkdtemp(prefix="zest-pytest-data-")
        self.address = ""
        self.log: list[str] = []
        self.proc: subprocess.Popen | None = None

    def args(self) -> list[str]:
        return [self.binary, "start", "--data-dir", self.data_dir,
                "--gateway-address", "127.0.0.1:0", "--management-address", "127.0.0.1:0",
                "--rest-address", "127.0.0.1:0", *self.extra]

    def start(self) -> None:
        self.proc = subprocess.Popen(self.args(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        ready = threading.Event()

        def pump():
            assert self.proc and self.proc.stdout
            for line in self.proc.stdout:
                self.log.append(line.rstrip("\n"))
                if line.startswith("READY "):
                    self.address = _ready_field(line, "gateway")
                    ready.set()

        threading.Thread(target=pump, daemon=True).start()
        deadline = time.monotonic() + READY_TIMEOUT_S
        while not ready.wait(0.1):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.proc.kill()
                self.proc.wait()
                raise RuntimeError("zest did not print READY:\n" + "\n".join(self.log[-40:]))

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.data_dir, ignore_errors=True)


@pytest.fixture(scope="session")
def zeebe_address():
    addr = os.environ.get("ZEEBE_ADDRESS")
    if addr:
        yield addr
        return
    binary = os.environ.get("ZEST_BIN")
    if not binary:
        pytest.exit("set ZEEBE_ADDRESS=host:port or ZEST_BIN=/path/to/zest", returncode=2)
    zest = ZestProcess(binary)
    zest.start()
    try:
        yield zest.address
    finally:
        zest.stop()


def unique_id(name: str) -> str:
    base = re.sub(r"[^A-Za-z0-9_]+", "_", name)[:40] or "p"
    if base[0].isdigit():
        base = "p_" + base
    return f"{base}_{secrets.token_hex(4)}"


@pytest.fixture
def model(tmp_path, request):
    """model(file, token) -> (unique_id, path): testdata/file with token replaced, in tmp_path."""

    def make(file: str, token: str):
        uid = unique_id(request.node.name)
        text = (TESTDATA / file).read_text()
        assert token in text, f"{file} lacks token {token}"
        path = tmp_path / f"{uid}.bpmn"
        path.write_text(text.replace(token, uid))
        return uid, path

    return make
