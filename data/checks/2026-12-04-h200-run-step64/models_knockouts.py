"""Steps 63 and 64 at the models set's rows, through their knock-outs in the sm_90a end (the models set times the
end and its knock-outs, not the steps themselves): paired hot and cold speedups with 95 % intervals over the run's
replicates (lab.report.load.RunData.speedup). > 1: the end faster than the end without the switch.

    PYTHONPATH=. python data/checks/2026-12-04-h200-run-step64/models_knockouts.py 20261204T122039Z-b30c064
"""
import sys

from lab.measure import records
from lab.report.load import RunData

END = "mirrored_second_tile"
SWITCHES = ("counter_tile_causal_d64", "mirrored_second_tile")


def main() -> None:
    """The table (a function, so that the worker processes lab.report's parallel map starts can import this file)."""
    data = RunData(records.RunRecord.open(sys.argv[1]))
    print(f"{END} over {END}~no_<switch>, run {sys.argv[1]}")
    for switch in SWITCHES:
        for shape in data.shapes:
            for mode in ("hot", "cold"):
                ci = data.speedup(END, f"{END}~no_{switch}", shape, mode)
                if ci:
                    print(f"no_{switch:26s} {str(shape):52s} {mode:5s} {ci.ratio:.3f}x [{ci.lo:.3f}, {ci.hi:.3f}]")


if __name__ == "__main__":
    main()
