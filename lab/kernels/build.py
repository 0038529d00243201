"""Building the variants: torch.utils.cpp_extension + ninja, keyed so a stale build cannot load.

Each variant is built as a plain shared library (no torch headers, about 10 s a file) in
`build/kernels/<name>-<key>/`, where the key hashes the variant's source, every header it
includes (recursively), the compiler flags, the target architecture and the toolchain versions.
Editing any of them gives a new key and so a new build; deleting `build/` always works. The
library reports the key it was built under (`fa_build_key`), which `BuildResult.load` checks.

The ptxas resource report (registers, spills, stack) is captured from the real build and kept
next to it as `build.json`, so later runs and the report read it without recompiling.

Command line (used by `build_all` to build variants in parallel subprocesses):
    python -m lab.kernels.build [--variants a,b] [--arch 9.0]
"""

from __future__ import annotations

import argparse
import ctypes
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path

from lab.cli import OneLineParser
from lab.kernels.attention import KernelAttention, inputs_mismatch, library_inputs
from lab.kernels.ptxas import compile_errors, parse_ptxas
from lab.kernels.manifest import DECODE, KERNELS_DIR, REPO, Variant, get, manifest, names

INCLUDE_DIR = KERNELS_DIR / "include"
BUILD_ROOT = REPO / "build" / "kernels"

# Flags of every variant build. -lineinfo keeps source correlation for Nsight Compute; never -G.
NVCC_FLAGS = ["-O3", "-lineinfo", "-std=c++17", "-Xptxas=-v"]
# What torch.utils.cpp_extension adds to every nvcc call (its COMMON_NVCC_FLAGS); the plain-nvcc
# compile check uses them too, so it fails wherever the real build would.
TORCH_NVCC_FLAGS = [
    "-D__CUDA_NO_HALF_OPERATORS__",
    "-D__CUDA_NO_HALF_CONVERSIONS__",
    "-D__CUDA_NO_BFLOAT16_CONVERSIONS__",
    "-D__CUDA_NO_HALF2_OPERATORS__",
    "--expt-relaxed-constexpr",
]

_INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.MULTILINE)


def cuda_home() -> str | None:
    """CUDA_HOME if set, else /usr/local/cuda, else the prefix of the nvcc on PATH.

    /usr/local/cuda comes before PATH because some machines put a wrapper script in
    /usr/local/bin, which would make the prefix /usr/local (no libcudart there).
    """
    if os.environ.get("CUDA_HOME"):
        return os.environ["CUDA_HOME"]
    if Path("/usr/local/cuda/bin/nvcc").exists():
        return "/usr/local/cuda"
    nvcc = shutil.which("nvcc")
    return str(Path(nvcc).resolve().parent.parent) if nvcc else None


def nvcc_path() -> str:
    home = cuda_home()
    nvcc = Path(home, "bin", "nvcc") if home else None
    if not nvcc or not nvcc.exists():
        raise FileNotFoundError("nvcc not found: put it on PATH or set CUDA_HOME")
    return str(nvcc)


@cache
def nvcc_version() -> str:
    out = subprocess.run([nvcc_path(), "--version"], capture_output=True, text=True, check=True).stdout
    return out.strip().splitlines()[-1]


def compile_once(path: Path, command, label: str) -> Path:
    """The library at `path` (keyed by its callers on what it is built from), built there once by
    `command(out)` (an argv that writes `out`) where it is missing: written beside it and renamed into
    place, so that builders running together never see half a file. RuntimeError naming the compiler
    and `label` (the source), with the compiler's output, where it fails."""
    if path.is_file():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    argv = command(tmp)
    proc = subprocess.run(argv, capture_output=True, text=True)
    if proc.returncode != 0:
        tmp.unlink(missing_ok=True)
        raise RuntimeError(f"{Path(argv[0]).name} could not build {label}:\n{proc.stdout}{proc.stderr}")
    tmp.replace(path)
    return path


def included_headers(source: Path) -> list[Path]:
    """Project headers `source` includes, directly or not ("..." includes under kernels/include)."""
    seen: dict[Path, None] = {}
    stack = [source]
    while stack:
        text = stack.pop().read_text()
        for rel in _INCLUDE_RE.findall(text):
            path = (INCLUDE_DIR / rel).resolve()
            if path.is_file() and path not in seen:
                seen[path] = None
                stack.append(path)
    return sorted(seen)


def device_arch() -> str:
    """Compute capability of the current GPU as TORCH_CUDA_ARCH_LIST wants it, e.g. '9.0'."""
    import torch

    if not torch.cuda.is_available():
        raise RuntimeError("no CUDA GPU visible: give the architecture explicitly (arch='9.0')")
    major, minor = torch.cuda.get_device_capability()
    return f"{major}.{minor}"


def unsupported_reason(variant: Variant, arch: str) -> str:
    """Why an architecture-specific variant (manifest arch 'sm_90a') cannot be built for `arch`
    ('9.0' style); '' when it can. Portable variants build everywhere."""
    if variant.arch.startswith("sm_") and variant.arch.endswith("a"):
        needed = variant.arch[len("sm_"):-1]
        have = arch.replace(".", "").removesuffix("a")
        if have != needed:
            return f"not built: {variant.name} needs {variant.arch} (arch-specific), this GPU is sm_{have}"
    return ""


def variant_arch(variant: Variant, arch: str) -> str:
    """An architecture-specific variant (manifest arch 'sm_90a') builds for the 'a' target."""
    if variant.arch.startswith("sm_") and variant.arch.endswith("a"):
        return arch if arch.endswith("a") else arch + "a"
    return arch


# --- configurations: a variant built with preprocessor defines ------------------------------
#
# A knock-out (a switch turned off) or a tuning trial (other tile constants) is the same source (the step's twin
# where it has one) compiled with -DNAME=VALUE, named the variant's name plus a label ("<end>~no_ping_pong_d128",
# "<end>@bc64=64,st64=4"; <end> the sm_90a branch's last step), its build keyed by the defines too.

_DEFINE_NAME = re.compile(r"^FA_[A-Z0-9_]+$")


def define_flags(defines: dict | None) -> list[str]:
    """-DNAME=VALUE flags in a stable order; names must be FA_* macros, values ints or plain tokens."""
    flags = []
    for name, value in sorted((defines or {}).items()):
        if not _DEFINE_NAME.match(name):
            raise ValueError(f"define {name!r}: configuration macros are named FA_<UPPER_CASE>")
        if not re.fullmatch(r"-?[A-Za-z0-9_]+", str(value)):
            raise ValueError(f"define {name}={value!r}: values are integers or plain identifiers")
        flags.append(f"-D{name}={value}")
    return flags


def unused_defines(variant: Variant, defines: dict | None) -> str:
    """Why a configuration's macros would change nothing ("" where none): names that neither the source it
    compiles (Variant.source: the step's twin where it has one) nor a header of it reads."""
    source = variant.source(defines) if defines else None
    text = "\n".join(p.read_text() for p in [source, *included_headers(source)]) if source else ""
    missing = sorted(n for n in defines or {} if not re.search(rf"\b{re.escape(n)}\b", text))
    return (f"defines {', '.join(missing)} appear nowhere in {source.relative_to(KERNELS_DIR)} or its headers (a "
            "configuration builds the step's twin where it has one): they would change nothing" if missing else "")


def build_key(variant: Variant, arch: str, defines: dict | None = None) -> str:
    """Hash of everything that determines the binary."""
    import torch

    h = hashlib.sha256()
    source = variant.source(defines)
    for path in [source, *included_headers(source)]:
        h.update(str(path.relative_to(KERNELS_DIR)).encode())
        h.update(path.read_bytes())
    for item in [*NVCC_FLAGS, *TORCH_NVCC_FLAGS, arch, nvcc_version(), torch.__version__, *define_flags(defines)]:
        h.update(item.encode())
    return h.hexdigest()


def source_hash(variant: Variant, defines: dict | None = None, twin: bool | None = None) -> str:
    """Hash of the source a build compiles (Variant.source) and its headers alone (what a run
    records per implementation)."""
    h = hashlib.sha256()
    source = variant.source(defines, twin)
    for path in [source, *included_headers(source)]:
        h.update(path.read_bytes())
    return h.hexdigest()


def source_files(variant: Variant, defines: dict | None = None, twin: bool | None = None) -> dict[str, str]:
    """The files source_hash reads, each with its own sha256 ({path under kernels/: hash}): what a
    run records so that a later tree can say which of them changed."""
    source = variant.source(defines, twin)
    return {str(path.relative_to(KERNELS_DIR)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in [source, *included_headers(source)]}


# --- the build -----------------------------------------------------------------------------


@dataclass
class BuildResult:
    name: str
    ok: bool
    key: str = ""
    source_hash: str = ""
    source_files: dict = field(default_factory=dict)  # per file (source_files); {} in records before it
    arch: str = ""
    library: str = ""
    cached: bool = False
    seconds: float = 0.0
    ptxas: list[dict] = field(default_factory=list)
    launch: dict = field(default_factory=dict)  # per head dim: threads, rows per block, dynamic smem
    defines: dict = field(default_factory=dict)  # a configuration's -D macros ({} for the variant as written)
    # The manifest step it is built from (a knock-out's or tuning trial's kernel), and the inputs its
    # library takes (lab.kernels.attention.library_inputs): what build.json says about each step's
    # dtypes and K/V heads. Records written before issue 22 lack them: "" and [] (fp16, H_kv = H).
    variant: str = ""
    dtypes: list = field(default_factory=list)
    kv_heads: str = ""
    log: str = ""  # compiler output (errors when ok is False)

    def load(self):
        """ctypes-load the library, check it is the build this result describes and takes the
        inputs its manifest step declares (dtypes, kv_heads), wrap it."""
        if not self.ok:
            raise RuntimeError(f"variant {self.name!r} did not build:\n{self.log}")
        lib = ctypes.CDLL(self.library)
        lib.fa_build_key.restype = ctypes.c_char_p
        loaded_key = lib.fa_build_key().decode()
        if loaded_key != "k" + self.key:
            raise RuntimeError(f"stale library {self.library}: built as {loaded_key}, expected k{self.key}")
        if self.step and get(self.step).problem == DECODE:
            from lab.kernels.decode_attention import DecodeAttention

            return DecodeAttention(self.name, lib, self.key, build_info=self.summary())
        return KernelAttention(self.name, lib, self.key, build_info=self.summary(), declared=self.declared())

    @property
    def step(self) -> str:
        """The manifest step this build is of: `variant`, or for records without it the step its
        name starts with (`<step>~no_<switch>`, `<step>@<config>`, `<step>+tuned`); "" if none."""
        if self.variant:
            return self.variant
        base = re.split(r"[~@+]", self.name, maxsplit=1)[0]
        return base if base in names(problem=None) else ""

    def declared(self) -> tuple | None:
        """The manifest's (dtypes, kv_heads) for this build's step, or None where it names none."""
        if not self.step:
            return None
        v = get(self.step)
        return tuple(v.dtypes), v.kv_heads

    def takes(self) -> tuple[tuple[str, ...], str]:
        """(dtypes, kv_heads) the build takes: its library's, as recorded; the manifest's for records
        written before they were recorded (those steps all took fp16 with H_kv = H)."""
        if self.dtypes:
            return tuple(self.dtypes), self.kv_heads or "same"
        return self.declared() or (("fp16",), "same")

    def not_taken(self, shape) -> str:
        """Why this build cannot take `shape`'s element type or K/V heads (lab.kernels.shape.Shape); ''."""
        from lab.kernels.shape import not_taken

        dtypes, kv_heads = self.takes()
        return not_taken(f"variant {self.name!r}", dtypes, kv_heads, shape.dtype, shape.H, shape.H_kv)

    def summary(self) -> dict:
        """What a run records about this build (no compiler log)."""
        d = asdict(self)
        d.pop("log")
        return d


def _build_dir(impl: str, key: str) -> Path:
    return BUILD_ROOT / f"{re.sub(r'[^A-Za-z0-9_.~=-]', '_', impl)}-{key[:16]}"


def launch_config(library: str) -> dict:
    """Threads, query rows and dynamic shared memory per block, per head dim (host calls only)."""
    lib = ctypes.CDLL(library)
    out = {}
    for d in (64, 128):
        out[str(d)] = {
            "threads": lib.fa_threads(d),
            "rows_per_block": lib.fa_tile_rows(d),
            "dynamic_smem": lib.fa_smem_bytes(d),
        }
    return out


def _record_inputs(result: BuildResult, variant: Variant) -> None:
    """The inputs the library takes (fa_dtypes, fa_grouped_kv; host calls only) into `result`; where
    they contradict each other or the manifest's dtypes and kv_heads, the build is failed with the
    error naming both (one failing variant never takes a run down; loading it would raise the same)."""
    try:
        takes = library_inputs(ctypes.CDLL(result.library))
    except (OSError, RuntimeError) as exc:
        result.ok, result.log = False, f"variant {result.name!r}: {exc}"
        return
    result.dtypes, result.kv_heads = list(takes[0]), takes[1]
    if why := inputs_mismatch(result.name, takes, (variant.dtypes, variant.kv_heads)):
        result.ok, result.log = False, why


def build_variant(variant: Variant, arch: str | None = None, force: bool = False, defines: dict | None = None,
                  impl: str | None = None) -> BuildResult:
    """Build one variant (or reuse its cached build) in a subprocess; never raises on a compile error.

    `defines` builds a configuration of it (a knock-out, a tuning trial) named `impl`."""
    arch = arch or device_arch()
    impl = impl or variant.name
    defines = dict(defines or {})
    if reason := unsupported_reason(variant, arch) or unused_defines(variant, defines):
        return BuildResult(name=impl, ok=False, arch=arch, defines=defines, log=reason)
    arch = variant_arch(variant, arch)
    key = build_key(variant, arch, defines)
    bdir = _build_dir(impl, key)
    record = bdir / "build.json"
    if record.exists() and not force:
        result = BuildResult(**json.loads(record.read_text()))
        if Path(result.library).exists():
            result.cached = True
            result.seconds = 0.0
            if not result.source_files:  # cached before builds recorded them: same key, same files
                result.source_files = source_files(variant, defines)
            if not result.variant or not result.dtypes:  # cached before builds recorded their inputs
                result.variant = variant.name
                _record_inputs(result, variant)
            return result
    if force and bdir.exists():
        shutil.rmtree(bdir)
    bdir.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    # ninja is found on PATH: make sure the running interpreter's bin (a venv's) is on it.
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    env = {**os.environ, "TORCH_CUDA_ARCH_LIST": arch, "MAX_JOBS": "1", "PATH": path}
    if cuda_home():
        env["CUDA_HOME"] = cuda_home()
    proc = subprocess.run(
        [sys.executable, "-m", "lab.kernels.build", "--one", variant.name, "--key", key, "--dir", str(bdir),
         *(f"--define={flag[2:]}" for flag in define_flags(defines))],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
    )
    seconds = time.perf_counter() - t0
    log = proc.stdout + proc.stderr
    (bdir / "build.log").write_text(log)
    library = proc.stdout.strip().splitlines()[-1] if proc.returncode == 0 and proc.stdout.strip() else ""
    result = BuildResult(
        name=impl,
        ok=proc.returncode == 0 and Path(library).is_file(),
        key=key,
        source_hash=source_hash(variant, defines),
        source_files=source_files(variant, defines),
        arch=arch,
        library=library,
        seconds=round(seconds, 2),
        ptxas=parse_ptxas(log),
        defines=defines,
        variant=variant.name,
    )
    if not result.ok:
        result.log = compile_errors(log)
        return result
    result.launch = launch_config(library)
    _record_inputs(result, variant)
    if not result.ok:  # the library and the manifest disagree on its inputs: recorded, not cached
        return result
    record.write_text(json.dumps(asdict(result), indent=1))  # written last: marks the build complete
    return result


def _build_one_in_this_process(name: str, key: str, bdir: Path, define_args: list[str]) -> None:
    """Child side of build_variant: run cpp_extension with its ninja output on our stdout."""
    from torch.utils import cpp_extension

    variant = get(name)
    lib_path = cpp_extension.load(
        name=f"fa_{variant.name}_{key[:16]}",
        sources=[str(variant.source(twin=bool(define_args) and bool(variant.twin)))],  # Variant.source's choice
        extra_cuda_cflags=[*NVCC_FLAGS, f"-DFA_BUILD_KEY_TOKEN=k{key}", *(f"-D{d}" for d in define_args)],
        extra_include_paths=[str(INCLUDE_DIR)],
        build_directory=str(bdir),
        is_python_module=False,
        verbose=True,
    )
    sys.stdout.flush()
    print(lib_path, flush=True)


def build_all(names: list[str] | None = None, arch: str | None = None, force: bool = False,
              jobs: int | None = None, progress=print,
              configs: dict[str, tuple[str, dict]] | None = None, tick=None) -> dict[str, BuildResult]:
    """Build variants in parallel; a failing variant is reported and the others still build.

    `configs` adds configurations: implementation name -> (variant name, defines). `tick(impl)` is
    called as each one is done (lab.progress.Counter.tick)."""
    jobs_list = [(n, get(n), {}) for n in (names if names is not None else [v.name for v in manifest()])]
    jobs_list += [(impl, get(variant), dict(defines)) for impl, (variant, defines) in (configs or {}).items()]
    arch = arch or device_arch()
    jobs = jobs or max(1, min(len(jobs_list), os.cpu_count() or 1))

    def one(job) -> BuildResult:
        impl, v, defines = job
        r = build_variant(v, arch=arch, force=force, defines=defines, impl=impl)
        status = "cached" if r.cached else (f"built in {r.seconds:.1f} s" if r.ok else "FAILED")
        progress(f"  build {impl:<18} {status}")
        if tick is not None:
            tick(impl)
        return r

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        results = list(pool.map(one, jobs_list))
    return {r.name: r for r in results}


# --- compile check without torch or a GPU (CI) ---------------------------------------------


def compile_check(variant: Variant, arch: str = "sm_90", out_dir: Path | None = None,
                  defines: dict | None = None, twin: bool | None = None) -> tuple[bool, str, list[dict]]:
    """Compile the variant's device code alone with plain nvcc (-cubin), with the real build's
    flags (and a configuration's defines, from its twin: Variant.source); return (ok, compiler
    output, ptxas records)."""
    arch = variant_arch(variant, arch)  # the arch-specific target (sm_90a), as the real build uses
    source = variant.source(defines, twin)
    tag = "".join(f"-{k}={v}" for k, v in sorted((defines or {}).items())) + ("-twin" if source != variant.path else "")
    if len(tag) > 160:  # a file name holds 255 bytes: many defines go by their hash
        tag = "-" + hashlib.sha256(tag.encode()).hexdigest()[:16]
    with tempfile.TemporaryDirectory() as tmp:
        cubin = Path(out_dir or tmp) / f"{variant.name}{tag}.{arch}.cubin"
        cmd = [nvcc_path(), "-cubin", f"-arch={arch}", *NVCC_FLAGS, *TORCH_NVCC_FLAGS, *define_flags(defines),
               f"-I{INCLUDE_DIR}", "-o", str(cubin), str(source)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
    log = proc.stdout + proc.stderr
    return proc.returncode == 0, log, parse_ptxas(log)


def compile_library(variant: Variant, archs: list[str], library: Path, one_ptx: bool = False,
                    host_opt: str = "-O3") -> tuple[bool, str, list[dict]]:
    """Compile the variant into a shared library at `library` with plain nvcc (no torch, no GPU) and the
    real build's device flags, its device code for every arch of `archs` (the arch-specific target for
    an sm_90a step): (ok, compiler output, ptxas records of every arch). One compiler run where a cubin
    an arch and a library apart took several: the host side is compiled once.

    Each arch gets its own compute target, as a build on that GPU compiles it; with `one_ptx`, the
    front end runs once, for the lowest arch's compute target, and ptxas makes each arch's code from
    that PTX: the same program where the source has no branch between those archs (the CPU tests check
    that premise for the portable steps). `host_opt`: nvcc's -O, which sets the host compiler's level
    only (the device code, and so ptxas's report, is the same at any)."""
    targets = [variant_arch(variant, a) for a in archs]
    if one_ptx:
        low = min(targets, key=lambda t: int(re.sub(r"\D", "", t)))
        gencode = [f"-gencode=arch=compute_{low.removeprefix('sm_')},code=[{','.join(targets)}]"]
    else:
        gencode = [f"-gencode=arch=compute_{t.removeprefix('sm_')},code={t}" for t in targets]
    flags = [host_opt if f == "-O3" else f for f in NVCC_FLAGS]
    cmd = [nvcc_path(), "-shared", "-Xcompiler", "-fPIC", *gencode, *flags, *TORCH_NVCC_FLAGS,
           f"-I{INCLUDE_DIR}", "-DFA_BUILD_KEY_TOKEN=kabc123", "-o", str(library), str(variant.path)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    log = proc.stdout + proc.stderr
    return proc.returncode == 0, log, parse_ptxas(log)


def main(argv: list[str] | None = None) -> int:
    ap = OneLineParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--variants", help="comma-separated names (default: all)")
    ap.add_argument("--arch", help="TORCH_CUDA_ARCH_LIST style, e.g. 9.0 (default: the current GPU)")
    ap.add_argument("--force", action="store_true", help="rebuild even when a cached build matches")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--key", help=argparse.SUPPRESS)
    ap.add_argument("--dir", help=argparse.SUPPRESS)
    ap.add_argument("--define", action="append", default=[], help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:
        _build_one_in_this_process(args.one, args.key, Path(args.dir), args.define)
        return 0
    results = build_all(args.variants.split(",") if args.variants else None, arch=args.arch, force=args.force)
    failed = [r for r in results.values() if not r.ok]
    for r in failed:
        print(f"\n{r.name} failed to compile:\n{r.log}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
