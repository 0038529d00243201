"""Going on with a run that stopped midway (`python -m lab.pipeline --resume RUN_ID`): whether this machine may
measure the rest of it, and the record that it did (resumes.json, which the report's threats to validity read).

    >>> from lab.studies import resume
    >>> resume.resume_here(rec, ["profile"])   # a ValueError naming what differs, else the entry recorded
"""

from __future__ import annotations

from lab.measure import records

# What a run's numbers rest on and a resumed run must share with its start (env.json's keys): the code it
# measures (its commit, and the files themselves: records.code_digest), the toolchain that builds it, and the GPU
# model with its limits. Another GPU of that model, another host or another driver is allowed and recorded
# (resumes.json): a lent machine lost midway is the usual cause.
RESUME_MUST_MATCH = ("git_sha", "code_digest", "nvcc", "torch", "cuda_runtime", "gpu", "compute_capability", "sm_count",
                     "memory_bytes", "l2_bytes", "power_limit_w", "sm_clock_max_mhz")


def resume_here(rec, stages_left: list[str], env_now: dict | None = None) -> dict:
    """Check that run `rec` may go on on this machine and record that it does: a ValueError naming each
    field of RESUME_MUST_MATCH that differs from env.json (a field the run's start did not record is not
    compared), or naming a dirty tree then or now (the sha would not identify the code); else the entry
    appended to the run's resumes.json (when, where, which GPU and driver, the stages still to run) and
    returned. `env_now`: this machine's records.environment()."""
    then = rec.read_json("env.json") if rec.has("env.json") else {}
    now = records.environment() if env_now is None else env_now
    differ = [f"{k} {then[k]!r} at its start, {now.get(k)!r} here" for k in RESUME_MUST_MATCH
              if k in then and then[k] != now.get(k)]
    differ += [f"the working tree was dirty {when}" for when, env in (("at its start", then), ("here", now))
               if env.get("git_dirty")]
    if differ:
        raise ValueError(f"run {rec.run_id} cannot be resumed on this machine: " + "; ".join(differ)
                         + " (a run's stages must measure the same code on the same GPU model)")
    entry = {"utc": now.get("utc"), "host": now.get("host"), "gpu_uuid": now.get("gpu_uuid"),
             "driver": now.get("driver"), "same_gpu": bool(then.get("gpu_uuid"))
             and then.get("gpu_uuid") == now.get("gpu_uuid"), "stages": list(stages_left)}
    resumes = rec.read_json("resumes.json") if rec.has("resumes.json") else []
    rec.write_json("resumes.json", [*resumes, entry])
    return entry
