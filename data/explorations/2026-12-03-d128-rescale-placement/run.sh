# SASS only, on the CPU machine (nvcc 13.0, .fa3 from ../../../../shared/anchors/fa3-binary.sh): this folder's
# listings. rescale_order.patch adds FA_EXP_ORDER to step 60's file (1: P packed before O's rescale in the source;
# 2: the two interleaved in the source, a P fragment then two of O's column blocks); split_softmax.patch adds
# FA_EXP_NO_RESCALE and FA_EXP_SPLIT_SOFTMAX (1-5) to the file and its twin; rotated_loop.patch
# FA_EXP_ROTATED_LOOP to the file. Each applied for its listings, taken back.
set -e
E=data/explorations/2026-12-03-d128-rescale-placement
applied=""  # the patch on the tree now: taken back however the script ends
trap '[ -z "$applied" ] || git apply -R $E/$applied' EXIT
python $E/order.py fa3 > $E/fa3.txt
python $E/order.py ours > $E/step60.txt
python $E/order.py ours64 > $E/step60_d64.txt
python $E/order.py fa3-64 > $E/fa3_d64.txt
LEVEL=10 python $E/order.py ours > $E/step60_level10.txt
LEVEL=0 python $E/order.py ours > $E/step60_level0.txt
git apply $E/rescale_order.patch; applied=rescale_order.patch
python $E/order.py ours FA_EXP_ORDER=1 > $E/step60_order1.txt
python $E/order.py ours FA_EXP_ORDER=2 > $E/step60_order2.txt
git apply -R $E/rescale_order.patch; applied=""
git apply $E/rotated_loop.patch; applied=rotated_loop.patch
python $E/order.py ours FA_EXP_ROTATED_LOOP=1 > $E/step60_rotated.txt
git apply -R $E/rotated_loop.patch; applied=""
git apply $E/split_softmax.patch; applied=split_softmax.patch
python $E/order.py ours FA_EXP_NO_RESCALE=1 > $E/step60_no_rescale.txt
for v in 1 2 3 4 5; do python $E/order.py ours FA_EXP_SPLIT_SOFTMAX=$v > $E/step60_split$v.txt; done
git apply -R $E/split_softmax.patch; applied=""
