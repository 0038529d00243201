# Device call 2 of data/explorations/2026-12-05-sections-counter-d64, at once after call1.sh on the same machine (its
# builds and the applied patch kept; if the machine is new, apply sections.patch first). carry [".whl", ".fa3"].
# About 160 s. cap.py of ../2026-12-05-clock-under-cap: each configuration against FA3 at the power cap, on one board.
# Predictions, written before the call:
#  - s67 0.97x-0.99x at (4, 16, 4096, 64, causal), its clock 2-4 % under FA3's; sec32 0.99x-1.01x there, the clocks
#    within 1 %; at (2, 16, 8192, 64, causal) the same pattern;
#  - at the S = 2048 rows (GPT-2's (4, 12, 2048, 64), Falcon-7B's (4, 71, 2048, 64)): s67 0.95x-0.99x; s2k 0.98x-1.01x
#    (192-row tiles read each K/V tile for half as many query rows again, the traffic the cap charges).
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
E=data/explorations/2026-12-05-sections-counter-d64
C=data/explorations/2026-12-05-clock-under-cap
grep -q FA_EXP_SECTIONS_COUNTER_D64_MB kernels/include/fa/tile_queue.cuh || git apply $E/sections.patch || exit 3
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
cap() {  # tag, defines, shapes...
  local tag=$1 defs=$2; shift 2
  CAP_TAG=$tag CAP_DEFINES=$defs timeout 90 python $C/cap.py uniform_row0_d128 flash_attn3 "$@" > $OUT/cap_$tag.txt 2>&1
  echo "cap $tag rc=$? $(( $(date +%s)-T0 )) s"; tail -4 $OUT/cap_$tag.txt
}
cap s67_long '{}' 4,16,4096,64,causal 2,16,8192,64,causal
cap sec32 '{"FA_EXP_SECTIONS_COUNTER_D64_MB": 32}' 4,16,4096,64,causal 2,16,8192,64,causal
cap s67_2k '{}' 4,12,2048,64,causal,bf16 4,71,2048,64,causal,kv1,bf16
cap s2k '{"FA_TILE_THREE_WGS_CAUSAL_MIN_S_D64": 2048}' 4,12,2048,64,causal,bf16 4,71,2048,64,causal,kv1,bf16
