"""The instruction mix of a kernel's main loop, read from its SASS (`cuobjdump -sass`): what one K/V tile
costs a warp, instruction class by instruction class (issue 46: "count before you change").

The main loop is the innermost loop (a backward branch) whose body issues tensor-core instructions. A loop
body may hold alternatives (the masked and the unmasked softmax, a rescale taken or skipped), so it is read
as paths: from the loop's head to its back edge, each forward branch inside the body taken or not, a branch
out of the body (a divergence handler, a barrier's retry spin placed after the kernel) not taken, and an
inner loop (a barrier's try-wait) run once. Each path is one iteration's instruction stream, counted per
128 keys: how many keys an iteration covers comes from its tensor instructions' shapes (keys_of), so that
kernels of different tiles compare.

    >>> from lab.kernels import sass_mix, switches
    >>> text = switches.sass("longest_first_queue", "sm_90a")
    >>> name = sass_mix.find_kernel(text, "attention_fwdI6__halfLi128ELNS_8TileKindE0ELb0E")
    >>> m = sass_mix.loop_mix(sass_mix.kernel_sass(text, name), head_dim=128)
    >>> m["paths"][0]["per_128_keys"]        # {class: instructions a warp issues per 128 keys}, shortest path

Static counts: what the loop issues per iteration, not how often each path runs (Nsight Compute's
`smsp__inst_executed` says that) nor what each instruction costs.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from lab.kernels.switches import run_cuobjdump

# Instruction classes, in the order tables show them; an opcode's class is the first whose test matches its
# mnemonic (the part before the first '.'). Uniform-datapath twins (U-prefixed) go with their class.
CLASSES = (
    ("tensor", {"HGMMA", "HMMA", "IMMA", "QGMMA", "IGMMA", "BGMMA", "WARPGROUP"}),
    ("MUFU", {"MUFU"}),
    ("fp32 math", {"FFMA", "FMUL", "FADD", "FMNMX", "FSWZADD", "FCHK", "HADD2", "HMUL2", "HFMA2", "HMNMX2"}),
    ("int / address", {"IMAD", "IADD3", "VIADD", "VIADDMNMX", "LEA", "SHF", "LOP3", "IABS", "IMNMX", "PRMT",
                       "POPC", "FLO", "BREV", "BMSK", "SGXT", "UIADD3", "UIMAD", "ULEA", "USHF", "ULOP3", "UPRMT",
                       "UFLO", "UPOPC", "UBMSK", "USGXT", "UBREV", "UIMNMX", "IDP", "IDP4A"}),
    ("predicate / select", {"ISETP", "FSETP", "HSETP2", "PSETP", "PLOP3", "SEL", "FSEL", "P2R", "R2P", "VOTE",
                            "VOTEU", "UISETP", "USEL", "UPLOP3", "UP2UR", "UR2UP", "UPSETP"}),
    ("shuffle", {"SHFL"}),
    ("barrier / wait", {"BAR", "SYNCS", "DEPBAR", "WARPSYNC", "MEMBAR", "ERRBAR", "YIELD", "NANOSLEEP", "ARRIVES",
                        "CCTL", "FENCE"}),
    ("convert", {"F2F", "F2FP", "I2F", "F2I", "I2FP", "F2IP", "FRND", "I2I", "I2IP"}),
    ("move", {"MOV", "UMOV", "R2UR", "S2R", "S2UR", "CS2R", "MOVM", "B2R", "R2B", "BMOV", "UCGABAR_ARV"}),
    ("memory", {"LDS", "STS", "LDG", "STG", "LD", "ST", "LDSM", "STSM", "LDC", "ULDC", "LDL", "STL", "UTMALDG",
                "UTMASTG", "UTMAPF", "UBLKCP", "UBLKRED", "UTMACMDFLUSH", "UTMACCTL", "ATOM", "ATOMS", "ATOMG", "RED",
                "REDG", "LDGSTS", "LDGDEPBAR", "UCCTL"}),
    ("control", {"BRA", "EXIT", "BSSY", "BSYNC", "CALL", "RET", "NOP", "JMP", "BRX", "JMX", "KILL", "ACQBULK",
                 "ELECT", "UELECT", "ENDCOLLECTIVE", "PREEXIT", "ACQSHMINIT"}),
)
CLASS_NAMES = tuple(name for name, _ in CLASSES) + ("other",)
TENSOR_MMA = {"HGMMA", "HMMA", "QGMMA", "IGMMA", "BGMMA", "IMMA"}  # the MMAs (WARPGROUP: their fences)
MAX_PATHS = 64


def classify(opcode: str) -> str:
    """The class of an opcode ("HGMMA.64x128x16.F32", "@P0"-free): its mnemonic's, else "other"."""
    base = opcode.split(".")[0]
    return next((name for name, ops in CLASSES if base in ops), "other")


@dataclass(frozen=True)
class Instr:
    addr: int
    opcode: str  # with its modifiers, without the predicate
    operands: str
    predicated: bool

    @property
    def mnemonic(self) -> str:
        return self.opcode.split(".")[0]

    def branch_target(self) -> int | None:
        """A branch's target address (BRA, BRA.DIV, BRA.U.ANY ...), None for anything else."""
        if self.mnemonic != "BRA":
            return None
        m = re.search(r"0x([0-9a-f]+)\s*$", self.operands)
        return int(m.group(1), 16) if m else None

    @property
    def always_taken(self) -> bool:
        """An unconditional branch (no predicate, not BRA.DIV / .U.ANY, which depend on the warp)."""
        return self.mnemonic == "BRA" and not self.predicated and self.opcode == "BRA"


_LINE = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s*(@!?U?P[T0-9]+\s+)?([A-Z][A-Za-z0-9_.]*)\s*([^;]*);")
_FUNCTION = re.compile(r"^\s*Function : (\S+)\s*$", re.M)


def parse(sass: str) -> list[Instr]:
    """One kernel's instructions, in address order (cuobjdump -sass lines `/*addr*/ [@P] OPCODE operands ;`)."""
    out = []
    for line in sass.splitlines():
        m = _LINE.match(line)
        if m:
            out.append(Instr(int(m.group(1), 16), m.group(3), m.group(4).strip(), m.group(2) is not None))
    return out


def kernel_names(text: str) -> list[str]:
    return _FUNCTION.findall(text)


def find_kernel(text: str, *parts: str) -> str:
    """The one kernel whose (mangled) name holds every part; ValueError naming how many did otherwise."""
    hits = [n for n in kernel_names(text) if all(p in n for p in parts)]
    if len(hits) != 1:
        raise ValueError(f"{len(hits)} kernels' names hold {parts} (of {len(kernel_names(text))}); need exactly one")
    return hits[0]


def kernel_sass(text: str, name: str) -> str:
    """The SASS of the kernel `name` in a cuobjdump -sass text of several."""
    start = text.index(f"Function : {name}")
    nxt = _FUNCTION.search(text, start + len(name) + 11)
    return text[start: nxt.start() if nxt else len(text)]


def dump_sass(binary) -> str:
    """Every kernel's SASS in a binary (cuobjdump -sass)."""
    return run_cuobjdump("-sass", str(binary))


def entry_names(binary) -> list[str]:
    """The kernels (entry functions) a binary's device code holds (cuobjdump -symbols), mangled."""
    return [ln.split()[-1] for ln in run_cuobjdump("-symbols", str(binary)).splitlines()
            if ln.startswith("STT_FUNC") and "STO_ENTRY" in ln]


def entry_sass(binary, name: str) -> str:
    """One kernel's SASS from a binary (a cubin, or a library that embeds its device code)."""
    text = run_cuobjdump("-sass", "-fun", name, str(binary))
    if f"Function : {name}" not in text:
        raise ValueError(f"no kernel {name[:120]}... in {binary}")
    return kernel_sass(text, name)


def demangle(names: list[str]) -> list[str]:
    """C++ names as written (c++filt, which comes with gcc's binutils)."""
    import subprocess

    out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True, check=True).stdout
    return out.splitlines()


# ---------------------------------------------------------------------------------------------
# Loops and paths
# ---------------------------------------------------------------------------------------------


def loops(instrs: list[Instr]) -> list[tuple[int, int]]:
    """Every loop as (index of its head, index of its back-edge branch): a branch to an address at or
    before its own. An unconditional one whose range crosses a conditional one's is not a loop but
    out-of-line code jumping back into the body it left (a divergence handler placed after the kernel's
    end, returning), and is left out."""
    index = {ins.addr: i for i, ins in enumerate(instrs)}
    back = [(index[t], i) for i, ins in enumerate(instrs)
            if (t := ins.branch_target()) is not None and t <= ins.addr and t in index]
    crosses = lambda a, b: a[0] < b[0] <= a[1] < b[1] or b[0] < a[0] <= b[1] < a[1]  # noqa: E731
    conditional = [lp for lp in back if not instrs[lp[1]].always_taken]
    return [lp for lp in back
            if not (instrs[lp[1]].always_taken and any(crosses(lp, other) for other in conditional))]


def main_loops(instrs: list[Instr]) -> list[tuple[int, int]]:
    """The innermost loops whose bodies issue tensor-core MMAs (no other such loop inside them), in
    address order: a K/V tile loop each (a causal kernel may have a masked and an unmasked one)."""
    mma = [i for i, ins in enumerate(instrs) if ins.mnemonic in TENSOR_MMA]
    with_mma = [(h, b) for h, b in loops(instrs) if any(h <= i <= b for i in mma)]
    inner = [(h, b) for h, b in with_mma
             if not any((h2, b2) != (h, b) and h <= h2 and b2 <= b for h2, b2 in with_mma)]
    return sorted(set(inner))


def paths(instrs: list[Instr], head: int, back: int, limit: int = MAX_PATHS) -> list[list[int]]:
    """The loop body's paths from `head` to the back edge `back` (indices into instrs), each forward branch
    inside the body taken or not; branches leaving the body and inner back edges not taken. ValueError where
    there are more than `limit`."""
    index = {ins.addr: i for i, ins in enumerate(instrs)}
    done: list[list[int]] = []
    stack = [(head, [])]
    while stack:
        i, path = stack.pop()
        while True:
            path = path + [i]
            if i == back:
                done.append(path)
                break
            ins = instrs[i]
            t = ins.branch_target()
            j = index.get(t) if t is not None else None
            taken_ok = j is not None and i < j <= back  # forward, inside the body
            if ins.always_taken:
                if not taken_ok:  # leaves the body for good (an exit path): not an iteration
                    break
                i = j
                continue
            if taken_ok:
                stack.append((j, path))
            i += 1
        if len(done) + len(stack) > limit:
            raise ValueError(f"loop at {instrs[head].addr:#x}-{instrs[back].addr:#x}: more than {limit} paths")
    return sorted(done, key=len)


def mix(instrs: list[Instr], path: list[int]) -> dict[str, int]:
    """{class: count} over a path, every class present (0 where none)."""
    c = Counter(classify(instrs[i].opcode) for i in path)
    return {name: c.get(name, 0) for name in CLASS_NAMES}


def datapaths(instrs: list[Instr], path: list[int]) -> dict[str, int]:
    """Across the classes: {"uniform": instructions of the uniform datapath (a U-prefixed mnemonic: one value a
    warp, kept off the vector registers), "to uniform": R2UR, a vector register copied into a uniform one}. A
    loop that builds its wgmma descriptors or ring state per thread pays R2UR (and the SHFL.IDX before it) each
    iteration; FlashAttention-3's loops issue none (data/explorations/2026-12-04-causal-kernels,
    sass_compare_s67.txt)."""
    return {"uniform": sum(instrs[i].mnemonic.startswith("U") for i in path),
            "to uniform": sum(instrs[i].mnemonic == "R2UR" for i in path)}


_GMMA_SHAPE = re.compile(r"^[A-Z]+GMMA\.(\d+)x(\d+)x(\d+)")  # warpgroup M x N x K
_HMMA_SHAPE = re.compile(r"^HMMA\.(\d\d)(\d)(\d+)")  # warp m16n8k16 as 16816, m16n8k8 as 1688


def mma_nk(opcode: str) -> int | None:
    """N x K of one tensor MMA (its rows cancel: see keys_of), None for what is not one."""
    if m := _GMMA_SHAPE.match(opcode):
        return int(m.group(2)) * int(m.group(3))
    if m := _HMMA_SHAPE.match(opcode):
        return int(m.group(2)) * int(m.group(3))
    return None


def keys_of(instrs: list[Instr], path: list[int], head_dim: int) -> float:
    """Keys an iteration's MMAs cover for their rows: QK^T of rows x keys over head_dim and PV of rows x
    head_dim over keys are 2 x rows x keys x head_dim multiply-adds, and an MMA of rows x N x K is
    rows x N x K of them, so keys = sum(N x K) / (2 x head_dim). Exact however a kernel splits or
    pipelines its tiles (QK^T of one tile with PV of the last, N split in halves)."""
    return sum(nk for i in path if (nk := mma_nk(instrs[i].opcode))) / (2 * head_dim)


def tile_keys(instrs: list[Instr], head_dim: int) -> int | None:
    """The keys of a K/V tile as the wgmma shapes show it, where they do: QK^T's instructions are
    64 x keys x 16 and PV's 64 x head_dim x 16, so keys is the one N that is not head_dim (head_dim where
    only it occurs); None where the N sizes say otherwise (a tile issued in parts)."""
    ns = {int(m.group(2)) for ins in instrs if (m := _GMMA_SHAPE.match(ins.opcode))}
    other = ns - {head_dim}
    if len(other) > 1 or not ns:
        return None
    return other.pop() if other else head_dim


def shortest_path(instrs: list[Instr], head_dim: int) -> tuple[float, list[int]]:
    """Over every main loop, the path with the fewest instructions per 128 keys (keys_of) and that count: the
    loop a kernel spends its time in, as loop_mix ranks them, with its instructions' indices in order (for
    reading the order of a loop, not only its counts). ValueError where the kernel has no main loop."""
    best = None
    for head, back in main_loops(instrs):
        for p in paths(instrs, head, back):
            per = len(p) * 128 / keys_of(instrs, p, head_dim)
            if best is None or per < best[0]:
                best = (per, p)
    if best is None:
        raise ValueError("no loop with tensor-core MMAs in this kernel")
    return best


def loop_mix(sass: str, head_dim: int) -> dict:
    """Every main loop of one kernel's SASS with its paths, shortest per key first: per path its
    instructions, tensor MMAs, the keys an iteration covers (keys_of), the class counts per iteration and per
    128 keys (a warp's rows against 128 keys, whatever the tile), and the datapaths counts per 128 keys.
    "paths": the paths of the loop with the fewest instructions per key (a causal kernel's unmasked loop).
    ValueError where the kernel has no main loop."""
    instrs = parse(sass)
    found = main_loops(instrs)
    if not found:
        raise ValueError("no loop with tensor-core MMAs in this kernel")
    out = []
    for head, back in found:
        ps = []
        for p in paths(instrs, head, back):
            m = mix(instrs, p)
            keys = keys_of(instrs, p, head_dim)
            ps.append({"instructions": len(p), "mma": sum(instrs[i].mnemonic in TENSOR_MMA for i in p),
                       "keys": keys, "per_iteration": m,
                       "per_128_keys": {k: v * 128 / keys for k, v in m.items()},
                       "datapaths_per_128_keys": {k: v * 128 / keys for k, v in datapaths(instrs, p).items()},
                       "instructions_per_128_keys": len(p) * 128 / keys})
        ps.sort(key=lambda r: r["instructions_per_128_keys"])
        out.append({"head": instrs[head].addr, "back_edge": instrs[back].addr, "paths": ps})
    return {"head_dim": head_dim, "tile_keys": tile_keys(instrs, head_dim), "loops": out,
            "paths": min((lp["paths"] for lp in out), key=lambda ps: ps[0]["instructions_per_128_keys"])}


# The order of events on a loop's path, one character an instruction (the explorations' order.py and orders.py):
#   G HGMMA   a WARPGROUP.ARRIVE   |W0x1| |W0x0| WARPGROUP.DEPBAR (a wgmma wait, its count)   |BAR.SYNC| |BAR.ARV|
#   a named barrier   |S| SYNCS (an mbarrier)   e MUFU   m FMUL   + FADD   f FFMA   x FMNMX   c F2FP   s SHFL
#   . anything else
ORDER_CHARS = {"MUFU": "e", "FMUL": "m", "FADD": "+", "FFMA": "f", "FMNMX": "x", "F2FP": "c", "SHFL": "s"}
ORDER_COUNTED = "e m + f x c".split()  # the softmax's and the rescale's characters, counted either side of a wait


def order_char(ins: Instr) -> str:
    """One instruction as the order's legend writes it (ORDER_CHARS; waits and barriers as |...|)."""
    op = ins.opcode
    mnemonic = op.split(".")[0]
    if mnemonic == "HGMMA":
        return "G"
    if op.startswith("WARPGROUP.DEPBAR"):
        return "|W" + ins.operands.split(",")[-1].strip() + "|"
    if op.startswith("WARPGROUP.ARRIVE"):
        return "a"
    if mnemonic == "BAR":
        return "|BAR." + op.split(".")[1] + "|"
    if mnemonic.startswith("SYNCS"):
        return "|S|"
    return ORDER_CHARS.get(mnemonic, ".")


def describe_order(label: str, sass: str, head_dim: int = 128, wait: str = "|W0x0|") -> str:
    """The shortest path through one kernel's main loop (shortest_path) as the order's characters, with its
    length, its count per 128 keys, the softmax's and rescale's instructions (ORDER_COUNTED) before and after
    the first `wait` (in the ping-pong loop the one on P V) and where its last FMUL falls: four lines."""
    instrs = parse(sass)
    per, path = shortest_path(instrs, head_dim)
    chars = [order_char(instrs[i]) for i in path]  # counted as instructions, not as characters: "|W0x1|" holds an x
    split = chars.index(wait) if wait in chars else len(chars)
    before, after = chars[:split], chars[split + 1:]
    count = lambda part: ", ".join(f"{k} {part.count(k)}" for k in ORDER_COUNTED)
    last = (f"the last FMUL at position {len(after) - max(i for i, c in enumerate(after) if c == 'm')} from the "
            "path's end" if "m" in after else "no FMUL after it")
    return (f"== {label}: {len(path)} instructions on the path, {per:.0f} per 128 keys\n"
            f"   before P V's wait ({wait}): {count(before)}\n"
            f"   after it:                   {count(after)}; {last}\n" + "".join(chars))
