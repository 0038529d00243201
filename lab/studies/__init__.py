"""Layer 3, the studies: the stages of a run (`stages`), the knock-outs' factorial
(`factorial`) and autotuning (`tuning`, its own package). Imports `lab.kernels` and
`lab.measure` only."""
