"""A real S3 server for tests: moto's server mode on 127.0.0.1 with a free port, in its own
process. Buckets are created and listed with boto3 (a test tool, not a code path of ours)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from dataclasses import dataclass
from typing import Any

ACCESS_KEY = "paimon-test-access"
SECRET_KEY = "paimon-test-secret"
REGION = "us-east-1"
_ATOMIC_SERVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "moto_atomic_server.py")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class S3Server:
    endpoint: str
    process: subprocess.Popen[bytes]

    @staticmethod
    def start() -> S3Server:
        port = free_port()
        env = {**os.environ, "MOTO_ALLOW_NONEXISTENT_REGION": "true"}
        process = subprocess.Popen(
            [sys.executable, _ATOMIC_SERVER, "-H", "127.0.0.1", "-p", str(port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        endpoint = f"http://127.0.0.1:{port}"
        deadline = time.time() + 60
        while True:
            try:
                urllib.request.urlopen(endpoint + "/moto-api/", timeout=1).close()
                break
            except OSError:
                if process.poll() is not None or time.time() > deadline:
                    process.kill()
                    raise RuntimeError("moto server did not start") from None
                time.sleep(0.1)
        return S3Server(endpoint, process)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()

    def client(self) -> Any:
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id=ACCESS_KEY,
            aws_secret_access_key=SECRET_KEY,
            region_name=REGION,
        )

    def new_bucket(self) -> str:
        name = f"bucket-{uuid.uuid4().hex[:12]}"
        self.client().create_bucket(Bucket=name)
        return name

    def options(self) -> dict[str, str]:
        """The catalog options of a warehouse on this server (Java Paimon's names)."""
        return {
            "s3.endpoint": self.endpoint,
            "s3.access-key": ACCESS_KEY,
            "s3.secret-key": SECRET_KEY,
            "s3.path.style.access": "true",
            "s3.endpoint.region": REGION,
        }

    def list_keys(self, bucket: str, prefix: str = "") -> list[str]:
        keys: list[str] = []
        paginator = self.client().get_paginator("list_objects_v2")
        for page in paginator.paginate(Bucket=bucket, Prefix=prefix):
            keys += [o["Key"] for o in page.get("Contents", [])]
        return sorted(keys)

    def open_uploads(self, bucket: str) -> list[str]:
        uploads = self.client().list_multipart_uploads(Bucket=bucket).get("Uploads", [])
        return [u["Key"] for u in uploads]
