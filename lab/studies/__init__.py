"""Layer 3, the studies: what a run measures and in which order.

`params` (a run's parameters as its record holds them), `shapes` (the shape sets, their scopes
and the headline shape), `measure_shape` (one shape: every implementation interleaved until the
stopping rule), `stages` (build, correctness, timing, factorial, profile), `resume` (whether a stopped
run may go on on this machine, and the record that it did), `profiling` (which
shapes and implementations the profile stage gives Nsight Compute), `compare` (the regression
gate between runs), `factorial` (the knock-outs' 2^4 factorial) and `tuning` (autotuning, its
own package). Imports `lab.kernels` and `lab.measure` only.
"""
