"""Layer 2, the measuring side: correctness (`check`), device timing (`timing`), clocks
(`clocks`), the peers (`peers`), statistics (`stats`, numpy/scipy only), Nsight Compute
(`profile`) and run records (`records`). Imports `lab.kernels` only."""
