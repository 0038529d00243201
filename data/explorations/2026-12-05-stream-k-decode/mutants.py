"""Deliberate bugs in the draft step 68's partition (fa/decode_spans.cuh, host side), each edited into a copy of the
tree with stream_k_spans.patch applied, and tests/test_decode_spans.py run against it: a mutant is killed where the
test fails. Prints one line a mutant and the count. From the repository root (the committed tree, patch not applied):

    python data/explorations/2026-12-05-stream-k-decode/mutants.py > data/explorations/2026-12-05-stream-k-decode/mutants.txt

Nothing in the working tree changes: the copy is `git archive HEAD` in a temporary folder.
"""
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
HEADER = "kernels/include/fa/decode_spans.cuh"

# (name, the line as the patch writes it, the line as the mutant writes it, expected: "killed" or why it survives)
MUTANTS = [
    ("span count rounded up", "const long long most = N / kMinSpanTiles;",
     "const long long most = (N + kMinSpanTiles - 1) / kMinSpanTiles;", "killed"),
    ("span count allowed to be 0", "most < ctas ? (most > 0 ? most : 1) : ctas", "most < ctas ? most : ctas",
     "killed"),
    ("slot rule flipped", "2 * c + (first_segment ? 0 : 1)", "2 * c + (first_segment ? 1 : 0)", "killed"),
    ("the span of a tile one off", "((t + 1) * G - 1) / N", "((t + 1) * G) / N", "killed"),
    ("the merge's first-boundary test <= for <", "if (*P < span_start(N, G, c - 1)) return false;",
     "if (*P <= span_start(N, G, c - 1)) return false;", "killed"),
    ("span starts rounded up", "return N * c / G;", "return (N * c + G - 1) / G;", "killed"),
    ("whole without the tile count", "c.off == 0 && tiles == t}", "c.off == 0}", "killed"),
    ("a segment's end not clamped to the length", "(c.off + tiles) * BC < n ? (c.off + tiles) * BC : n",
     "(c.off + tiles) * BC", "killed"),
    ("the cursor moves on after the span's last segment", "if (c.off == t && c.left > 0) {", "if (c.off == t) {",
     "survives, equivalent: with left 0 the span is over and the moved cursor is never read"),
]


def run_test(tree: Path) -> tuple[bool, str]:
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                        "tests/test_decode_spans.py"], cwd=tree, capture_output=True, text=True,
                       env={"PATH": subprocess.os.environ["PATH"], "PYTHONPATH": str(tree),
                            "HOME": subprocess.os.environ.get("HOME", "/tmp")})
    tail = (r.stdout.strip().splitlines() or ["(no output)"])[-1]
    return r.returncode == 0, tail


def main() -> int:
    with tempfile.TemporaryDirectory() as d:
        tree = Path(d)
        subprocess.run(f"git -C {ROOT} archive HEAD | tar -x -C {tree}", shell=True, check=True)
        subprocess.run(["git", "apply", str(HERE / "stream_k_spans.patch")], cwd=tree, check=True)
        header = tree / HEADER
        original = header.read_text()
        sha = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True).stdout.strip()
        print(f"# tree {sha} with stream_k_spans.patch; test: tests/test_decode_spans.py")
        passed, tail = run_test(tree)
        print(f"unmutated: {'passes' if passed else 'FAILS'} ({tail})")
        if not passed:
            return 1
        killed, unexpected = 0, 0
        for name, old, new, expected in MUTANTS:
            if original.count(old) != 1:
                print(f"{name}: the line to mutate is not in the header once ({original.count(old)} times)")
                return 1
            header.write_text(original.replace(old, new))
            t0 = time.time()
            passed, tail = run_test(tree)
            header.write_text(original)
            outcome = "survived" if passed else "killed"
            killed += not passed
            as_expected = (outcome == "killed") == (expected == "killed")
            unexpected += not as_expected
            print(f"{name}: {outcome} ({tail}; {time.time() - t0:.0f} s){'' if as_expected else '  UNEXPECTED'}"
                  + ("" if expected == "killed" else f" -- {expected}"))
            print(f"    - {old}\n    + {new}")
        print(f"{killed} of {len(MUTANTS)} killed; {unexpected} not as expected")
        return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
