#!/usr/bin/env python3
"""Height-field test data and MuJoCo's compiled grids for them (docs/MJCF.md, "Height fields").

1. Writes the small PNG and binary elevation files of tests/data/mjcf/hfield/ (PNG written
   here with zlib: filter type 0, non-interlaced; the pixel values are listed below):
   * rgb.png: 7 x 5 RGB whose three channels differ (MuJoCo takes the red one);
   * grey16.png: 4 x 3 16-bit grey (MuJoCo takes the high byte);
   * palette.png: 3 x 3 palette image (the red of each palette colour);
   * terrain.bin: MuJoCo's binary format, int32 nrow, ncol, then nrow*ncol float32.
2. For every model of MODELS, writes <model>.hfield.json: MuJoCo's hfield_nrow, hfield_ncol,
   hfield_size and hfield_data (float32 values as numbers) by hfield name, read by
   crates/karakuri-sim/tests/mjcf_hfield.rs.

Usage: python3 scripts/mjcf_hfield_reference.py      Needs: pip install mujoco==4.0.0 numpy
"""
import json
import os
import struct
import zlib

import mujoco
import numpy as np

DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "mjcf", "hfield")
MODELS = ["slope.xml", "files.xml"]


def png(path, width, height, depth, color_type, rows, palette=None):
    """rows: per image row (top first), the raw sample bytes."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    raw = b"".join(b"\0" + r for r in rows)
    out = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, depth, color_type, 0, 0, 0))
    if palette is not None:
        out += chunk(b"PLTE", bytes(palette))
    out += chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")
    with open(path, "wb") as f:
        f.write(out)


def write_files():
    # rgb.png: red = 10 + 7 r + 3 c (a ramp), green and blue unrelated
    w, h = 7, 5
    rows = [bytes(v for c in range(w) for v in (10 + 7 * r + 3 * c + (r * c) % 4, (50 * c) % 256, (90 + 40 * r) % 256))
            for r in range(h)]
    png(os.path.join(DIR, "rgb.png"), w, h, 8, 2, rows)
    # grey16.png: high bytes vary, low bytes must not matter
    vals = [[0x1280, 0x12FF, 0x2001, 0x40FE], [0x3400, 0xFF01, 0x0000, 0x8080], [0x0A0A, 0x5555, 0x7F7F, 0x0101]]
    png(os.path.join(DIR, "grey16.png"), 4, 3, 16, 0, [b"".join(struct.pack(">H", v) for v in r) for r in vals])
    # palette.png: indices into three colours
    png(os.path.join(DIR, "palette.png"), 3, 3, 8, 3, [bytes([0, 1, 2]), bytes([2, 0, 1]), bytes([1, 1, 0])],
        palette=[10, 200, 0, 90, 0, 0, 30, 30, 30])
    # terrain.bin: 3 rows x 4 columns, row 0 at -y
    data = [0.0, 0.5, 1.5, 2.0, -1.0, 0.25, 3.0, 1.0, 0.125, 2.5, -0.5, 0.75]
    with open(os.path.join(DIR, "terrain.bin"), "wb") as f:
        f.write(struct.pack("<ii", 3, 4) + struct.pack("<12f", *data))


def reference(model):
    m = mujoco.MjModel.from_xml_path(os.path.join(DIR, model))
    out = {}
    for i in range(m.nhfield):
        name = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_HFIELD, i)
        nrow, ncol, adr = int(m.hfield_nrow[i]), int(m.hfield_ncol[i]), int(m.hfield_adr[i])
        data = m.hfield_data[adr:adr + nrow * ncol]
        out[name] = {"nrow": nrow, "ncol": ncol, "size": [float(x) for x in m.hfield_size[i]],
                     "data": [float(x) for x in data]}
    path = os.path.join(DIR, model.replace(".xml", ".hfield.json"))
    with open(path, "w") as f:
        json.dump({"source": model, "mujoco": mujoco.__version__, "hfields": out}, f, indent=1)
        f.write("\n")
    print(path, {k: (v["nrow"], v["ncol"]) for k, v in out.items()})


def main():
    write_files()
    for model in MODELS:
        reference(model)


if __name__ == "__main__":
    main()
