#!/usr/bin/env bash
# What one recorded run adds to the git pack: a fresh repository holding COMMIT's tree without the run
# folder and the report's figures (and ablation.html where tracked) is packed (git gc), then the run and
# the figures are added in one commit and packed again; the growth is the second pack less the first.
#   bash data/checks/2026-11-27-records-layout/pack_growth.sh COMMIT RUN_ID
set -euo pipefail
COMMIT=$1 RUN=$2
ROOT=$(git rev-parse --show-toplevel)
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
git -C "$ROOT" archive "$COMMIT" | tar -x -C "$T" --one-top-level=tree
mkdir "$T/held"
mv "$T/tree/data/runs/$RUN" "$T/held/run"; mv "$T/tree/reports/figures" "$T/held/figures"
[ -f "$T/tree/reports/ablation.html" ] && mv "$T/tree/reports/ablation.html" "$T/held/" || true
cd "$T/tree"
git init -q; git add -A; git -c user.email=x@y -c user.name=x commit -q -m base; git gc -q
A=$(git count-objects -v | awk '/size-pack/{print $2}')
mv "$T/held/run" "data/runs/$RUN"; mv "$T/held/figures" reports/figures
[ -f "$T/held/ablation.html" ] && mv "$T/held/ablation.html" reports/ || true
git add -A; git -c user.email=x@y -c user.name=x commit -q -m run; git gc -q
B=$(git count-objects -v | awk '/size-pack/{print $2}')
echo "$COMMIT $RUN: pack $A KiB without the run, $B KiB with it: +$((B - A)) KiB ($(du -sb "data/runs/$RUN" | cut -f1) bytes of run folder, $(du -sbc reports/figures | tail -1 | cut -f1) of figures$( [ -f reports/ablation.html ] && echo ", $(du -sb reports/ablation.html | cut -f1) of ablation.html"))"
