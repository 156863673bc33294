"""One simulation checkpoint as a file: a checked header, then the state compressed.

A file is ``MAGIC``, the header's length (4 bytes, little endian), the header
(JSON: format, codec, arrays, payload size and SHA-256, and the caller's
metadata), then the payload: the state arrays byte-shuffled (every value's
first bytes together, then its second bytes, ...: float exponents repeat, so
they compress) and compressed.  Reading checks all of it, so a file from
another format, a truncated or a corrupt one is refused with the reason,
never used.  Writing goes to a hidden temporary name in the same folder and
is renamed only once complete (a full disk or a kill leaves the old file).

The codec, zstd level 3 after a byte shuffle, was chosen by measurement:
``bench/results/llvmpipe-llvm-15-0-6-256-bits-2026-11-23-cache_format.json``
(simulated floats keep little redundancy beyond their exponents).  zstandard ships with Blender (the bpy
module requires it); the others stay readable.
"""

from __future__ import annotations

import hashlib
import json
import lzma
import os
import struct
import zlib
from pathlib import Path

import numpy as np
import zstandard

MAGIC = b"GPUPCACHE\x00"
FORMAT = 1
SUFFIX = ".gpc"


class CacheError(RuntimeError):
    """A cache that cannot be used or written; the message says which file and why."""


CODECS = {
    "none": (lambda data: data, lambda data: data),
    "zlib1": (lambda data: zlib.compress(data, 1), zlib.decompress),
    "zlib6": (lambda data: zlib.compress(data, 6), zlib.decompress),
    "lzma": (lambda data: lzma.compress(data, preset=1), lzma.decompress),
    "zstd3": (lambda data: zstandard.ZstdCompressor(level=3).compress(data),
              lambda data: zstandard.ZstdDecompressor().decompress(data)),
}
CODEC = "zstd3"
SHUFFLE = True


def shuffle(array: np.ndarray) -> bytes:
    """The array's bytes grouped by position within each value (all first bytes, then all second, ...)."""
    flat = np.ascontiguousarray(array).reshape(-1)
    return flat.view(np.uint8).reshape(flat.size, flat.itemsize).T.tobytes()


def unshuffle(data: bytes, dtype, shape) -> np.ndarray:
    itemsize = np.dtype(dtype).itemsize
    planes = np.frombuffer(data, np.uint8).reshape(itemsize, -1)
    return np.ascontiguousarray(planes.T).view(dtype).reshape(shape)


def encode(arrays, meta: dict, codec: str = CODEC, byte_shuffle: bool = SHUFFLE) -> bytes:
    """The file's bytes for ``arrays`` (numpy arrays) and ``meta`` (JSON-able)."""
    compress = CODECS[codec][0]
    raw = b"".join(shuffle(a) if byte_shuffle else np.ascontiguousarray(a).tobytes() for a in arrays)
    payload = compress(raw)
    header = {
        "format": FORMAT, "codec": codec, "shuffle": byte_shuffle,
        "arrays": [{"dtype": np.dtype(a.dtype).str, "shape": list(a.shape)} for a in arrays],
        "raw_size": len(raw), "payload_size": len(payload), "sha256": hashlib.sha256(payload).hexdigest(),
        "meta": meta,
    }
    encoded = json.dumps(header, sort_keys=True).encode()
    return MAGIC + struct.pack("<I", len(encoded)) + encoded + payload


def decode(data: bytes, where: str = "checkpoint") -> tuple[list[np.ndarray], dict]:
    """(arrays, meta) from a file's bytes; CacheError says what is wrong with them."""
    if not data.startswith(MAGIC):
        raise CacheError(f"{where} is not a GPU Particles cache file (or its start is damaged)")
    try:
        (size,) = struct.unpack_from("<I", data, len(MAGIC))
        start = len(MAGIC) + 4
        header = json.loads(data[start:start + size])
    except (struct.error, ValueError):
        raise CacheError(f"{where} has a damaged header (truncated or corrupt)") from None
    if header.get("format") != FORMAT:
        raise CacheError(f"{where} is cache format {header.get('format')}; this add-on reads format {FORMAT}")
    payload = data[start + size:]
    if len(payload) != header["payload_size"]:
        raise CacheError(f"{where} is truncated: {len(payload):,} of {header['payload_size']:,} payload bytes")
    if hashlib.sha256(payload).hexdigest() != header["sha256"]:
        raise CacheError(f"{where} is corrupt: its checksum does not match")
    if header["codec"] not in CODECS:
        raise CacheError(f"{where} is compressed with {header['codec']}, which this add-on does not read")
    try:
        raw = CODECS[header["codec"]][1](payload)
    except (zlib.error, lzma.LZMAError, zstandard.ZstdError):
        raise CacheError(f"{where} is corrupt: it does not decompress") from None
    if len(raw) != header["raw_size"]:
        raise CacheError(f"{where} is corrupt: {len(raw):,} bytes where {header['raw_size']:,} were written")
    arrays, offset = [], 0
    for spec in header["arrays"]:
        dtype, shape = np.dtype(spec["dtype"]), tuple(spec["shape"])
        nbytes = dtype.itemsize * int(np.prod(shape))
        chunk = raw[offset:offset + nbytes]
        arrays.append(unshuffle(chunk, dtype, shape) if header["shuffle"]
                      else np.frombuffer(chunk, dtype).reshape(shape).copy())
        offset += nbytes
    return arrays, header["meta"]


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary name; on failure the old file (if any) stays."""
    path = Path(path)
    partial = path.with_name(f".{path.name}.partial")
    try:
        with open(partial, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(partial, path)
    except OSError as error:
        partial.unlink(missing_ok=True)
        reason = "the disk is full" if error.errno == 28 else (error.strerror or str(error))
        raise CacheError(f"Could not write the simulation cache file '{path}': {reason}; "
                         f"the cache written before is unchanged") from None


def read(path: Path) -> tuple[list[np.ndarray], dict]:
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise CacheError(f"Could not read cache file '{path}': {error.strerror or error}") from None
    return decode(data, f"Cache file '{path}'")
