"""The sm_90a branch's last step, typed once for the tests that pin it: an expectation written down, not read from
the manifest the tests check. A new step at the branch's end renames both here."""

SM90_END = "uniform_row0_d128"
SM90_END_PARENT = "non_causal_kernels_d128"  # its parent, what the sustained mode times beside it
