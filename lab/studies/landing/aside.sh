#!/bin/bash
# Around a landing's device calls: the tree that travels (tracked and untracked files, on disk, with what is carried)
# is capped at 64 MiB, and the landing reads none of data/explorations, data/checks or the committed runs. `out` moves
# them to ASIDE (default /tmp/landing-aside), a run named in .scratch/resume_run staying; `back` puts them back and
# fails unless no tracked file is missing then. From the repository root:
#
#   bash lab/studies/landing/aside.sh out      # before the first poll.sh call
#   bash lab/studies/landing/aside.sh back     # after the last
set -u
ASIDE=${ASIDE:-/tmp/landing-aside}
travels() { git ls-files -z | du --files0-from=- -c 2>/dev/null | tail -1 | cut -f1; }
case "${1:-}" in
  out)
    if [ -e "$ASIDE" ] && [ -n "$(ls -A "$ASIDE")" ]; then
      echo "aside.sh: $ASIDE holds files already (an earlier 'out' not put back?): run 'back' first" >&2; exit 2
    fi
    mkdir -p "$ASIDE/runs" || exit 2
    keep=$(cat .scratch/resume_run 2>/dev/null)
    for d in data/explorations data/checks; do [ -d "$d" ] && mv "$d" "$ASIDE/"; done
    for r in data/runs/*/; do
      r=${r%/}; [ -d "$r" ] && [ "$(basename "$r")" != "$keep" ] && mv "$r" "$ASIDE/runs/"
    done
    echo "aside in $ASIDE; the tracked files left take $(travels) KiB on disk"
    ;;
  back)
    [ -d "$ASIDE" ] || { echo "aside.sh: nothing aside in $ASIDE" >&2; exit 2; }
    for d in explorations checks; do [ -d "$ASIDE/$d" ] && mv "$ASIDE/$d" data/; done
    for r in "$ASIDE"/runs/*/; do [ -d "$r" ] && mv "${r%/}" data/runs/; done
    rmdir "$ASIDE/runs" "$ASIDE" 2>/dev/null
    if missing=$(git ls-files --deleted | head -3) && [ -n "$missing" ]; then
      echo "aside.sh: tracked files still missing, e.g. $missing" >&2; exit 1
    fi
    echo "back: no tracked file missing"
    ;;
  *) echo "usage: aside.sh out|back" >&2; exit 2 ;;
esac
