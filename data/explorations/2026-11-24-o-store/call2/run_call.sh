source .whl/prelude.sh 2>/dev/null; export PYTHONPATH=$PWD:$PYTHONPATH PYTHONUNBUFFERED=1
sed -i 's#^twin = "knockouts/30_serial_d64.cu"#\#twin#' kernels/variants/manifest.toml
CF='{"base":["serial_d64",{}],"tmao1":["serial_d64",{"FA_EXP_TMA_O":1}],"tmao2":["serial_d64",{"FA_EXP_TMA_O":2}]}'
python .scratch/exp.py "$CF" "2,5,1000,128;2,5,1000,128,causal;3,3,777,64,causal;1,4,100,64;1,4,100,128,causal;2,4,300,128,kv2,bf16;3,6,555,64,causal,kv3,bf16" check 0.2 2>&1 | grep -E "check|FAIL|rror"
python .scratch/exp.py "$CF" "16,16,1024,128;4,16,4096,128;64,16,256,128;32,16,512,128;16,16,1024,128,causal;4,64,2048,128,causal,kv8,bf16;1,64,8192,128,causal,kv8,bf16;4,16,4096,64;8,16,512,64;1,8,512,64,causal;4,16,512,64,causal;4,71,2048,64,causal,kv1,bf16" nocheck 2.0 2>&1 | grep -v "^built"
