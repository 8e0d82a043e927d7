"""Scans a built extension's SASS for memory instructions with an odd descriptor register.

Every architecture that cuobjdump prints is scanned; exit status 1 if any instruction
has an odd descriptor register (desc[UR1], desc[UR5], ...), 2 if nothing was scanned.

Why: ptxas 13.0 folded a uniform shared-memory offset into cache-hinted cp.async copies
and encoded them as `LDGSTS [R37+UR0], desc[UR1][R18.64]`; the descriptor is a 64-bit
uniform register pair, and that instruction faulted as an illegal instruction on the
H200 (most likely also the twenty-ninth round's Xid 13, "Illegal Instruction Parameter",
on an H100). See csrc/cuda/l2_hints.cuh. Needs cuobjdump and nvdisasm (the CUDA
toolkit, or their PyPI wheels: `make sass-check` installs those and runs this scan, as
CI does); run it after each build that touches the hinted copies:
python3 tools/check_sass_descriptors.py
(by default the torch_batchchol._C that Python imports; or pass libraries, or saved
`cuobjdump -sass` listings ending in .sass; --including HEADER narrows a library to the
cubins of the .cu files that include HEADER).
"""
import argparse
import importlib.metadata
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ODD_DESC = re.compile(r"desc\[UR\d*[13579]\]")
INCLUDE = re.compile(r'#include\s+"([^"]+)"')
CUBIN = re.compile(r"ELF file\s+\d+: (\S+\.cubin)")
FUNCTION = re.compile(r"^\s*Function : (\S+)")
ARCH = re.compile(r"arch = (sm_\d+a?)")


def default_library():
    try:
        spec = importlib.util.find_spec("torch_batchchol._C")
    except ModuleNotFoundError:
        spec = None
    if spec is None or spec.origin is None:
        sys.exit("torch_batchchol._C not found: build the extension or pass a library")
    return spec.origin


def demangle(name):
    filt = shutil.which("c++filt")
    if filt is None:
        return name
    return subprocess.run([filt, name], capture_output=True, text=True).stdout.strip()


def units_including(header):
    """Names (no suffix) of the .cu files of csrc/ that include `header`, directly or
    through other headers (their cubins are named after them)."""
    csrc = os.path.join(ROOT, "csrc")
    includes = {}
    for dirpath, _, names in os.walk(csrc):
        for name in names:
            if name.endswith((".cu", ".cuh", ".h", ".cpp")):
                path = os.path.join(dirpath, name)
                with open(path) as f:
                    includes[os.path.relpath(path, csrc)] = INCLUDE.findall(f.read())
    target = os.path.relpath(os.path.abspath(header), csrc)

    def reaches(f, seen):
        if f == target:
            return True
        seen.add(f)
        return any(reaches(i, seen) for i in includes.get(f, []) if i not in seen)

    return {os.path.splitext(os.path.basename(f))[0] for f in includes
            if f.endswith(".cu") and reaches(f, set())}


def cuobjdump(*args, cwd=None):
    if shutil.which("cuobjdump") is None:
        sys.exit("cuobjdump not found (it comes with the CUDA toolkit)")
    return subprocess.run(["cuobjdump", *args], capture_output=True, text=True, check=True,
                          cwd=cwd).stdout


def sass_of(path, units=None):
    """The SASS listing of a library or cubin (units: only the cubins of these units)."""
    if path.endswith(".sass"):  # a saved listing (cuobjdump -sass output)
        with open(path) as f:
            return f.read()
    if units is None:
        return cuobjdump("-sass", path)
    cubins = [m.group(1) for m in CUBIN.finditer(cuobjdump("-lelf", path))
              if m.group(1).split(".")[0] in units]
    with tempfile.TemporaryDirectory() as tmp:
        for name in cubins:
            cuobjdump("-xelf", name, os.path.abspath(path), cwd=tmp)
        return "".join(cuobjdump("-sass", os.path.join(tmp, name)) for name in cubins)


def tool_path():
    """The bin folders of the PyPI wheels of cuobjdump and nvdisasm, for PATH."""
    dirs = []
    wheels = (("nvidia-cuda-cuobjdump", "cuobjdump"), ("nvidia-cuda-nvdisasm", "nvdisasm"))
    for dist, exe in wheels:
        try:
            files = importlib.metadata.files(dist) or []
        except importlib.metadata.PackageNotFoundError:
            continue
        dirs += [str(f.locate().parent) for f in files if f.name == exe]
    return os.pathsep.join(dict.fromkeys(dirs))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("libraries", nargs="*")
    ap.add_argument("--tool-path", action="store_true",
                    help="print the PATH entries of the cuobjdump / nvdisasm wheels and exit")
    ap.add_argument("--including", metavar="HEADER",
                    help="scan only the cubins of the .cu files that include HEADER (e.g. "
                         "csrc/cuda/l2_hints.cuh: where hinted copies can be)")
    args = ap.parse_args()
    if args.tool_path:
        print(tool_path())
        return
    units = units_including(args.including) if args.including else None
    if units is not None:
        print(f"{len(units)} units include {args.including}: {' '.join(sorted(units))}")
    bad, scanned = {}, 0
    for lib in args.libraries or [default_library()]:
        arch, function = "?", "?"
        for line in sass_of(lib, units).splitlines():
            m = ARCH.search(line)
            if m:
                arch = m.group(1)
            m = FUNCTION.match(line)
            if m:
                function = m.group(1)
                continue
            if "desc[" in line:
                scanned += 1
                if ODD_DESC.search(line):
                    bad.setdefault((lib, arch, function), []).append(line.split(";")[0].strip())
    print(f"{scanned} instructions with a memory descriptor scanned, "
          f"{sum(map(len, bad.values()))} with an odd descriptor register")
    for (lib, arch, function), lines in bad.items():
        print(f"  {lib} {arch} {demangle(function)[:160]}: {len(lines)}, e.g. {lines[0]}")
    if scanned == 0:
        print("nothing scanned: no SASS with memory descriptors (a PTX-only build, or a "
              "cuobjdump that does not print them)")
        sys.exit(2)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
