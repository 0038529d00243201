# Device call 1 of data/explorations/2026-12-05-sections-counter-d64 (issue 46), from the repository root of a tree at
# the folder's commit; carry [".whl", ".fa3"] (move data/checks and data/runs aside so that the tree fits). About 400 s
# with the machine's start; call2.sh follows at once (the same machine, its builds kept). Applies sections.patch on the
# lent tree (FA_EXP_SECTIONS_COUNTER_D64_MB, default 0).
# Configurations: s67; sec32 and sec20 (the counter's causal D = 64 tile in sections of 32 and 20 MB of K/V); s2k
# (FA_TILE_THREE_WGS_CAUSAL_MIN_S_D64 = 2048: causal D = 64 calls of 2048 keys take the 192-row tiles, the counter's
# among them, which step 51 kept from 4096 on; the S = 2048 rows, two of the three sustained misses, run the 128-row
# short tile, FA3 192 rows).
# Predictions, written before the call:
#  - sec32, sec20 and s2k pass exp.py's grid (sections change the tiles' order only; s2k's tiles ran the grid's causal
#    D = 64 cases in ../2026-12-04-counter-second-tile, its "mx");
#  - Nsight Compute at (4, 16, 4096, 64, causal): sec32's DRAM bytes 35-50 % of s67's (s67 43.2 % of peak, FA3 17.4 %),
#    its L2 throughput 30-45 % of peak (s67 71.3 %), its duration within 1 % of s67's;
#  - hot, paired rounds over s67: sec32 1.000x-1.015x at (4, 16, 4096, 64), (2, 16, 8192, 64) and (8, 16, 4096, 64),
#    causal; 1.000x +-0.003 at the calls it leaves (GPT-2's and Falcon-7B's S = 8192 rows, the D = 128 control);
#    sec20 as sec32, and +-1 % at GPT-2's S = 8192 row, which it splits in two;
#  - s2k at the S = 2048 causal rows (GPT-2's and Falcon-7B's models rows, (4, 16, 2048, 64)): 0.97x-1.03x hot (the
#    rule's 4096 was set on the tile before it overlapped, step 59); 1.000x where S >= 4096.
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
  "sec20": ["uniform_row0_d128", {"FA_EXP_SECTIONS_COUNTER_D64_MB": 20}],
  "s2k": ["uniform_row0_d128", {"FA_TILE_THREE_WGS_CAUSAL_MIN_S_D64": 2048}]}'
# the grid on the three new configurations only (s67 is step 67, checked at its landing); the builds are kept for the rest
EXP_CONFIGS=$(python -c "import json, os; c = json.loads(os.environ['EXP_CONFIGS']); c.pop('s67'); print(json.dumps(c))") \
  timeout 300 python $X/exp.py check > $OUT/check.txt 2>&1; echo "check rc=$? $(( $(date +%s)-T0 )) s"
grep -E "^check|^built|BUILD|FAILED" $OUT/check.txt | cut -c1-200
export EXP_SHAPES='["4,16,4096,64,causal", "2,16,8192,64,causal", "8,16,4096,64,causal", "1,12,8192,64,causal,bf16",
  "1,71,8192,64,causal,kv1,bf16", "4,12,2048,64,causal,bf16", "4,71,2048,64,causal,kv1,bf16", "4,16,2048,64,causal",
  "4,16,4096,128,causal"]'
timeout 150 python $X/exp.py time 2.5 > $OUT/time.txt 2>&1; echo "time rc=$? $(( $(date +%s)-T0 )) s"
python $X/exp.py summary $OUT/time.txt
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
timeout 120 $NCU --clock-control none --nvtx --nvtx-include profile/ --section SpeedOfLight \
  --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,gpu__time_duration.sum --csv \
  python $E/prof3.py 4,16,4096,64,causal > $OUT/ncu.csv 2> $OUT/ncu.log; echo "ncu rc=$? $(( $(date +%s)-T0 )) s"
grep -E "dram__bytes|lts__t_bytes|gpu__time_duration" $OUT/ncu.csv | cut -c1-220
