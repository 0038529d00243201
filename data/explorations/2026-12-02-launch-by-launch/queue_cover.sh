# queue_cover.cu under the three configurations of call 2 (nvcc, host code only; no GPU).
cd "$(dirname "$0")"
git -C ../../.. apply --check data/explorations/2026-12-02-launch-by-launch/queue_sections.patch 2>/dev/null && { git -C ../../.. apply data/explorations/2026-12-02-launch-by-launch/queue_sections.patch; trap "git -C ../../.. apply -R data/explorations/2026-12-02-launch-by-launch/queue_sections.patch" EXIT; }
for cfg in "s53:" "f3:-DFA_EXP_QUEUE_L2_FIFTHS=3 -DFA_EXP_QUEUE_TILES_PER_CTA=3" \
           "mt:-DFA_EXP_QUEUE_MERGE_TAIL=1 -DFA_EXP_QUEUE_TILES_PER_CTA=3"; do
  echo "== ${cfg%%:*} ${cfg#*:}"
  nvcc -std=c++17 -arch=sm_90a -I ../../../kernels/include ${cfg#*:} -o /tmp/queue_cover queue_cover.cu && /tmp/queue_cover
done
