"""The sm_90a branch's last step, typed once for the tests that pin it: an expectation written down, not read from
the manifest the tests check. A new step at the branch's end renames both here."""

SM90_END = "older_queue_under_8_pairs"
SM90_END_PARENT = "counter_tile_from_2k_d64"  # its parent, what the sustained mode times beside it
