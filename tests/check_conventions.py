#!/usr/bin/env python3
"""Checks the conventions of docs/architecture.md that a machine can read:

  - argument order: a parameter named `out` comes first, or right after the
    context (the leading handles: pointers to gd_*/dl_* objects, `void *ctx`,
    a FILE); the public ABI (plugin/include/gonka_diloco.h) is exempt;
  - lifecycle verbs: an object the library allocates for the caller is made
    by gd_x_new and released by gd_x_free (no *_create(T **out), no *_destroy);
  - the CLI's carry-on value is GD_CLI_CONTINUE, never a bare -1.

Usage: check_conventions.py [ROOT]   (prints each breach; exit 1 if any)
"""
import glob
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
os.chdir(root)

DIRS = ["common", "proofs", "kernels", "trainer", "chain", "plugin", "localnet", "tests", "bench"]
EXEMPT = {"plugin/include/gonka_diloco.h"}
# A function declaration or definition, or a function-pointer type or field.
FUNC = re.compile(r"(\b[a-z_]\w*|\(\s*\*\s*\w+\s*\))\s*\(([^;{()]*(?:\([^()]*\)[^;{()]*)*)\)\s*"
                  r"(?:GD_MUST_CHECK|GD_PRINTF\([^)]*\))?\s*[;{]", re.S)


def sources():
    for d in DIRS:
        for pat in ("**/*.c", "**/*.h", "**/*.inc", "**/*.cu", "**/*.cuh"):
            for f in glob.glob(os.path.join(d, pat), recursive=True):
                if f not in EXEMPT and "/corpus/" not in f:
                    yield f


def strip_comments(s):
    return re.sub(r"/\*.*?\*/|//[^\n]*", lambda m: re.sub(r"[^\n]", " ", m.group(0)), s, flags=re.S)


def split(params):
    out, depth, cur = [], 0, ""
    for ch in params:
        depth += ch in "(["
        depth -= ch in ")]"
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    out.append(cur.strip())
    return out


def name_of(param):
    m = re.search(r"(\w+)\s*(\[[^\]]*\])?$", param)
    return m.group(1) if m else ""


def is_declaration(params):
    """Parameters with types (a declaration), not a call's arguments."""
    if params in (["void"], [""]):
        return False
    return all(re.fullmatch(r"(?:const\s+|struct\s+|unsigned\s+|volatile\s+)*\w+[\s\*]+(?:const\s+)?\w+"
                            r"(?:\s*\[[^\]]*\])?", p) for p in params if p != "...")


PRIMITIVE = re.compile(r"(char|int|short|long|float|double|size_t|ssize_t|bool|void|uint8_t|uint16_t|uint32_t|uint64_t|int8_t|int16_t|int32_t|int64_t|gd_buf|unsigned|signed)")


def is_context(param):
    """A leading handle: a pointer to an object (not to bytes, numbers or a
    gd_buf, which are data), or a callback's `void *ctx`."""
    p = re.sub(r"\s+", " ", param)
    if re.fullmatch(r"(const )?void ?\* ?(ctx|arg|user)", p):
        return True
    if re.fullmatch(r"(cudaStream_t|cublasHandle_t|cublasLtHandle_t|ncclComm_t) \w+", p):
        return True  # CUDA's handles are pointers behind a typedef
    m = re.fullmatch(r"(const )?(?:struct )?(\w+) ?\*+ ?(\w+)", p)
    return bool(m) and m.group(3) not in ("out", "dst", "buf") and not PRIMITIVE.fullmatch(m.group(2))


breaches = []
for f in sorted(sources()):
    text = open(f, encoding="utf-8", errors="replace").read()
    code = strip_comments(text)
    for m in FUNC.finditer(code):
        name, params = m.group(1), split(m.group(2))
        if name in ("if", "while", "for", "switch", "return", "sizeof") or name.startswith("gonka_diloco"):
            continue
        line = code.count("\n", 0, m.start()) + 1
        names = [name_of(p) for p in params]
        if not is_declaration(params):
            continue
        if "out" in names:
            i = names.index("out")
            ctx = 0
            while ctx < i and is_context(params[ctx]):
                ctx += 1
            if i > ctx:
                breaches.append(f"{f}:{line}: {name}: `out` after the inputs "
                                f"({', '.join(names)}); the order is context, outputs, inputs")
        if re.fullmatch(r"gd_\w+_destroy", name):
            breaches.append(f"{f}:{line}: {name}: objects are released by gd_x_free")
        if re.fullmatch(r"gd_\w+_create", name) and params and re.search(r"\*\s*\*\s*out$", params[0]):
            breaches.append(f"{f}:{line}: {name}: an object made for the caller is gd_x_new")
    if f.startswith(("plugin/cli/", "plugin/demo/")):
        for n, l in enumerate(code.split("\n"), 1):
            if re.search(r"return -1;|\)\) [<>]=? 0\b|\brc [<>]=? 0\b", l):
                breaches.append(f"{f}:{n}: the CLI's carry-on value is GD_CLI_CONTINUE")

for b in breaches:
    print("convention:", b)
print("conventions ok" if not breaches else f"{len(breaches)} breach(es)")
sys.exit(1 if breaches else 0)
