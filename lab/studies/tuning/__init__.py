"""Autotuning a kernel's tile constants on every GPU of a host (`make tune`): the space
(`space`), the search (`search`), one task on one GPU (`worker`), the dispatch table
(`dispatch`), a synthetic backend for CPU runs (`fake`) and the run itself (`run`)."""
