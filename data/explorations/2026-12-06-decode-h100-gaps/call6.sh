# Device call 6 (issue 50, target 2 on the other GPU): the decode part of a run once (stage_now.py) on whatever GPU
# comes for nvidia-h200, with end_vs_peers.py's table printed; carry [".whl"]. Records to $OUT.
source .whl/prelude.sh 2>/dev/null
export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
E=data/explorations/2026-12-06-decode-h100-gaps
nvidia-smi --query-gpu=name,uuid,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
timeout 240 python $E/stage_now.py s1 /tmp/st > /tmp/log_1.txt 2>&1; echo "stage rc=$?"
d=$(ls -td /tmp/st/s1/*/ | head -1); gzip -c $d/decode.json > $OUT/decode.json.gz; gzip -c /tmp/log_1.txt > $OUT/log.txt.gz
grep -E "decode stage|checks|Traceback|Error" /tmp/log_1.txt | cut -c1-240
python $E/end_vs_peers.py $OUT/decode.json.gz | tee $OUT/end_vs_peers.txt
cat $OUT/gpu.txt
