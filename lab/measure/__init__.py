"""Layer 2, the measuring side: correctness (`check`, `decode_check`; compute-sanitizer over the steps:
`sanitize`), device timing and the stopping rule (`timing`), NVML clocks (`clocks`), the harness checked
against triton's (`crossval`), the peers (`peers`), statistics (`stats`, numpy/scipy only; `parallel` spreads its per-row bootstraps over
the cores), Nsight Compute (`profile`; its processes: `ncu_process`) and run records (`records`). Imports `lab.kernels` only."""
