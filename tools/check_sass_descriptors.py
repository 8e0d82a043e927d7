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
`cuobjdump -sass` listings ending in .sass).
"""
import argparse
import importlib.metadata
import importlib.util
import os
import re
import shutil
import subprocess
import sys

ODD_DESC = re.compile(r"desc\[UR\d*[13579]\]")
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


def sass_of(path):
    if path.endswith(".sass"):  # a saved listing (cuobjdump -sass output)
        with open(path) as f:
            return f.read()
    if shutil.which("cuobjdump") is None:
        sys.exit("cuobjdump not found (it comes with the CUDA toolkit)")
    return subprocess.run(["cuobjdump", "-sass", path], capture_output=True, text=True,
                          check=True).stdout


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
    args = ap.parse_args()
    if args.tool_path:
        print(tool_path())
        return
    bad, scanned = {}, 0
    for lib in args.libraries or [default_library()]:
        arch, function = "?", "?"
        for line in sass_of(lib).splitlines():
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
