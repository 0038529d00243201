source .whl/prelude.sh 2>/dev/null; export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv
python .scratch/exp.py '{"base":["serial_d64",{}],"noq":["serial_d64",{"FA_EXP_NO_Q_RELOAD":1}],"nostore":["serial_d64",{"FA_EXP_NO_STORE":1}],"kvfirst":["serial_d64",{"FA_EXP_KV_FIRST":1}],"pairfull":["serial_d64",{"FA_EXP_PAIR_IF_FULL":1}]}' \
 "16,16,1024,128;4,16,4096,128;64,16,256,128;32,16,512,128;16,16,1024,128,causal;4,64,2048,128,causal,kv8,bf16;4,16,4096,64;8,16,512,64;1,8,512,64,causal;4,16,512,64,causal;4,71,2048,64,causal,kv1,bf16" check 2.5 2>&1 | tee $OUT/exp1.txt
