"""python -m lab.report [RUN_ID] [--reports-dir reports] [--runs-root data/runs] [--base RUN_ID] [--companion RUN_ID]"""
import sys

from lab.report.render import main

sys.exit(main())
