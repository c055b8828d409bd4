#!/usr/bin/env python3
"""Seed corpora for the fuzz targets from the repository's own files:
the presets and test scenarios, the golden networks, single-case golden
files, and small .npy commands. Writes fuzz/corpus/<target>/."""
import json
import pathlib
import re
import struct

root = pathlib.Path(__file__).resolve().parent.parent
corpus = root / "fuzz" / "corpus"


def put(target, name, data):
    d = corpus / target
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_bytes(data if isinstance(data, bytes) else data.encode())


# Scenarios: the presets and every TOML scenario written in the tests.
for p in sorted((root / "presets").glob("*.toml")):
    put("scenario", p.stem, p.read_text())
for p in sorted((root / "tests").glob("*.rs")):
    for i, m in enumerate(re.finditer(r'r#"(num_envs = .*?)"#', p.read_text(), re.S)):
        put("scenario", f"{p.stem}-{i}", m.group(1))

# Networks.
for p in sorted((root / "tests" / "golden" / "learned").glob("*.safetensors")):
    put("safetensors", p.stem, p.read_bytes())

# Golden files, one case each (the first three of every file).
for p in sorted((root / "tests" / "golden").glob("*/*.json")):
    doc = json.loads(p.read_text())
    if "cases" not in doc or "schema" not in doc:
        continue
    # MIMo's cases need the file's header (its actuators and constraints).
    header = {k: v for k, v in doc.items() if k != "cases"} if doc["schema"].startswith("mimo") else {}
    for i, case in enumerate(doc["cases"][:3]):
        one = {**header, "schema": doc["schema"], "cases": [case]}
        put("verify", f"{p.parent.name}-{p.stem}-{i}", json.dumps(one))


# .npy commands of every accepted shape, f4 and f8.
def npy(descr, shape, values):
    dims = "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"
    text = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, dims)
    text += " " * ((64 - (10 + len(text) + 1) % 64) % 64) + "\n"
    fmt = "<%d%s" % (len(values), "f" if descr == "<f4" else "d")
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text.encode() + struct.pack(fmt, *values)


for shape in [(4, 3), (2, 4, 3), (2, 5, 4, 3)]:
    n = 1
    for d in shape:
        n *= d
    for descr in ["<f4", "<f8"]:
        put("npy", f"{descr[1:]}-{'x'.join(map(str, shape))}", npy(descr, shape, [0.1 * i for i in range(n)]))

# Plans: a few byte strings; the structure-aware target reads any bytes.
for i in range(8):
    put("plan", f"seed-{i}", bytes((i * 37 + k * 11) % 256 for k in range(256)))

for t in sorted(corpus.iterdir()):
    print(f"{t.name}: {len(list(t.iterdir()))} seeds")

# A dictionary of the scenario format's keys and enum values.
words = set()
scenario_texts = [p.read_text() for p in (root / "presets").glob("*.toml")]
for p in sorted((root / "tests").glob("*.rs")):
    scenario_texts += re.findall(r'r#"(num_envs = .*?)"#', p.read_text(), re.S)
for text in scenario_texts:
    words.update(re.findall(r"^\s*([a-z_]+)\s*=", text, re.M))
    words.update(re.findall(r'"([a-z_]+)"', text))
(root / "fuzz" / "scenario.dict").write_text(
    "".join(f'"{w}"\n' for w in sorted(words)) + '"[[groups]]"\n"[robot]"\n"[command]"\n"[output]"\n'
)
print(f"scenario.dict: {len(words) + 4} words")
