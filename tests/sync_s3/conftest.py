"""A real S3-compatible server on 127.0.0.1 for the S3 sync tests.

The server (``s3_server.py``: moto's S3, conditional puts decided one at a time as
S3 does) runs as a subprocess for the whole session; each test gets its own bucket
and the environment boto3 reads (``AWS_ENDPOINT_URL``, keys, no profile files).
moto and boto3 come with ``pip install -e '.[test]'``; without them these tests
error rather than skip.
"""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).parent


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    """``http://127.0.0.1:PORT`` of a moto S3 server started for this session."""
    proc = subprocess.Popen(
        [sys.executable, str(HERE / "s3_server.py")],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        port = proc.stdout.readline().strip()
        assert port.isdigit(), "the S3 test server did not start"
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture
def s3_env(s3_endpoint: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """Point boto3 (here and in subprocesses) at the test server; return the endpoint."""
    for var in (
        "AWS_PROFILE",
        "AWS_ENDPOINT_URL_S3",
        "AWS_SESSION_TOKEN",
        "AWS_REGION",
    ):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3_endpoint)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-creds"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("KGAI_MACHINE", "test-machine")  # copies keep their identity
    return s3_endpoint


@pytest.fixture
def bucket(s3_env: str) -> str:
    """A fresh, empty bucket on the test server."""
    from s3_helpers import s3

    name = f"kg-{uuid.uuid4().hex[:12]}"
    s3().create_bucket(Bucket=name)
    return name
