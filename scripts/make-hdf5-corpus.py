"""Writes the seed corpus of fuzz_hdf5 (tests/fuzz/corpus/hdf5/): small GADGET-style snapshots in
the layouts the reader meets (both superblock versions, float32 and float64, a MassTable instead
of Masses, chunked and compressed data, a user block, our own /nbody attributes), files it must
refuse (no PartType group, Coordinates without Velocities, a shape that is not N x 3) and
truncated copies. Each seed stays under 16 KiB (scripts/fuzz.sh's allocation limit assumes it).

Usage: python3 scripts/make-hdf5-corpus.py [FOLDER]  (h5py and NumPy: Debian's python3-h5py)
The files are checked in; run this again only to change them.
"""
import os
import sys

import h5py
import numpy as np

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "tests", "fuzz", "corpus", "hdf5")
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(7)
LIMIT = 16 * 1024


def header(f, counts, mass_table=(0, 0, 0, 0, 0, 0), time=0.0):
    h = f.create_group("Header")
    h.attrs["NumPart_ThisFile"] = np.array(counts, dtype=np.int64)
    h.attrs["NumPart_Total"] = np.array(counts, dtype=np.int64)
    h.attrs["NumPart_Total_HighWord"] = np.zeros(6, dtype=np.uint32)
    h.attrs["MassTable"] = np.array(mass_table, dtype=np.float64)
    h.attrs["Time"] = time
    h.attrs["Redshift"] = 0.0
    h.attrs["BoxSize"] = 0.0
    h.attrs["NumFilesPerSnapshot"] = np.int32(1)


def part(f, k, n, dtype=np.float64, masses=True, velocities=True, **options):
    g = f.create_group(f"PartType{k}")
    g.create_dataset("Coordinates", data=rng.standard_normal((n, 3)).astype(dtype), **options)
    if velocities:
        g.create_dataset("Velocities", data=rng.standard_normal((n, 3)).astype(dtype), **options)
    if masses:
        g.create_dataset("Masses", data=(rng.random(n) + 0.5).astype(dtype) / n, **options)
    g.create_dataset("ParticleIDs", data=np.arange(n, dtype=np.uint64))
    return g


def write(name, fill, **file_options):
    path = os.path.join(out, name)
    with h5py.File(path, "w", **file_options) as f:
        fill(f)
    return path


def truncate(source, name, size):
    with open(source, "rb") as f:
        data = f.read(size)
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)


written = []
# Readable: the layouts a GADGET-4, SWIFT or h5py user writes.
written.append(write("masstable-float32.h5", lambda f: (header(f, [0, 5, 0, 0, 0, 0], (0, 0.2, 0, 0, 0, 0)),
                                                        part(f, 1, 5, np.float32, masses=False))))
written.append(write("gas-stars-latest.h5", lambda f: (header(f, [3, 0, 0, 0, 2, 0], time=0.5),
                                                       part(f, 0, 3), part(f, 4, 2)), libver="latest"))
written.append(write("chunked-deflate.h5", lambda f: (header(f, [0, 6, 0, 0, 0, 0]),
                                                      part(f, 1, 6, chunks=True, compression="gzip",
                                                           shuffle=True))))
written.append(write("userblock-512.h5", lambda f: (header(f, [0, 2, 0, 0, 0, 0]), part(f, 1, 2)), userblock_size=512))


def ours(f):
    header(f, [0, 3, 0, 0, 0, 0], time=0.25)
    part(f, 1, 3)
    g = f.create_group("nbody")
    g.attrs["pipeline"] = "cpu32"  # variable-length string
    g.attrs.create("ic", np.bytes_("plummer"))  # fixed-length string
    g.attrs["step"] = np.int64(25)
    g.attrs["dt"] = 0.01
    g.attrs["velocities"] = np.zeros(3)  # not one value: left out


written.append(write("nbody-attributes.h5", ours))
# Refused: not a snapshot, or not one the reader takes.
written.append(write("header-only.h5", lambda f: header(f, [0, 0, 0, 0, 0, 0])))
written.append(write("no-velocities.h5", lambda f: (header(f, [0, 2, 0, 0, 0, 0]), part(f, 1, 2, velocities=False))))


def flat(f):
    header(f, [0, 4, 0, 0, 0, 0])
    g = f.create_group("PartType1")
    g.create_dataset("Coordinates", data=rng.standard_normal(12))
    g.create_dataset("Velocities", data=rng.standard_normal(12))


written.append(write("coordinates-flat.h5", flat))
# Cut short: the superblock alone, and a file cut in its object headers and in its data.
truncate(written[1], "gas-stars-latest-cut-48.h5", 48)
truncate(written[0], "masstable-float32-cut-800.h5", 800)
size = os.path.getsize(written[2])
truncate(written[2], f"chunked-deflate-cut-{size // 2}.h5", size // 2)

for name in sorted(os.listdir(out)):
    size = os.path.getsize(os.path.join(out, name))
    if size > LIMIT:
        sys.exit(f"{name}: {size} bytes, over the corpus's {LIMIT}")
    print(f"{size:7d}  {name}")
