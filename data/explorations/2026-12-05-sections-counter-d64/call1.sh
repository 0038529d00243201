# Device call 1 of data/explorations/2026-12-05-sections-counter-d64 (issue 46), from the repository root of a tree at
# the folder's commit; carry [".whl", ".fa3"] (move data/checks and data/runs aside so that the tree fits). About 450 s
# with the machine's start. Applies sections.patch on the lent tree (FA_EXP_SECTIONS_COUNTER_D64_MB, default 0).
# Predictions, written before the call:
#  - sec32 and sec20 pass exp.py's grid (the sections change the tiles' order only);
#  - Nsight Compute at (4, 16, 4096, 64, causal): sec32's DRAM bytes 35-50 % of s67's (s67 43.2 % of peak, FA3 17.4 %),
#    its L2 throughput 30-45 % of peak (s67 71.3 %), its duration within 1 % of s67's;
#  - hot, paired rounds over s67: sec32 1.000x-1.015x at (4, 16, 4096, 64), (2, 16, 8192, 64) and (8, 16, 4096, 64),
#    causal; 1.000x +-0.003 at the calls it leaves (GPT-2's and Falcon-7B's S = 8192 rows, the D = 128 control);
#    sec20 as sec32, and +-1 % at GPT-2's S = 8192 row, which it splits in two;
#  - at the cap (cap.py, same board, s67 then sec32 against FA3): s67 0.97x-0.99x at (4, 16, 4096, 64, causal) with
#    its clock 2-4 % under FA3's; sec32 0.99x-1.01x with the clocks within 1 %.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
E=data/explorations/2026-12-05-sections-counter-d64
X=data/explorations/2026-11-28-kv-apart-d128
C=data/explorations/2026-12-05-clock-under-cap
git apply $E/sections.patch || patch -p1 < $E/sections.patch || exit 3
grep -c FA_EXP_SECTIONS_COUNTER_D64_MB kernels/include/fa/tile_queue.cuh
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
T0=$(date +%s)
export EXP_CONFIGS='{"s67": ["uniform_row0_d128", {}], "sec32": ["uniform_row0_d128", {"FA_EXP_SECTIONS_COUNTER_D64_MB": 32}],
  "sec20": ["uniform_row0_d128", {"FA_EXP_SECTIONS_COUNTER_D64_MB": 20}]}'
timeout 240 python $X/exp.py check > $OUT/check.txt 2>&1; echo "check rc=$? $(( $(date +%s)-T0 )) s"
grep -E "^check|^built|BUILD|FAILED" $OUT/check.txt | cut -c1-200
export EXP_SHAPES='["4,16,4096,64,causal", "2,16,8192,64,causal", "8,16,4096,64,causal", "1,12,8192,64,causal,bf16",
  "1,71,8192,64,causal,kv1,bf16", "4,16,4096,128,causal"]'
timeout 120 python $X/exp.py time 2.5 > $OUT/time.txt 2>&1; echo "time rc=$? $(( $(date +%s)-T0 )) s"
python $X/exp.py summary $OUT/time.txt
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
timeout 120 $NCU --clock-control none --nvtx --nvtx-include profile/ --section SpeedOfLight \
  --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,gpu__time_duration.sum --csv \
  python $E/prof3.py 4,16,4096,64,causal > $OUT/ncu.csv 2> $OUT/ncu.log; echo "ncu rc=$? $(( $(date +%s)-T0 )) s"
grep -E "dram__bytes|lts__t_bytes|gpu__time_duration" $OUT/ncu.csv | cut -c1-220
for cfg in s67 sec32; do
  defs='{}'; [ $cfg = sec32 ] && defs='{"FA_EXP_SECTIONS_COUNTER_D64_MB": 32}'
  CAP_TAG=$cfg CAP_DEFINES=$defs timeout 90 python $C/cap.py uniform_row0_d128 flash_attn3 4,16,4096,64,causal \
    2,16,8192,64,causal > $OUT/cap_$cfg.txt 2>&1; echo "cap $cfg rc=$? $(( $(date +%s)-T0 )) s"; tail -4 $OUT/cap_$cfg.txt
done
