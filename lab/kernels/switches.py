"""Knock-out switches: the manifest's `[[switch]]` and `[[structural]]` tables, validated.

A switch names one optimization that the last step of a branch still holds and the FA_* macro
values that take it out. A knock-out configuration is that kernel built with the switch off,
and with every switch it depends on off too; its impl name is `<kernel>~no_<switch>`.

`validate` checks the declarations against the manifest and the kernel sources (no compiler);
`sass_differences` compiles each "off" build and the default with plain nvcc and compares their
SASS (cuobjdump), kernel by kernel, so a switch that changes nothing is an error, not a zero in the
report. A `host_only` switch changes the launch rule, not the kernels (which tile or schedule a call
takes): its "off" build must compile to the same kernels, and the host tests check its rule.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from lab.kernels import manifest, variants
from lab.kernels.ptxas import head_dim

APPLIES = ("all", "D=64", "D=128", "causal")
_MACRO = re.compile(r"^FA_[A-Z0-9_]+$")
KNOCKOUT_SEP = "~no_"


def applies(applies_to: str, D: int, causal: bool) -> bool:
    """Whether a switch declared `applies_to` ("all", "D=64", "D=128", "causal") changes the kernel
    at head dim D, causal or not."""
    return applies_to == "all" or applies_to == f"D={D}" or (applies_to == "causal" and bool(causal))


@dataclass(frozen=True)
class Switch:
    name: str
    introduced_by: str
    kernel: str
    defines: dict
    off: str
    depends_on: tuple[str, ...] = ()
    applies_to: str = "all"
    host_only: bool = False  # the switch changes which kernel a call launches, not any kernel's code

    @property
    def impl(self) -> str:
        return knockout_impl(self.kernel, self.name)

    def applies(self, D: int, causal: bool) -> bool:
        return applies(self.applies_to, D, causal)


@dataclass(frozen=True)
class Structural:
    kernel: str
    ideas: tuple[str, ...]
    reason: str


@dataclass(frozen=True)
class KnockOut:
    """One knock-out configuration: the kernel with `switch` and its dependencies off."""

    impl: str
    kernel: str
    switch: str
    off: tuple[str, ...]  # every switch turned off: the switch itself, then its dependencies
    defines: dict = field(hash=False)
    applies_to: str = "all"


def knockout_impl(kernel: str, switch: str) -> str:
    return f"{kernel}{KNOCKOUT_SEP}{switch}"


def parse_impl(impl: str) -> tuple[str, str] | None:
    """(kernel, switch) of a knock-out impl name, or None for any other impl."""
    if KNOCKOUT_SEP not in impl:
        return None
    kernel, switch = impl.split(KNOCKOUT_SEP, 1)
    return kernel, switch


def load(text: str | None = None) -> tuple[list[Switch], list[Structural]]:
    """Switches and structural ideas from the manifest (or TOML `text`), validated."""
    raw = manifest.tables(text)
    known = {"name", "introduced_by", "kernel", "defines", "off", "depends_on", "applies_to", "host_only"}
    switches = []
    for entry in raw.get("switch", []):
        if unknown := set(entry) - known:
            raise ValueError(f"switch {entry.get('name')!r}: unknown field(s) {sorted(unknown)}")
        missing = {"name", "introduced_by", "defines", "off"} - set(entry)
        if missing:
            raise ValueError(f"switch {entry.get('name')!r}: missing field(s) {sorted(missing)}")
        switches.append(Switch(**{**entry, "kernel": entry.get("kernel") or branch_end_of(entry["introduced_by"]),
                                  "defines": dict(entry["defines"]), "depends_on": tuple(entry.get("depends_on", ()))}))
    structural = [Structural(kernel=e["kernel"], ideas=tuple(e["ideas"]), reason=e["reason"])
                  for e in raw.get("structural", [])]
    validate(switches, structural)
    return switches, structural


def branch_end_of(step: str) -> str:
    """The last step of `step`'s branch: the kernel a switch belongs to unless its table names another, so that a
    new branch end takes its branch's switches without a line of the manifest naming it."""
    if step not in manifest.names(problem=None):
        raise ValueError(f"introduced_by {step!r} is not a variant of the manifest")
    branch = manifest.branch(step)
    return next(n for n in manifest.branch_ends(manifest.names(problem=None)) if manifest.branch(n) == branch)


def validate(switches: list[Switch], structural: list[Structural] = ()) -> None:
    """Raise ValueError naming the first broken rule (no compiler needed)."""
    from lab.kernels import build

    names = {v.name for v in variants.manifest()}
    by_name = {}
    for s in switches:
        if s.name in by_name:
            raise ValueError(f"switch {s.name!r} is declared twice")
        by_name[s.name] = s
        if s.kernel not in names:
            raise ValueError(f"switch {s.name!r}: unknown kernel {s.kernel!r} (not a variant of the manifest)")
        if s.introduced_by not in names:
            raise ValueError(f"switch {s.name!r}: introduced_by {s.introduced_by!r} is not a variant")
        if s.applies_to not in APPLIES:
            raise ValueError(f"switch {s.name!r}: applies_to must be one of {APPLIES}, not {s.applies_to!r}")
        if not isinstance(s.host_only, bool):
            raise ValueError(f"switch {s.name!r}: host_only must be true or false, not {s.host_only!r}")
        if not s.defines:
            raise ValueError(f"switch {s.name!r}: defines is empty")
        kernel = variants.get(s.kernel)
        for macro, value in s.defines.items():
            if not _MACRO.match(macro):
                raise ValueError(f"switch {s.name!r}: macro {macro!r} is not named FA_<UPPER_CASE>")
            if build.unused_defines(kernel, {macro: value}):  # read by the twin or its headers (tile macros)
                raise ValueError(f"switch {s.name!r}: macro {macro} does not appear in "
                                 f"{kernel.source(s.defines).relative_to(variants.REPO)} or its headers")
    for s in switches:
        for dep in s.depends_on:
            if dep not in by_name:
                raise ValueError(f"switch {s.name!r}: depends on unknown switch {dep!r}")
            if by_name[dep].kernel != s.kernel:
                raise ValueError(f"switch {s.name!r} (kernel {s.kernel}) depends on {dep!r} of another kernel "
                                 f"({by_name[dep].kernel})")
        _closure(s.name, by_name)  # raises on a cycle
    knocked_out = {s.kernel for s in switches}
    for st in structural:
        if st.kernel not in names:
            raise ValueError(f"structural ideas {st.ideas}: unknown kernel {st.kernel!r}")
        if switches and st.kernel not in knocked_out:  # e.g. a former branch end: the report would never show it
            raise ValueError(f"structural ideas {st.ideas}: kernel {st.kernel!r} has no switch (the switches' kernels: "
                             f"{', '.join(sorted(knocked_out))}); a new branch end takes its branch's structural ideas")
        if unknown := [i for i in st.ideas if i not in names]:
            raise ValueError(f"structural ideas of {st.kernel}: {unknown} are not variants")


def _closure(name: str, by_name: dict, path: tuple = ()) -> list[str]:
    """The switch and everything it depends on, transitively, in order; raises on a cycle."""
    if name in path:
        raise ValueError(f"switch dependency cycle: {' -> '.join([*path, name])}")
    out = [name]
    for dep in by_name[name].depends_on:
        out += [d for d in _closure(dep, by_name, (*path, name)) if d not in out]
    return out


def knockouts(kernel: str, switches: list[Switch] | None = None) -> list[KnockOut]:
    """The knock-out configurations of `kernel`, one per switch, dependencies off too."""
    switches = load()[0] if switches is None else switches
    by_name = {s.name: s for s in switches}
    return [configuration(kernel, [s.name], by_name, impl=s.impl) for s in switches if s.kernel == kernel]


def configuration(kernel: str, off: list[str], by_name: dict, impl: str | None = None) -> KnockOut:
    """`kernel` with the switches `off` (and their dependencies) off."""
    closed: list[str] = []
    for name in off:
        closed += [d for d in _closure(name, by_name) if d not in closed]
    defines = {}
    for name in closed:
        defines.update(by_name[name].defines)
    applies = {by_name[n].applies_to for n in off}
    applies_to = "all" if "all" in applies or len(applies) > 1 else applies.pop()
    return KnockOut(impl=impl or knockout_impl(kernel, "+".join(off)), kernel=kernel, switch="+".join(off),
                    off=tuple(closed), defines=defines, applies_to=applies_to)


def legal(off: list[str], by_name: dict) -> bool:
    """Whether a set of switches off respects depends_on (a switch off needs its dependencies off)."""
    return all(set(by_name[n].depends_on) <= set(off) for n in off)


def structural(kernel: str) -> list[Structural]:
    return [s for s in load()[1] if s.kernel == kernel]


# --- SASS identity (CPU: plain nvcc + cuobjdump) ---------------------------------------------


def cuobjdump_path() -> str:
    """cuobjdump from PATH, CUDA_HOME, or the nvidia-cuda-cuobjdump wheel of this interpreter."""
    import sys

    candidates = [shutil.which("cuobjdump")]
    from lab.kernels.build import cuda_home

    if cuda_home():
        candidates.append(str(Path(cuda_home()) / "bin" / "cuobjdump"))
    wheel_bin = Path(sys.prefix) / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / \
        "site-packages" / "nvidia" / "cu13" / "bin"
    candidates.append(str(wheel_bin / "cuobjdump"))
    for c in candidates:
        if c and Path(c).is_file():
            return c
    raise FileNotFoundError("cuobjdump not found (PATH, CUDA_HOME/bin, or pip install nvidia-cuda-cuobjdump)")


def run_cuobjdump(*args: str) -> str:
    """cuobjdump's output for `args`, its own folder on PATH (where the wheel keeps the nvdisasm that -sass
    calls); RuntimeError with its message where it fails."""
    tool = cuobjdump_path()
    env = {**os.environ, "PATH": os.pathsep.join([str(Path(tool).parent), os.environ.get("PATH", "")])}
    proc = subprocess.run([tool, *args], capture_output=True, text=True, env=env)
    if proc.returncode:
        raise RuntimeError(f"cuobjdump {' '.join(args)[-300:]} failed: {proc.stderr[-1000:]}")
    return proc.stdout


SASS_CACHE = variants.REPO / "build" / "sass"


def sass(variant_name: str, arch: str, defines: dict | None = None, twin: bool | None = None) -> str:
    """SASS text of a configuration's cubin (from the step's twin where it has one, or as `twin`
    forces: Variant.source), cached under build/sass by its build key."""
    from lab.kernels import build

    v = variants.get(variant_name)
    arch = build.variant_arch(v, arch)  # sm_90 and sm_90a name one build of an sm_90a variant
    key = [build.source_hash(v, defines, twin), arch, build.nvcc_version(), *build.NVCC_FLAGS,
           *build.define_flags(defines)]
    tag = hashlib.sha256(repr(key).encode()).hexdigest()[:24]
    cached = SASS_CACHE / f"{variant_name}-{tag}.sass"
    if cached.exists():
        return cached.read_text()
    SASS_CACHE.mkdir(parents=True, exist_ok=True)
    out = SASS_CACHE / f"{variant_name}-{tag}.tmp"
    out.mkdir(exist_ok=True)
    ok, log, _ = build.compile_check(v, arch, out_dir=out, defines=defines, twin=twin)
    if not ok:
        raise RuntimeError(f"{variant_name} {defines} does not compile for {arch}:\n{log[-2000:]}")
    cubin = next(out.glob("*.cubin"))
    dump = run_cuobjdump("-sass", str(cubin))
    text = "\n".join(l for l in dump.splitlines() if not l.lstrip().startswith(("Fatbin", "code for")))
    cached.write_text(text)
    shutil.rmtree(out, ignore_errors=True)
    return text


def sass_differences(kernel: str, arch: str = "sm_90", switches: list[Switch] | None = None,
                     jobs: int = 2, build_defines: dict | None = None) -> dict[str, bool]:
    """Per knock-out impl: whether its SASS differs from the default build's, kernel by kernel. Raises
    ValueError naming every knock-out whose "off" build compiles to the default's kernels, but for host_only
    switches, which must (and raise where they do not). `build_defines` go to
    every build alike (FA_SASS_FP16_ONLY=1: the fp16 kernels only, half the compile; a switch's
    effect on them is its effect on the bf16 ones, which take the same code)."""
    switches = load()[0] if switches is None else switches
    host_only = {s.name for s in switches if s.host_only}
    kos = knockouts(kernel, switches)
    has_twin = bool(variants.get(kernel).twin)  # the default from the same file as the "off" builds
    common = dict(build_defines or {})
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        texts = list(pool.map(lambda d: sass(kernel, arch, {**common, **d}, twin=has_twin or None),
                              [{}, *[k.defines for k in kos]]))
    default = _kernel_bodies(texts[0])
    differs = {k.impl: _kernel_bodies(t) != default for k, t in zip(kos, texts[1:])}
    if same := [k.impl for k in kos if not differs[k.impl] and not set(k.off) <= host_only]:
        raise ValueError(f"knock-out(s) {same}: the 'off' build's SASS is identical to the default "
                         "(the switch changes nothing; list the idea as structural instead)")
    if moved := [k.impl for k in kos if differs[k.impl] and set(k.off) <= host_only]:
        raise ValueError(f"knock-out(s) {moved}: a host_only switch changes the kernels' SASS")
    return differs


def _kernel_bodies(text: str) -> dict[str, str]:
    """Each kernel's instructions, whatever order the dump lists them in (a change to host code alone can
    reorder the instantiations) and whatever blank lines end it."""
    return {name: body.strip() for name, body in sass_by_kernel(text).items()}


# Kernel names in SASS carry the source file's anonymous-namespace tag (<len>_GLOBAL__N__<hash>_<len>_
# <file>_cu_<hash>), which differs between a step and its twin for the same code: at the name's head
# (_ZN<tag>) and inside its template arguments (N2fa<tag>10DecodeArgsE, a type of the file's own).
_ANONYMOUS_NAMESPACE = re.compile(r"\d+_GLOBAL__N__\w+?_cu_[0-9a-f]{8}")


def same_code(sass_a: str, sass_b: str) -> bool:
    """Whether two SASS texts are the same kernels of the same instructions, kernel names' file tags and the
    dump's order aside."""
    return _kernel_bodies(sass_a) == _kernel_bodies(sass_b)


_FUNCTION = re.compile(r"^\s*Function : (\S+)[ \t]*$", re.M)


def sass_by_kernel(text: str) -> dict[str, str]:
    """{kernel name: its SASS} of a cuobjdump -sass text, file tags aside (same_code) and runs of
    blanks as one (cuobjdump pads its columns to the longest kernel name in the file)."""
    parts = _FUNCTION.split(_ANONYMOUS_NAMESPACE.sub("_ANON_", text))
    return {name: re.sub(r"[ \t]+", " ", body) for name, body in zip(parts[1::2], parts[2::2])}


def changed_head_dims(kernel: str, impl: str, arch: str = "sm_90a", build_defines: dict | None = None) -> set[int]:
    """The head dims whose kernels a knock-out impl (`kernel~no_<switch>`, dependencies off with
    it) compiles differently from the default: where its switch changes anything at all. The
    factorial's null factor (a switch at a head dim it does not apply to) rests on the rest.
    `build_defines`: as sass_differences'."""
    _, defines = impl_config(impl)
    has_twin = bool(variants.get(kernel).twin)
    common = dict(build_defines or {})
    builds = [sass_by_kernel(sass(kernel, arch, {**common, **d}, twin=has_twin or None)) for d in ({}, defines)]
    # kernels compared by head dim, as sets of instruction texts: a switch may change a kernel's name
    # (a template argument computed from it, as the tile queue's) where it changes none of its code
    by_dim = [{} for _ in builds]
    for build, out in zip(builds, by_dim):
        for name, body in build.items():
            out.setdefault(head_dim(name), []).append(body)
    dims = set(by_dim[0]) | set(by_dim[1])
    return {D for D in dims if sorted(by_dim[0].get(D, [])) != sorted(by_dim[1].get(D, []))}


def twin_matches_step(kernel: str, arch: str) -> bool:
    """Whether the kernel's switchable twin at its defaults compiles to the step's own SASS."""
    return same_code(sass(kernel, arch, {}, twin=True), sass(kernel, arch, {}, twin=False))


# --- implementations by name (variants and configurations) ---------------------------------


def impl_config(impl: str) -> tuple[str, dict]:
    """(variant name, defines) of a variant or a knock-out impl (`k~no_a` or `k~no_a+b`)."""
    parsed = parse_impl(impl)
    if parsed is None:
        variants.get(impl)  # KeyError naming the known variants
        return impl, {}
    kernel, off = parsed
    switches = [s for s in load()[0] if s.kernel == kernel]
    by_name = {s.name: s for s in switches}
    if unknown := [n for n in off.split("+") if n not in by_name]:
        raise ValueError(f"{impl!r}: unknown switch(es) {unknown} of {kernel} (known: {sorted(by_name)})")
    return kernel, configuration(kernel, off.split("+"), by_name).defines


def build_impl(impl: str, arch: str | None = None):
    """build.build_variant for a variant or a knock-out impl (cached like any build)."""
    from lab.kernels import build

    kernel, defines = impl_config(impl)
    return build.build_variant(variants.get(kernel), arch=arch, defines=defines, impl=impl)


def is_impl(name: str) -> bool:
    try:
        impl_config(name)
        return True
    except (KeyError, ValueError):
        return False


def run_configs(variant_names: list[str]) -> dict[str, tuple[str, dict, str]]:
    """The knock-out configurations a run adds: impl -> (kernel, defines, applies_to), for each
    variant of the run that declares switches (the last step of a branch)."""
    switches = load()[0]
    out = {}
    for kernel in variant_names:
        for ko in knockouts(kernel, switches):
            out[ko.impl] = (ko.kernel, ko.defines, ko.applies_to)
    return out
