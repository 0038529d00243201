"""The sm_90a branch's last step, typed once for the tests that pin it: an expectation written down, not read from
the manifest the tests check. A new step at the branch's end renames it here."""

SM90_END = "pipeline_state_d128"
