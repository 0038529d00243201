# SASS only, on the CPU machine (nvcc 13.0): the listings of this folder. The patches add code behind defines
# only (the step's build without them is unchanged), applied for the run and taken back after.
set -e
E=data/explorations/2026-12-02-d128-loop-int-ops
git apply $E/wait_loop_in_ptx.patch $E/stage_desc_base.patch
git apply $E/stage_shuffle.patch  # on top of stage_desc_base.patch
trap 'git apply -R $E/stage_shuffle.patch && git apply -R $E/wait_loop_in_ptx.patch $E/stage_desc_base.patch' EXIT
python $E/int_ops.py ours > $E/step53.txt
python $E/int_ops.py ours FA_WAIT_LOOP_IN_PTX > $E/step53_wait_loop_in_ptx.txt
python $E/int_ops.py ours FA_STAGE_DESC_BASE > $E/step53_stage_desc_base.txt
python $E/int_ops.py ours FA_STAGE_SHUFFLE,FA_STAGE_DESC_BASE > $E/step53_stage_shuffle.txt
python $E/int_ops.py fa3-causal > $E/fa3_causal.txt
python $E/int_ops.py fa3-full > $E/fa3_full.txt
