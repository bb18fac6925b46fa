"""The bad-input probe's files (scripts/check/probe.py): safetensors checkpoints, PNG images and
copies of the MNIST folder, each made as bad as a case needs."""
import gzip
import json
import os
import random
import struct
import zlib


def write_safetensors(path, tensors, metadata=None, header_override=None):
    header, data = {}, b""
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, (shape, values) in tensors.items():
        raw = struct.pack(f"<{len(values)}f", *values)
        header[name] = {"dtype": "F32", "shape": shape,
                        "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header) if header_override is None else header_override
    text += " " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text.encode() + data)


def mlp_tensors(sizes):
    rnd = random.Random(1)
    t = {}
    for i in range(len(sizes) - 1):
        t[f"{2 * i}.weight"] = ([sizes[i + 1], sizes[i]],
                               [rnd.uniform(-0.05, 0.05) for _ in range(sizes[i] * sizes[i + 1])])
        t[f"{2 * i}.bias"] = ([sizes[i + 1]], [0.0] * sizes[i + 1])
    return t


def write_png(path, width, height, value=0):
    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(
            ">I", zlib.crc32(kind + body) & 0xFFFFFFFF)
    comp = zlib.compressobj(9)
    row = b"\x00" + bytes([value]) * width
    body = b"".join(comp.compress(row) for _ in range(height)) + comp.flush()
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0,
                                                                  0, 0)) +
                chunk(b"IDAT", body) + chunk(b"IEND", b""))


def mnist_copy(probe, name, images_hook=None, labels_hook=None, gz=False):
    """A copy of the MNIST folder with the training images or labels replaced by hook(bytes)."""
    d = probe.path(name)
    os.makedirs(d)
    for f in ["train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
              "t10k-labels-idx1-ubyte"]:
        src = os.path.join(probe.data, f)
        if not os.path.exists(src):
            src += ".gz"
        with (gzip.open if src.endswith(".gz") else open)(src, "rb") as s:
            raw = s.read()
        hook = images_hook if f == "train-images-idx3-ubyte" else (
            labels_hook if f == "train-labels-idx1-ubyte" else None)
        if hook:
            raw = hook(raw)
        if gz and hook:
            with gzip.open(os.path.join(d, f + ".gz"), "wb") as o:
                o.write(raw)
        else:
            with open(os.path.join(d, f), "wb") as o:
                o.write(raw)
    return d
