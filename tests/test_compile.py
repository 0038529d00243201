"""CPU tests: every variant's device code compiles with plain nvcc (no torch, no GPU) for sm_90
and sm_80, every portable one for sm_86 and sm_89 too (the other GPUs it is meant to run on), its
ptxas report parses, and on every step that descends from +padding nothing spills. Each variant is
compiled once, into a shared library with the device code of every arch it supports, which the
tests of its exported entry points then load."""

import ctypes
import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest

from lab.kernels import build, manifest, ptxas, variants
from lab.kernels.attention import library_inputs
from lab.kernels.manifest import SUPPORTED_HEAD_DIMS

# sm_86 and sm_89 (RTX 30xx/A10, RTX 40xx/L4/L40) build portable steps only: build.unsupported_reason
# refuses the sm_90a ones there before any compiler runs, so they cost CI no compile time.
ARCHS = ("sm_90", "sm_80", "sm_86", "sm_89")
NO_SPILLS_FROM = "padded"
DOTTED = {"sm_90": "9.0", "sm_80": "8.0", "sm_86": "8.6", "sm_89": "8.9"}  # as TORCH_CUDA_ARCH_LIST spells them
SM89_SMEM_LIMIT = 99 * 1024  # the smallest per-block opt-in limit among sm_80, sm_89, sm_90
SM80_SMEM_LIMIT = 163 * 1024  # sm_80's per-block opt-in limit
SM90_SMEM_LIMIT = 227 * 1024  # Hopper's per-block opt-in limit, for sm_90a-only steps


def supported(variant, arch: str) -> bool:
    """Arch-specific steps (manifest arch 'sm_90a') compile for their own GPU generation only."""
    return not build.unsupported_reason(variant, DOTTED[arch])


@pytest.fixture(scope="module")
def libraries(tmp_path_factory) -> dict:
    """variant -> (ok, log, ptxas records of every arch, library path): each variant compiled once, into
    a shared library with its device code for every arch it supports (build.compile_library), two at a
    time. A portable step's PTX is made once (compute_80) and ptxas compiles it for sm_80, sm_86 and
    sm_89: the program those GPUs' own builds make (test_one_ptx_is_each_archs_own checks it), at a
    third of the front end's time; the host side at -O1, which changes no device code."""
    out_dir = tmp_path_factory.mktemp("libraries")

    def one(v):
        lib = out_dir / f"{v.name}.so"
        archs = [a for a in ARCHS if supported(v, a)]
        return (*build.compile_library(v, archs, lib, one_ptx=v.arch == variants.PORTABLE, host_opt="-O1"), lib)

    with ThreadPoolExecutor(max_workers=2) as pool:
        return {v.name: out for v, out in zip(variants.manifest(), pool.map(one, variants.manifest()))}


@pytest.fixture(scope="module")
def compiled(libraries) -> dict:
    """(variant, arch) -> (ok, log, ptxas records for that arch)."""
    out = {}
    for v in variants.manifest():
        ok, log, kernels, _ = libraries[v.name]
        for a in ARCHS:
            if supported(v, a):
                out[(v.name, a)] = (ok, log, [k for k in kernels if k["arch"].removesuffix("a") == a])
    return out


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("name", variants.names(problem=None))  # every problem's steps
def test_variant_compiles(name, arch, compiled):
    if not supported(variants.get(name), arch):
        reason = build.unsupported_reason(variants.get(name), DOTTED[arch])
        assert reason.startswith("not built") and variants.get(name).arch in reason
        return
    ok, log, kernels = compiled[(name, arch)]
    assert ok, f"{name} does not compile for {arch}:\n{log}"
    assert sorted({k["head_dim"] for k in kernels}) == [64, 128], "a kernel for every supported head dim"
    for k in kernels:
        assert k["arch"].removesuffix("a") == arch
        assert k["registers"] is not None and 0 < k["registers"] <= 255


def test_one_ptx_is_each_archs_own():
    """The premise of compiling a portable step's PTX once: the front end makes the same program for
    compute_86 and compute_89 as for compute_80, the `.target` line aside. No portable step's source or
    header compares __CUDA_ARCH__ with a value between 800 and 900 (where they could differ), and the
    portable branch's end, compiled three times, is one program."""
    import re

    arch_test = re.compile(r"__CUDA_ARCH__\s*(?:[<>]=?|[=!]=)\s*(\d+)")
    for v in variants.manifest():
        if v.arch == variants.PORTABLE:
            for path in (v.path, *build.included_headers(v.path)):
                between = [int(x) for x in arch_test.findall(path.read_text()) if 800 < int(x) < 900]
                assert not between, f"{path.name} ({v.name}) branches on __CUDA_ARCH__ {between}"
    end = next(n for n in manifest.branch_ends(variants.names()) if variants.get(n).arch == variants.PORTABLE)
    texts = {}
    for cc in ("80", "86", "89"):
        proc = subprocess.run([build.nvcc_path(), "-ptx", f"-arch=compute_{cc}", *build.NVCC_FLAGS, *build.TORCH_NVCC_FLAGS,
                               f"-I{build.INCLUDE_DIR}", "-o", "-", str(variants.get(end).path)],
                              capture_output=True, text=True, check=True)
        texts[cc] = re.sub(r"(?m)^(\.target .*|//.*)$", "", proc.stdout)
    assert texts["86"] == texts["80"] and texts["89"] == texts["80"], end
    assert "mma.sync" in texts["80"], "the comparison reads the kernel's code"


def test_every_portable_step_is_compiled_for_every_arch(compiled):
    """What the spill check below reads: a portable step's ptxas report on each of ARCHS."""
    for v in variants.manifest():
        archs = [a for a in ARCHS if (v.name, a) in compiled]
        assert archs == (list(ARCHS) if v.arch == variants.PORTABLE else ["sm_90"]), v.name


def descends_from_padding(name: str) -> bool:
    """+padding and every step built on it (its lineage, in the ladder's tree, passes through it)."""
    return NO_SPILLS_FROM in variants.lineage(name)


@pytest.mark.parametrize("arch", ARCHS)
def test_no_spills_from_padding_onward(arch, compiled):
    checked = [n for n in variants.names() if descends_from_padding(n) and (n, arch) in compiled]
    assert checked, f"no step from {NO_SPILLS_FROM} onward was compiled for {arch}"
    for name in checked:
        for k in compiled[(name, arch)][2]:
            assert k["spill_stores"] == 0 and k["spill_loads"] == 0, f"{name} D={k['head_dim']} spills on {arch}: {k}"


def test_spill_check_follows_the_tree(tree_manifest):
    tree_manifest()  # portable_a (step 19) branches off async_pipeline, after the sm_90a steps
    assert descends_from_padding("portable_b") and descends_from_padding("ftz_exp2")
    assert not descends_from_padding("coalesced") and descends_from_padding("padded")


def test_parse_ptxas_known_text():
    log = """ptxas info    : Compiling entry function '_ZN2fa13attention_fwdILi64EEEvv' for 'sm_90'
ptxas info    : Function properties for _ZN2fa13attention_fwdILi64EEEvv
    16 bytes stack frame, 12 bytes spill stores, 24 bytes spill loads
ptxas info    : Used 80 registers, used 1 barriers, 2048 bytes smem, 404 bytes cmem[0]
"""
    (k,) = ptxas.parse_ptxas(log)
    assert k == {"kernel": "_ZN2fa13attention_fwdILi64EEEvv", "head_dim": 64, "dtype": "fp16", "arch": "sm_90",
                 "registers": 80, "spill_stores": 12, "spill_loads": 24, "stack_frame": 16, "static_smem": 2048,
                 "barriers": 1}


def test_parse_ptxas_reads_head_dim_and_dtype_after_an_element_type():
    # attention_fwd<__nv_bfloat16, 128> and attention_fwd<__half, 64, 2> (steps 28, 29), as nvcc 13 mangles them
    log = """ptxas info    : Compiling entry function '_ZN12_GLOBAL__N_113attention_fwdI13__nv_bfloat16Li128EEEvPT_' for 'sm_90a'
ptxas info    : Used 168 registers, used 16 barriers, 1024 bytes smem
ptxas info    : Compiling entry function '_ZN12_GLOBAL__N_113attention_fwdI6__halfLi64ELi2EEEvPKT_' for 'sm_80'
ptxas info    : Used 204 registers, used 1 barriers
"""
    bf16, fp16 = ptxas.parse_ptxas(log)
    assert (bf16["head_dim"], bf16["dtype"], bf16["registers"]) == (128, "bf16", 168)
    assert (fp16["head_dim"], fp16["dtype"], fp16["registers"]) == (64, "fp16", 204)


def test_compile_error_is_reported_with_the_compilers_message(tmp_path, monkeypatch):
    broken = tmp_path / "99_broken.cu"
    broken.write_text('#include "fa/common.cuh"\n__global__ void k() { this_is_not_declared(); }\n')
    v = variants.Variant(99, "broken", broken.name, "", "t", "c", "h", "shared_bank_conflicts", "down", (1, 1), "portable")
    monkeypatch.setattr(manifest, "VARIANTS_DIR", tmp_path)
    ok, log, _ = build.compile_check(v, "sm_90")
    assert not ok
    assert "this_is_not_declared" in ptxas.compile_errors(log)


def test_build_key_covers_source_headers_flags_and_arch(monkeypatch):
    wmma = variants.get("wmma")
    headers = {p.name for p in build.included_headers(wmma.path)}
    assert {"common.cuh", "pipeline.cuh", "softmax.cuh", "tile_io.cuh", "wmma_attention.cuh"} <= headers
    assert "scalar.cuh" not in headers
    key = build.build_key(wmma, "9.0")
    assert build.build_key(wmma, "9.0") == key
    assert build.build_key(wmma, "8.0") != key
    monkeypatch.setattr(build, "NVCC_FLAGS", [*build.NVCC_FLAGS, "-DEXTRA"])
    assert build.build_key(wmma, "9.0") != key


def test_build_key_changes_when_an_included_header_changes(tmp_path, monkeypatch):
    inc = tmp_path / "include" / "fa"
    inc.mkdir(parents=True)
    (inc / "a.cuh").write_text('#include "fa/b.cuh"\n')
    (inc / "b.cuh").write_text("// v1\n")
    src = tmp_path / "variants" / "01_x.cu"
    src.parent.mkdir()
    src.write_text('#include "fa/a.cuh"\n')
    monkeypatch.setattr(build, "INCLUDE_DIR", tmp_path / "include")
    monkeypatch.setattr(build, "KERNELS_DIR", tmp_path)
    monkeypatch.setattr(manifest, "VARIANTS_DIR", src.parent)
    v = variants.Variant(1, "x", src.name, "", "t", "c", "h", "shared_bank_conflicts", "down", (1, 1), "portable")
    before = build.build_key(v, "9.0")
    (inc / "b.cuh").write_text("// v2\n")  # a header included only indirectly
    assert build.build_key(v, "9.0") != before


def test_the_tuning_space_prices_shared_memory_as_the_tuned_kernel_allocates(libraries):
    """lab.studies.tuning.space rejects configurations by a shared-memory formula before building them
    (its copy of the tile's layout); the tuned kernel's library says what it allocates (fa_smem_bytes,
    the tile of short sequences): at the manifest's defaults the two agree for every head dim."""
    from lab.studies.tuning import space as tuning_space

    kernel = manifest.tuned_kernel()
    ok, log, _, lib_path = libraries[kernel]
    assert ok, log
    lib, sp = ctypes.CDLL(str(lib_path)), tuning_space.space()
    for d in SUPPORTED_HEAD_DIMS:
        assert lib.fa_smem_bytes(d) == sp.smem_bytes(sp.default(d)), f"{kernel}, D = {d}"


@pytest.mark.parametrize("name", variants.names(problem=None))
def test_exported_launch_configuration(name, libraries):
    """The C entry points load without a GPU; the launch shape fits every supported GPU."""
    ok, log, _, lib_path = libraries[name]
    assert ok, f"{name} does not compile:\n{log}"
    lib = ctypes.CDLL(str(lib_path))
    lib.fa_build_key.restype = ctypes.c_char_p
    assert lib.fa_build_key() == b"kabc123"
    for d in (64, 128):
        threads, rows, smem = lib.fa_threads(d), lib.fa_tile_rows(d), lib.fa_smem_bytes(d)
        assert threads % 32 == 0 and 32 <= threads <= 1024
        assert rows > 0
        # A portable decode step reports its three-stage tile, 109 KB at D = 128, and runs two stages
        # where a device's limit is lower (sm_86, sm_89: fa::decode_stages_fit); sm_80 takes 163 KB.
        portable = SM80_SMEM_LIMIT if variants.get(name).problem == "decode" else SM89_SMEM_LIMIT
        assert 0 < smem <= (SM90_SMEM_LIMIT if variants.get(name).arch == "sm_90a" else portable)
    assert lib.fa_smem_bytes(96) == 0 and lib.fa_threads(96) == 0
    # what the library says it takes (fa_forward_ex, fa_dtypes, fa_grouped_kv) is what the manifest declares
    v = variants.get(name)
    dtypes, kv_heads = library_inputs(lib)
    assert (set(dtypes), kv_heads) == (set(v.dtypes), v.kv_heads), name
    # Nothing shared between libraries in one process: no GNU-unique (or other weak) symbol of
    # ours that the dynamic linker would unify across variants (it once shared the launcher's
    # "opted in" flag, so the second variant with the same tile skipped its opt-in).
    # Ours: the demangled name in namespace fa or an fa_ entry point (not "fa" anywhere in the line,
    # which also matched hex addresses such as 90fa on the standard library's own weak symbols).
    symbols = subprocess.run(["nm", "-D", "-C", "--defined-only", str(lib_path)], capture_output=True, text=True,
                             check=True)
    shared = [ln for ln in symbols.stdout.splitlines()
              if ln.split()[1:2] in (["u"], ["V"], ["W"]) and _ours(ln.split(maxsplit=2)[2])]
    assert not shared, f"{name} exports symbols the loader would share between variants: {shared}"


def _ours(symbol: str) -> bool:
    """Whether a demangled symbol is this project's: in namespace fa (at any depth, e.g. a
    function-local static of fa::(anonymous namespace)::opt_in_shared_memory) or an fa_ entry point."""
    import re

    return symbol.startswith("fa_") or re.search(r"(^|[\s<(,*&])fa::", symbol) is not None


def test_symbols_of_ours_are_told_from_the_standard_librarys():
    # the old launcher's flag, a weak unique symbol, and a standard-library instantiation at an
    # address with "fa" in it (the case the old filter flagged)
    assert _ours("fa::(anonymous namespace)::opt_in_shared_memory<Tile, void (*)()>(void (*)())::opted_in_devices")
    assert _ours("fa_forward_ex") and _ours("guard variable for fa::launch<T>()::flag")
    assert not _ours("std::vector<std::pair<void const*, int>, std::allocator<std::pair<void const*, int> > >"
                     "::emplace_back<void const*&, int&>(void const*&, int&)")
    assert not _ours("sofa::thing") and not _ours("std::mutex::lock()")


def test_arch_specific_step_is_refused_elsewhere_with_the_reason():
    hopper_only = [v for v in variants.manifest() if v.arch == "sm_90a"]
    assert hopper_only, "the ladder has a Hopper step"
    for v in hopper_only:
        assert build.unsupported_reason(v, "9.0") == ""
        assert build.variant_arch(v, "9.0") == "9.0a"
        result = build.build_variant(v, arch="8.9")  # refused before any compiler runs
        assert not result.ok and result.log.startswith("not built") and "sm_90a" in result.log and "sm_89" in result.log
    portable = variants.get("async_pipeline")
    assert build.unsupported_reason(portable, "8.0") == "" and build.variant_arch(portable, "9.0") == "9.0"


def test_a_configuration_whose_macro_its_source_never_reads_is_refused_by_name():
    end = next(v for v in variants.manifest() if v.twin and v.arch == "sm_90a")  # configurations build its twin
    assert build.unused_defines(end, {"FA_TILE_BC_D128": 128, "FA_PING_PONG": 0}) == ""  # a header's, the twin's
    assert build.unused_defines(end, {}) == ""
    why = build.unused_defines(end, {"FA_TILE_BC_D128": 128, "FA_NOT_READ_ANYWHERE": 1, "FA_ALSO_UNREAD": 0})
    assert why.startswith("defines FA_ALSO_UNREAD, FA_NOT_READ_ANYWHERE appear nowhere in knockouts/")
    assert "FA_TILE_BC_D128" not in why
    assert build.unused_defines(end, {"FA_TILE_BC_D12": 1})  # a word, not a prefix of one that is read
    result = build.build_variant(end, arch="9.0", defines={"FA_NOT_READ_ANYWHERE": 1}, impl="x")  # before any compiler
    assert not result.ok and "FA_NOT_READ_ANYWHERE" in result.log


@pytest.mark.parametrize("name", variants.names(problem="decode"))
def test_a_decode_library_is_a_decode_call_and_refuses_bad_arguments_before_the_gpu(name, libraries):
    """A decode step's library loads as lab.kernels.decode_attention.DecodeAttention (what its manifest
    says it takes), refuses CPU tensors with the constraint's name, and its C entry point returns
    cudaErrorInvalidValue (1) for arguments outside the contract of fa/decode.cuh before touching a GPU."""
    from lab.kernels.decode import DecodeShape
    from lab.kernels.decode_attention import DecodeAttention

    ok, log, _, lib_path = libraries[name]
    assert ok, log
    call = DecodeAttention(name, ctypes.CDLL(str(lib_path)), "kabc123")
    assert (set(call.dtypes), call.kv_heads) == ({"fp16", "bf16"}, "grouped")
    x = DecodeShape.parse("2,8,2,64,100").random_inputs(device="cpu")
    with pytest.raises(ValueError, match="must be CUDA tensors"):
        call(x["q"], x["k_cache"], x["v_cache"], x["cache_lens"])
    table = ctypes.c_void_p(16)  # never read: the arguments are refused first

    def decode(B=2, q_len=1, H=8, H_kv=2, D=64, dim0=2, dim1=100, table_ptr=None, stride=0, dtype=1):
        return call._decode(None, None, None, None, None, table_ptr, B, q_len, H, H_kv, D, dim0, dim1, stride,
                            0.125, dtype, None, 0, None)

    assert decode(B=0) == 1 and decode(q_len=9) == 1 and decode(H=6, H_kv=4) == 1 and decode(dim0=0) == 1
    assert decode(table_ptr=table, dim1=48, stride=3) == 1  # a page of 48 tokens: not a power of two
    assert decode(table_ptr=table, dim1=64, stride=0) == 1  # a block table without pages
    assert decode(D=96) == 1 and decode(dtype=2) == 1  # a head dim, an element type it has no kernel for
