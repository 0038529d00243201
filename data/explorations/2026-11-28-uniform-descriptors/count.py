import sys
from lab.kernels import sass_mix
from lab.studies.sass_compare import compare, table, HEADER
for f in sys.argv[1:]:
    r = compare("x", open(f).read())
    print(f)
    for row in table(r): print(" | ".join(row[1:]))
