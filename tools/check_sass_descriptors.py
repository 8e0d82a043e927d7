"""Scans the built extension's sm_90 SASS for memory instructions with an odd descriptor
register (desc[UR1], desc[UR5], ...), and exits 1 if there are any.

Why: ptxas 13.0 folded a uniform shared-memory offset into cache-hinted cp.async copies
and encoded them as `LDGSTS [R37+UR0], desc[UR1][R18.64]`; the descriptor is a 64-bit
uniform register pair, and that instruction faulted as an illegal instruction on the
H200 (an H100 reported Xid 13, "Illegal Instruction Parameter"). See
csrc/cuda/l2_hints.cuh. Needs cuobjdump (the CUDA toolkit); run it after each build
that touches the hinted copies:  python3 tools/check_sass_descriptors.py
(or pass libraries, or saved `cuobjdump -sass` listings ending in .sass).
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys

ODD_DESC = re.compile(r"desc\[UR\d*[13579]\]")
FUNCTION = re.compile(r"^\s*Function : (\S+)")


def demangle(name):
    filt = shutil.which("c++filt")
    if filt is None:
        return name
    return subprocess.run([filt, name], capture_output=True, text=True).stdout.strip()


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("libraries", nargs="*",
                    default=glob.glob(os.path.join(root, "torch_batchchol", "*.so")))
    args = ap.parse_args()
    if not args.libraries:
        sys.exit("no built extension (torch_batchchol/*.so) found")
    if shutil.which("cuobjdump") is None and not all(x.endswith(".sass") for x in args.libraries):
        sys.exit("cuobjdump not found (it comes with the CUDA toolkit)")
    bad, scanned, function = {}, 0, "?"
    for lib in args.libraries:
        if lib.endswith(".sass"):  # a saved listing (cuobjdump -sass output)
            with open(lib) as f:
                sass = f.read()
        else:
            sass = subprocess.run(["cuobjdump", "-sass", lib], capture_output=True, text=True,
                                  check=True).stdout
        for line in sass.splitlines():
            m = FUNCTION.match(line)
            if m:
                function = m.group(1)
                continue
            if "desc[" in line:
                scanned += 1
                if ODD_DESC.search(line):
                    bad.setdefault(function, []).append(line.split(";")[0].strip())
    print(f"{scanned} instructions with a memory descriptor scanned, "
          f"{sum(map(len, bad.values()))} with an odd descriptor register")
    for function, lines in bad.items():
        print(f"  {demangle(function)[:160]}: {len(lines)}, e.g. {lines[0]}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
