"""A bucket for the segment protocol, through boto3 (the AWS way), imported on use.

Credentials come from boto3's standard chain (environment, profiles, SSO, instance
roles); ``?profile=`` and ``?region=`` in the URL pick a profile and a region,
else the chain's region, else ``us-east-1``. ``AWS_ENDPOINT_URL_S3`` (first) or
``AWS_ENDPOINT_URL`` points at another S3-compatible server (MinIO, moto) and
switches to path-style addressing. Timeouts: 15 s to connect, 60 s per read.

Only ``kgai-tui sync`` imports this module, and boto3 is imported inside
:func:`open_bucket`, so no other command pays for it (docs/sync.md has the cost).
"""

from __future__ import annotations

import importlib
import itertools
import os
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Final, Protocol, TypeVar

from kgai_tui.core.reads.health import redact
from kgai_tui.sync.run import SyncError
from kgai_tui.sync.s3_protocol import DEFAULT_REGION, S3Url

__all__ = [
    "MAX_SEGMENT",
    "BotoBucket",
    "Bucket",
    "RemoteError",
    "SegmentExists",
    "fetch_in_order",
    "open_bucket",
]

#: A segment larger than this is refused (the git transport's bound on a shard).
MAX_SEGMENT: Final = 512 * 1024 * 1024
CONNECT_TIMEOUT: Final = 15.0
READ_TIMEOUT: Final = 60.0
_EXISTS: Final = frozenset(("PreconditionFailed", "ConditionalRequestConflict"))
_PARALLEL: Final = 8


class RemoteError(Exception):
    """A bucket operation failed (offline, no access, throttled); one line."""


class SegmentExists(RemoteError):
    """A write-once put met an existing key (``If-None-Match: *`` refused it)."""


class Bucket(Protocol):
    """What the protocol needs from a bucket."""

    def list_keys(self, prefix: str) -> list[str]:
        """Every key under ``prefix``."""
        ...

    def get(self, key: str) -> bytes:
        """One object's bytes."""
        ...

    def put_new(self, key: str, body: bytes) -> None:
        """Create ``key``; :class:`SegmentExists` when it exists already."""
        ...


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:300]


def _code(exc: BaseException) -> str:
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        error = response.get("Error")
        if isinstance(error, dict):
            return str(error.get("Code", ""))
    return ""


class BotoBucket:
    """A bucket reached through a boto3 S3 client (thread-safe for parallel gets)."""

    def __init__(
        self, client: Any, bucket: str, errors: tuple[type[BaseException], ...]
    ):
        """Wrap ``client``; ``errors`` are botocore's base exceptions."""
        self._client = client
        self._bucket = bucket
        self._errors = errors

    def _call(self, what: str, func: Callable[[], Any]) -> Any:
        try:
            return func()
        except self._errors as exc:
            if _code(exc) in _EXISTS:
                raise SegmentExists(f"{what}: {_one_line(exc)}") from exc
            if _code(exc) == "NoSuchBucket":
                raise SyncError(
                    f"no bucket {self._bucket!r} at the remote (nothing was pushed or "
                    "pulled): create it, or fix the remote (kgai-tui remote)"
                ) from exc
            raise RemoteError(f"{what}: {_one_line(exc)}") from exc

    def list_keys(self, prefix: str) -> list[str]:
        """Every key under ``prefix`` (all pages)."""

        def run() -> list[str]:
            pages = self._client.get_paginator("list_objects_v2").paginate(
                Bucket=self._bucket, Prefix=prefix
            )
            return [str(o["Key"]) for page in pages for o in page.get("Contents", ())]

        keys: list[str] = self._call(f"list {prefix or '/'}", run)
        return keys

    def get(self, key: str) -> bytes:
        """One object's bytes, refusing one over :data:`MAX_SEGMENT`."""

        def run() -> bytes:
            reply = self._client.get_object(Bucket=self._bucket, Key=key)
            body = reply["Body"]
            try:
                if int(reply.get("ContentLength", 0)) > MAX_SEGMENT:
                    raise RemoteError(f"get {key}: larger than {MAX_SEGMENT} bytes")
                data = body.read(MAX_SEGMENT + 1)
            finally:
                body.close()
            if len(data) > MAX_SEGMENT:
                raise RemoteError(f"get {key}: larger than {MAX_SEGMENT} bytes")
            return bytes(data)

        data: bytes = self._call(f"get {key}", run)
        return data

    def put_new(self, key: str, body: bytes) -> None:
        """Create ``key`` with ``If-None-Match: *``."""
        self._call(
            f"put {key}",
            lambda: self._client.put_object(
                Bucket=self._bucket,
                Key=key,
                Body=body,
                IfNoneMatch="*",
                ContentType="application/x-ndjson",
            ),
        )


def _endpoint() -> str:
    return os.environ.get("AWS_ENDPOINT_URL_S3", "") or os.environ.get(
        "AWS_ENDPOINT_URL", ""
    )


def open_bucket(url: S3Url) -> BotoBucket:
    """A client for ``url``'s bucket, configured the reference's way.

    Raises:
        SyncError: boto3 is not installed, or the AWS configuration (the profile)
            cannot be loaded.
    """
    try:
        boto3 = importlib.import_module("boto3")
        config = importlib.import_module("botocore.config")
        exceptions = importlib.import_module("botocore.exceptions")
    except ImportError as exc:
        raise SyncError(
            "the S3 transport needs boto3: pip install 'kgai-tui[s3]'"
        ) from exc
    endpoint = _endpoint()
    options: dict[str, Any] = {
        "connect_timeout": CONNECT_TIMEOUT,
        "read_timeout": READ_TIMEOUT,
        "retries": {"mode": "standard", "max_attempts": 3},
        "user_agent_extra": "kgai-tui",
    }
    if endpoint:
        # S3-compatible servers: path-style, and checksums only where S3 needs them
        # (older MinIO and Ceph refuse the newer default trailers).
        options["s3"] = {"addressing_style": "path"}
        options["request_checksum_calculation"] = "when_required"
        options["response_checksum_validation"] = "when_required"
    errors = (exceptions.BotoCoreError, exceptions.ClientError)
    try:
        session = boto3.session.Session(
            profile_name=url.profile or None, region_name=url.region or None
        )
        client = session.client(
            "s3",
            region_name=session.region_name or DEFAULT_REGION,
            endpoint_url=endpoint or None,
            config=config.Config(**options),
        )
    except errors as exc:
        raise SyncError(
            f"cannot load the AWS configuration for {redact(endpoint) or 'S3'}: "
            f"{_one_line(exc)}"
        ) from exc
    return BotoBucket(client, url.bucket, errors)


T = TypeVar("T")


def fetch_in_order(
    get: Callable[[str], T], keys: list[str]
) -> Iterator[T | RemoteError]:
    """``get`` each key, a few at a time, yielding in key order; a failure in its place.

    At most eight gets run or wait ahead of the consumer, so a clone holds a few
    segments in memory at once, not the whole team's log.
    """

    def one(key: str) -> T | RemoteError:
        try:
            return get(key)
        except RemoteError as exc:
            return exc

    if len(keys) <= 1:
        yield from (one(k) for k in keys)
        return
    with ThreadPoolExecutor(max_workers=min(_PARALLEL, len(keys))) as pool:
        todo = iter(keys)
        ahead = deque(pool.submit(one, k) for k in itertools.islice(todo, _PARALLEL))
        while ahead:
            done = ahead.popleft().result()
            for key in itertools.islice(todo, 1):
                ahead.append(pool.submit(one, key))
            yield done
