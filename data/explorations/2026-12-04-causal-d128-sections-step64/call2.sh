# Device call 2 of data/explorations/2026-12-04-causal-d128-sections-step64 (issue 46), from the repository root,
# carry [".whl", ".fa3"]. RAN 2026-12-04 (stop 87) on call 1's machine, still warm, with the session's last device
# seconds (so 1.0 s a row, not 1.5). Written after call 1, which left r (32 MB sections, the counter from 3 tiles a
# CTA) level at the S = 4096 rows and found larger sections worse there: do smaller sections with the counter always
# (r16t1, r24t1: 16 and 24 MB, the counter from 1 tile a CTA) do better at S = 4096 without losing the long rows?
# And r again, for its spread within one machine. No prediction was written for r16t1 and r24t1.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH
E=data/explorations/2026-12-04-causal-d128-sections-step64
grep -q FA_EXP_CAUSAL_MIN_S_D128 kernels/include/fa/tile_queue.cuh || git apply $E/explore.patch
export EXP_CONFIGS='{"s64": ["mirrored_second_tile", {}], "r": ["mirrored_second_tile", {"FA_EXP_CAUSAL_MIN_S_D128": 4096}],
  "r16t1": ["mirrored_second_tile", {"FA_EXP_CAUSAL_MIN_S_D128": 4096, "FA_EXP_SECTION_MB_D128": 16, "FA_EXP_TILES_PER_CTA_D128": 1}],
  "r24t1": ["mirrored_second_tile", {"FA_EXP_CAUSAL_MIN_S_D128": 4096, "FA_EXP_SECTION_MB_D128": 24, "FA_EXP_TILES_PER_CTA_D128": 1}]}'
export EXP_SHAPES='["4,16,4096,128,causal", "8,16,4096,128,causal", "2,16,8192,128,causal", "1,16,16384,128,causal"]'
timeout 60 python data/explorations/2026-11-28-kv-apart-d128/exp.py check > $OUT/check.txt 2>&1; grep -E "^check" $OUT/check.txt
timeout 50 python data/explorations/2026-11-28-kv-apart-d128/exp.py time 1.0 > $OUT/time.txt 2>&1
python data/explorations/2026-11-28-kv-apart-d128/exp.py summary $OUT/time.txt
