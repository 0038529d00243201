"""lab.kernels.sass_mix and lab.studies.sass_compare without a GPU: a hand-written SASS listing whose loop,
paths and classes are counted here by hand, the kernel-name readings of the study's kernels and of
FlashAttention-3's, and the instruction classes of opcodes the main loops hold."""

import pytest

from lab.kernels import sass_mix, variants
from lab.measure import fa3
from lab.studies.sass_compare import step_kernels, template_parameters

# A kernel with one K/V loop (0x0020-0x00d0): QK^T as two 64x128x16 wgmmas and PV as two 64x64x16 (head dim
# 64: keys = (2 * 128 * 16 + 2 * 64 * 16) / (2 * 64) = 48), a masked block the unmasked path jumps over
# (0x0070-0x0080), a branch out to a divergence handler (not taken) and an inner spin loop (run once).
LISTING = """
        Function : _Z6kernelv
        .headerflags    @"EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   LDC R1, c[0x0][0x28] ;                          /* 0x00000a00ff017b82 */
        /*0010*/                   HGMMA.64x128x16.F32 R24, gdesc[UR4], RZ ;       /* 0x00000000041879f0 */
        /*0020*/                   IMAD R2, R3, 0x2, R4 ;                          /* 0x0000000203027824 */
        /*0030*/                   HGMMA.64x128x16.F32 R24, gdesc[UR8], R24 ;      /* 0x00000000081879f0 */
        /*0040*/                   HGMMA.64x128x16.F32 R24, gdesc[UR12], R24 ;     /* 0x000000000c1879f0 */
        /*0050*/                   WARPGROUP.DEPBAR.LE gsb0, 0x0 ;                 /* 0x00000000000079af */
        /*0060*/               @P0 BRA 0x90 ;                                      /* 0x0000000000080947 */
        /*0070*/                   ISETP.GE.AND P1, PT, R2, R5, PT ;               /* 0x000000050200720c */
        /*0080*/                   FSEL R6, R6, -INF , !P1 ;                       /* 0xff80000006067808 */
        /*0090*/                   FFMA R6, R6, R7, -R8 ;                          /* 0x0000000706067223 */
        /*00a0*/                   MUFU.EX2 R6, R6 ;                               /* 0x0000000600067308 */
        /*00b0*/              @!P2 BRA 0x200 ;                                     /* 0x0000000000508947 */
        /*00c0*/                   SYNCS.PHASECHK.TRANS64.TRYWAIT P3, [UR4], R9 ;  /* 0x00000009ff0075a7 */
        /*00d0*/              @!P3 BRA 0xc0 ;                                      /* 0xfffffffc00f88947 */
        /*00e0*/                   HGMMA.64x64x16.F32 R40, R60, gdesc[UR16], R40 ; /* 0x00000000103c79f0 */
        /*00f0*/                   HGMMA.64x64x16.F32 R40, R64, gdesc[UR20], R40 ; /* 0x00000000143c79f0 */
        /*0100*/                   F2FP.F16.F32.PACK_AB R10, R11, R12 ;            /* 0x0000000c0b0a723e */
        /*0110*/                   SHFL.BFLY PT, R13, R6, 0x1, 0x1f ;              /* 0x0c201f00060d7f89 */
        /*0120*/                   UIADD3 UR4, UR4, 0x80, URZ ;                    /* 0x0000008004047890 */
        /*0130*/              @!P4 BRA 0x20 ;                                      /* 0xfffffffc00ec8947 */
        /*0140*/                   EXIT ;                                          /* 0x000000000000794d */
        /*0200*/                   NOP ;                                           /* 0x0000000000007918 */
        /*0210*/                   BRA 0xc0 ;                                      /* 0xfffffffc00a87947 */
"""


def test_the_loop_is_found_and_the_handlers_jump_back_is_not_one():
    ins = sass_mix.parse(LISTING)
    assert len(ins) == 23 and ins[1].opcode == "HGMMA.64x128x16.F32" and ins[6].predicated
    loops = sass_mix.loops(ins)
    # back edges: 0x0d0 -> 0x0c0 (the spin), 0x130 -> 0x020 (the K/V loop); 0x210 -> 0x0c0 crosses the loop
    assert [(ins[h].addr, ins[b].addr) for h, b in loops] == [(0xC0, 0xD0), (0x20, 0x130)]
    assert [(ins[h].addr, ins[b].addr) for h, b in sass_mix.main_loops(ins)] == [(0x20, 0x130)]


def test_the_loops_two_paths_by_hand():
    ins = sass_mix.parse(LISTING)
    (head, back), = sass_mix.main_loops(ins)
    paths = sass_mix.paths(ins, head, back)
    # unmasked (0x060 jumps to 0x090): 0x020-0x060, 0x090-0x130 = 5 + 11 = 16; masked: 18
    assert [len(p) for p in paths] == [16, 18]
    unmasked = sass_mix.mix(ins, paths[0])
    assert unmasked["tensor"] == 5 and unmasked["MUFU"] == 1 and unmasked["fp32 math"] == 1
    assert unmasked["int / address"] == 2 and unmasked["predicate / select"] == 0  # IMAD, UIADD3
    assert unmasked["barrier / wait"] == 1 and unmasked["convert"] == 1 and unmasked["shuffle"] == 1
    assert unmasked["control"] == 4  # past the mask, out to the handler (not taken), the spin's and the loop's
    assert sum(unmasked.values()) == 16
    masked = sass_mix.mix(ins, paths[1])
    assert masked["predicate / select"] == 2 and sum(masked.values()) == 18


def test_keys_come_from_the_mmas_work_and_counts_are_per_128_keys():
    m = sass_mix.loop_mix(LISTING, head_dim=64)
    best = m["paths"][0]
    assert best["keys"] == pytest.approx((2 * 128 * 16 + 2 * 64 * 16) / (2 * 64))  # 48
    assert best["instructions_per_128_keys"] == pytest.approx(16 * 128 / 48)
    assert best["per_128_keys"]["MUFU"] == pytest.approx(128 / 48)
    assert m["tile_keys"] == 128  # N sizes 128 (QK^T: the keys) and 64 (PV: the head dim)
    assert sass_mix.tile_keys(sass_mix.parse(LISTING.replace("64x64x16", "64x128x16")), 128) == 128
    assert sass_mix.tile_keys(sass_mix.parse(LISTING.replace("64x64x16", "64x176x16")), 64) is None


def test_the_uniform_datapath_and_r2ur_are_counted_across_the_classes():
    """LISTING's unmasked path (16 instructions, by hand above) holds one uniform-datapath instruction (UIADD3 at
    0x120) and no R2UR; its masked path the same. With the IMAD at 0x020 an R2UR, one R2UR (a move, not a
    uniform-datapath instruction), and an ULDC in place of the loop's SHFL adds one to the uniform count."""
    ins = sass_mix.parse(LISTING)
    (head, back), = sass_mix.main_loops(ins)
    unmasked, masked = sass_mix.paths(ins, head, back)
    assert sass_mix.datapaths(ins, unmasked) == {"uniform": 1, "to uniform": 0}
    assert sass_mix.datapaths(ins, masked) == {"uniform": 1, "to uniform": 0}
    listing = LISTING.replace("IMAD R2, R3, 0x2, R4", "R2UR UR9, R3").replace("SHFL.BFLY PT, R13, R6, 0x1, 0x1f",
                                                                             "ULDC UR5, c[0x0][0x10]")
    best = sass_mix.loop_mix(listing, head_dim=64)["paths"][0]
    assert best["datapaths_per_128_keys"] == pytest.approx({"uniform": 2 * 128 / 48, "to uniform": 128 / 48})
    assert best["per_128_keys"]["move"] == pytest.approx(128 / 48)  # the R2UR keeps its class


def test_the_shortest_path_is_the_unmasked_one_with_its_count_per_128_keys():
    ins = sass_mix.parse(LISTING)
    per, path = sass_mix.shortest_path(ins, head_dim=64)
    assert per == pytest.approx(16 * 128 / 48)  # 16 instructions (unmasked path, by hand above) over 48 keys
    # in program order: the loop's head, then past the masked block (0x070, 0x080) to its back edge
    assert [ins[i].addr for i in path][:5] == [0x20, 0x30, 0x40, 0x50, 0x60]
    assert ins[path[5]].addr == 0x90 and ins[path[-1]].addr == 0x130 and len(path) == 16
    with pytest.raises(ValueError, match="no loop with tensor-core MMAs"):
        sass_mix.shortest_path(sass_mix.parse(LISTING.replace("HGMMA", "HFMA2")), head_dim=64)


def test_the_loops_order_one_character_an_instruction():
    """LISTING's unmasked path, written out by hand from its addresses: IMAD, two HGMMAs, the wait on the
    group, the branch past the mask, FFMA, MUFU, the branch out, the mbarrier's try-wait and its retry, two
    HGMMAs, F2FP, SHFL, UIADD3 and the back edge."""
    text = sass_mix.describe_order("fixture", LISTING, head_dim=64)
    head, before, after, seq = text.splitlines()
    assert seq == ".GG|W0x0|.fe.|S|.GGcs.."
    assert head == "== fixture: 16 instructions on the path, 43 per 128 keys"  # 16 * 128 / 48
    assert before.endswith("e 0, m 0, + 0, f 0, x 0, c 0")
    assert after.startswith("   after it:                   e 1, m 0, + 0, f 1, x 0, c 1;")
    assert after.endswith("c 1; no FMUL after it")
    fmul = sass_mix.describe_order("fixture", LISTING.replace("F2FP.F16.F32.PACK_AB R10, R11, R12", "FMUL R10, R11, R12"),
                                   head_dim=64).splitlines()
    assert fmul[3] == ".GG|W0x0|.fe.|S|.GGms.." and fmul[2].endswith("the last FMUL at position 4 from the path's end")
    # an instruction is counted once, whatever its characters: a wgmma wait before P V's ("|W0x1|") is no FMNMX
    waits = sass_mix.describe_order("fixture", LISTING.replace("IMAD R2, R3, 0x2, R4", "WARPGROUP.DEPBAR.LE gsb0, 0x1"),
                                    head_dim=64, wait="|W0x0|").splitlines()
    assert waits[3] == "|W0x1|GG|W0x0|.fe.|S|.GGcs.." and waits[1].endswith("e 0, m 0, + 0, f 0, x 0, c 0")
    ins = sass_mix.parse(LISTING)
    assert [sass_mix.order_char(i) for i in ins[:2]] == [".", "G"]
    assert sass_mix.order_char(sass_mix.parse("        /*0000*/ BAR.SYNC.DEFER_BLOCKING 0x1, 0x100 ;")[0]) == "|BAR.SYNC|"


def test_a_kernel_without_an_mma_loop_is_refused():
    with pytest.raises(ValueError, match="no loop with tensor-core MMAs"):
        sass_mix.loop_mix(LISTING.replace("HGMMA", "HFMA2"), head_dim=64)


def test_too_many_paths_are_refused():
    # 7 forward branches in a row inside the loop: 2^7 = 128 paths, over a limit of 64
    body = "".join(f"        /*{0x30 + 0x20 * i:04x}*/               @P0 BRA 0x{0x50 + 0x20 * i:x} ;\n"
                   f"        /*{0x40 + 0x20 * i:04x}*/                   FADD R1, R1, R2 ;\n" for i in range(7))
    listing = ("        /*0020*/                   HGMMA.64x64x16.F32 R24, gdesc[UR4], R24 ;\n" + body +
               "        /*0110*/                   NOP ;\n        /*0120*/              @!P4 BRA 0x20 ;\n")
    ins = sass_mix.parse(listing)
    (head, back), = sass_mix.main_loops(ins)
    assert len(sass_mix.paths(ins, head, back, limit=200)) == 128
    with pytest.raises(ValueError, match="more than 64 paths"):
        sass_mix.paths(ins, head, back)


@pytest.mark.parametrize("opcode, cls", [
    ("HGMMA.64x176x16.F32", "tensor"), ("WARPGROUP.ARRIVE", "tensor"), ("MUFU.EX2", "MUFU"),
    ("FMNMX", "fp32 math"), ("FFMA.FTZ", "fp32 math"), ("LOP3.LUT", "int / address"), ("R2UR", "move"),
    ("UIADD3", "int / address"), ("FSEL", "predicate / select"), ("ISETP.GE.U32.AND", "predicate / select"),
    ("SYNCS.ARRIVE.TRANS64.RED.A1T0", "barrier / wait"), ("BAR.SYNC.DEFER_BLOCKING", "barrier / wait"),
    ("F2FP.F16.F32.PACK_AB", "convert"), ("SHFL.BFLY", "shuffle"), ("UTMALDG.2D", "memory"), ("BRA.DIV", "control"),
    ("FOO", "other")])
def test_classes(opcode, cls):
    assert sass_mix.classify(opcode) == cls


def test_the_studys_kernel_names_read_as_dtype_head_dim_and_template_choices():
    names = ["void (anonymous namespace)::attention_fwd<__half, 128, ((anonymous namespace)::TileKind)0, false>"
             "(__half*, CUtensorMap_st)",
             "void (anonymous namespace)::attention_fwd<__half, 64, (fa::HopperTileKind)2, true>(__half*)",
             "void (anonymous namespace)::attention_fwd<__nv_bfloat16, 64, true>(__nv_bfloat16 const*)",
             "void fa::hold_kernel(int*)"]
    # with the step's parameter names: a bool is named; no CAUSAL parameter, so the mask is read at run time
    assert step_kernels(names[:2], ["Elem", "D", "KIND", "FROM_QUEUE"]) == [
        {"index": 0, "dtype": "float16", "head_dim": 128, "variant_args": "TileKind 0, FROM_QUEUE=false",
         "causal": None},
        {"index": 1, "dtype": "float16", "head_dim": 64, "variant_args": "HopperTileKind 2, FROM_QUEUE=true",
         "causal": None}]
    # a kernel that does take its mask as a template argument
    assert step_kernels(names[2:], ["Elem", "D", "CAUSAL"]) == [
        {"index": 0, "dtype": "bfloat16", "head_dim": 64, "variant_args": "", "causal": True}]
    # without names (or names that do not fit the arguments) the arguments as written, the mask unknown
    assert [k["variant_args"] for k in step_kernels(names, ["Elem", "D"])] == [
        "TileKind 0, false", "HopperTileKind 2, true", "true"]
    assert {k["causal"] for k in step_kernels(names)} == {None}


def test_a_kernel_compiled_non_causal_is_a_full_mask_row_and_old_records_read_so_too():
    """Step 66 on: NON_CAUSAL=true compiles a kernel for non-causal calls only (its mask: full), false leaves
    the mask to run time; a record written before step_kernels read the parameter keeps it in its kernel label."""
    from lab.studies.sass_compare import mask_label, row_causal

    names = ["void (anonymous namespace)::attention_fwd<__half, 128, (fa::HopperTileKind)0, true, false, true>(int)",
             "void (anonymous namespace)::attention_fwd<__half, 128, (fa::HopperTileKind)0, true, false, false>(int)"]
    ks = step_kernels(names, ["Elem", "D", "KIND", "FROM_QUEUE", "ONE_LOOP", "NON_CAUSAL"])
    assert [(k["variant_args"], k["causal"]) for k in ks] == [
        ("HopperTileKind 0, FROM_QUEUE=true, ONE_LOOP=false", False),
        ("HopperTileKind 0, FROM_QUEUE=true, ONE_LOOP=false", None)]
    old = {"kernel": "HopperTileKind 0, FROM_QUEUE=true, ONE_LOOP=false, NON_CAUSAL=true", "causal": None}
    assert mask_label(row_causal(old)) == "full"
    assert mask_label(row_causal({**old, "kernel": old["kernel"].replace("=true", "=false")})) == "at run time"
    assert row_causal({"kernel": "TileKind 0", "causal": True}) is True


def test_a_steps_template_parameters_are_read_from_its_source():
    source = ("template <class Elem, int D, TileKind KIND = TileKind::kShort,\n          bool FROM_QUEUE>\n"
              "__global__ void __launch_bounds__(Tile<Elem, D, KIND>::THREADS, Tile<Elem, D, KIND>::CTAS_PER_SM)\n"
              "    attention_fwd(Elem* __restrict__ o) {}")
    assert template_parameters(source) == ["Elem", "D", "KIND", "FROM_QUEUE"]
    assert template_parameters("template <int D>\n__global__ void attention_fwd(half* o) {}") == ["D"]
    assert template_parameters("__global__ void attention_fwd(half* o) {}") == []
    # the branch end's kernel as committed (read by hand from kernels/variants/36_uniform_descriptors.cu)
    assert template_parameters(variants.get("uniform_descriptors").path.read_text()) == ["Elem", "D", "KIND",
                                                                                           "FROM_QUEUE"]


def _fa3_name(tile, head_dim, element, flags):
    mainloop = (f"flash::CollectiveMainloopFwdSm90<2, cute::tuple<cute::C<1>, cute::C<1>, cute::C<1> >, "
                f"cute::tuple<cute::C<{tile[0]}>, cute::C<{tile[1]}>, cute::C<{head_dim}> >, {head_dim}, "
                f"cutlass::{element}, float, cutlass::arch::Sm90, {', '.join(flags)}>")
    return (f"void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnFwdSm90<{mainloop}, "
            "flash::CollectiveEpilogueFwd<...>, flash::StaticPersistentTileScheduler<false> > > >(...)")


def test_a_kernel_with_its_mask_at_run_time_is_one_row_and_a_templated_mask_its_own(monkeypatch):
    """compare() over a step's kernels: fp16 only, each kernel whose mask is read at run time once (not once
    for each of FA3's masks), a kernel with a CAUSAL argument under that mask; every row from LISTING's loop."""
    from lab.studies import sass_compare

    names = ["void (anonymous namespace)::attention_fwd<__half, 64, ((anonymous namespace)::TileKind)0, false>(int)",
             "void (anonymous namespace)::attention_fwd<__half, 64, ((anonymous namespace)::TileKind)0, true>(int)",
             "void (anonymous namespace)::attention_fwd<__nv_bfloat16, 64, ((anonymous namespace)::TileKind)0, true>(int)",
             "void (anonymous namespace)::attention_fwd<__half, 128, ((anonymous namespace)::TileKind)0, true>(int)"]
    monkeypatch.setattr(sass_compare.sass_mix, "kernel_names", lambda text: list(range(len(names))))
    monkeypatch.setattr(sass_compare.sass_mix, "demangle", lambda raw: names)
    monkeypatch.setattr(sass_compare.sass_mix, "kernel_sass", lambda text, name: LISTING)
    monkeypatch.setattr(sass_compare, "_step_parameters", lambda step: ["Elem", "D", "KIND", "FROM_QUEUE"])
    rows = sass_compare.compare("a_step", "unused")["rows"]
    assert [(r["head_dim"], r["kernel"], r["causal"]) for r in rows] == [
        (128, "TileKind 0, FROM_QUEUE=true", None), (64, "TileKind 0, FROM_QUEUE=false", None),
        (64, "TileKind 0, FROM_QUEUE=true", None)]
    assert [sass_compare.mask_label(r["causal"]) for r in rows] == ["at run time"] * 3
    monkeypatch.setattr(sass_compare, "_step_parameters", lambda step: ["Elem", "D", "KIND", "CAUSAL"])
    rows = sass_compare.compare("a_step", "unused")["rows"]
    assert [(r["head_dim"], r["kernel"], r["causal"]) for r in rows] == [
        (128, "TileKind 0", True), (64, "TileKind 0", False), (64, "TileKind 0", True)]
    assert [sass_compare.mask_label(r["causal"]) for r in rows] == ["causal", "full", "causal"]


def test_fa3s_plain_forward_kernel_is_the_one_without_varlen_local_or_the_rest():
    f = ["false"] * 12
    plain = list(f)
    plain[7:9] = ["true", "true"]  # P from registers, intra-warpgroup overlap
    varlen = list(plain)
    varlen[3] = "true"
    causal = list(plain)
    causal[0] = "true"
    names = [_fa3_name((128, 176), 128, "half_t", varlen), _fa3_name((128, 176), 128, "half_t", plain),
             _fa3_name((128, 128), 128, "half_t", causal), _fa3_name((128, 176), 128, "bfloat16_t", plain),
             "void other_kernel()"]
    ks = fa3.forward_kernels(names)
    assert [k["index"] for k in ks] == [0, 1, 2, 3]
    k = fa3.plain_forward_kernel(ks, 128, False)
    assert (k["index"], k["rows"], k["keys"], k["stages"], k["pv_from_registers"]) == (1, 128, 176, 2, True)
    assert fa3.plain_forward_kernel(ks, 128, True)["index"] == 2
    assert fa3.plain_forward_kernel(ks, 128, False, "bfloat16")["index"] == 3
    with pytest.raises(ValueError, match="0 FA3 forward kernels"):
        fa3.plain_forward_kernel(ks, 64, False)
    with pytest.raises(ValueError, match="11 mainloop flags"):
        fa3.forward_kernels([_fa3_name((128, 176), 128, "half_t", f[:11])])


def test_the_reports_table_shows_each_kernels_counts_and_what_was_not_read():
    import json
    from pathlib import Path

    from lab.report.sections.results import _sass_mix

    class Data:
        sass_mix = json.loads((Path(__file__).parents[1] / "data" / "checks" / "2026-11-28-sass-mix-step35-fa3" /
                               "sass_mix.json").read_text())

    Data.sass_mix["errors"] = ["flash_attn3 D=256 causal=False: made up"]
    text = "\n".join(_sass_mix(Data))
    step = next(r for r in Data.sass_mix["rows"] if r["impl"] == "longest_first_queue" and r["head_dim"] == 128
                and r["kernel"] == "TileKind 0, FROM_QUEUE=false")
    line = next(ln for ln in text.splitlines()
                if ln.startswith("| longest_first_queue | TileKind 0, FROM_QUEUE=false | 128 | at run time |"))
    assert f"| {step['instructions_per_128_keys']:.0f} |" in line
    assert f"| {step['per_128_keys']['int / address']:.0f} |" in line
    assert "| flash_attn3 | 128 x 176, 2 stages | 128 | full | 176 |" in text
    assert "Not read: flash_attn3 D=256 causal=False: made up." in text
    assert "| other |" not in text.splitlines()[4]  # a class no kernel issues is not a column

    assert "| uniform datapath | R2UR |" not in text  # a record from before the counts: no such columns

    class New:
        sass_mix = {"rows": [dict(r, datapaths_per_128_keys={"uniform": 23.0, "to uniform": 2.0})
                             for r in Data.sass_mix["rows"]], "errors": []}

    new = "\n".join(_sass_mix(New))
    assert "| uniform datapath | R2UR |" in new.splitlines()[4]
    assert next(ln for ln in new.splitlines() if ln.startswith("| longest_first_queue |")).endswith("| 23 | 2 |")

    class Empty:
        sass_mix = {"rows": [], "errors": ["FileNotFoundError: no libdew_flash_attn3.so"]}

    assert "Not available for this run: FileNotFoundError: no libdew_flash_attn3.so." in "\n".join(_sass_mix(Empty))

    class Old:
        sass_mix = None

    assert _sass_mix(Old) == []


def test_the_profile_stages_sass_mix_records_a_failure_rather_than_raise(monkeypatch):
    from lab.studies import stages

    def broken(rec):
        raise RuntimeError("no builds here")

    monkeypatch.setattr(stages, "_built", broken)
    out = stages.sass_mix_of_run(object(), [], progress=lambda s: None)  # FA3 not timed: not looked for
    assert out == {"rows": [], "errors": ["RuntimeError: no builds here"]}


def test_without_fa3s_library_the_steps_rows_stay_and_the_report_says_why(monkeypatch):
    from types import SimpleNamespace

    from lab.measure import fa3
    from lab.studies import sass_compare, stages

    def no_library():
        raise FileNotFoundError("no libdew_flash_attn3.so")

    seen = {}

    def compare(step, sass, library):
        seen["args"] = (step, sass, library)
        return {"rows": [{"impl": step}], "errors": []}

    monkeypatch.setattr(fa3, "library_path", no_library)
    monkeypatch.setattr(stages, "_built", lambda rec: {"uniform_descriptors": SimpleNamespace(library="lib.so")})
    monkeypatch.setattr(stages.RunParams, "read", staticmethod(lambda rec: SimpleNamespace(
        variants=["longest_first_queue", "uniform_descriptors"])))
    monkeypatch.setattr("lab.kernels.sass_mix.dump_sass", lambda lib: f"SASS of {lib}")
    monkeypatch.setattr(sass_compare, "compare", compare)
    out = stages.sass_mix_of_run(object(), ["flash_attn3"], progress=lambda s: None)
    assert seen["args"] == ("uniform_descriptors", "SASS of lib.so", None)
    assert out == {"rows": [{"impl": "uniform_descriptors"}],
                   "errors": ["flash_attn3: FileNotFoundError: no libdew_flash_attn3.so"]}
