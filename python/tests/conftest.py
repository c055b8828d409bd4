"""Shared fixtures: the repository's golden data, and the backends to run on."""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path

import numpy as np
import pytest

import sinew

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden"


def gpu_available() -> bool:
    """True when a GPU adapter (hardware or Mesa's lavapipe) is present."""
    return not sinew.gpu_status().startswith("no ")


def backends() -> list:
    """``cpu`` always; ``wgpu`` when an adapter exists, and under CI (where a
    missing adapter is a failure, as in the Rust tests)."""
    out = ["cpu"]
    if gpu_available() or os.environ.get("CI"):
        out.append("wgpu")
    else:
        out.append(pytest.param("wgpu", marks=pytest.mark.skip(reason=sinew.gpu_status())))
    return out


@pytest.fixture(params=backends())
def backend(request) -> str:
    return request.param


def golden_cases(file: str) -> list[dict]:
    return json.loads((GOLDEN / "mjlab" / file).read_text())["cases"]


def write_safetensors(path: Path, layers: list[dict]) -> None:
    """An MLP in the safetensors layout Sinew reads (``{k}.weight``,
    ``{k}.bias`` per layer, activations in the metadata)."""
    header: dict = {
        "__metadata__": {
            "layers": ",".join(str(k) for k in range(len(layers))),
            "activations": ",".join(layer["activation"] for layer in layers),
        }
    }
    blobs = []
    offset = 0
    for k, layer in enumerate(layers):
        for name, value in (("weight", layer["weight"]), ("bias", layer["bias"])):
            a = np.asarray(value, dtype=np.float32)
            data = a.tobytes()
            header[f"{k}.{name}"] = {
                "dtype": "F32",
                "shape": list(a.shape),
                "data_offsets": [offset, offset + len(data)],
            }
            blobs.append(data)
            offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    path.write_bytes(struct.pack("<Q", len(text)) + text + b"".join(blobs))
