"""The pipeline with each timing replicate's child process run under cProfile (profile written to
$OUT/r<i>.prof): where a replicate's wall time goes beside the sampled GPU time (issue 21, target 5)."""
import os, subprocess, sys
import lab.studies.replicates as R
from lab import pipeline


def spawn_profiled(run_dir, plan, i, fake=False, progress=print):
    cmd = [sys.executable, "-m", "cProfile", "-o", os.path.join(os.environ["OUT"], f"{plan}_r{i}.prof"),
           "-m", "lab.studies.replicates", str(run_dir), plan, "--replicate", str(i)]
    proc = subprocess.Popen(cmd, cwd=R.REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
    for line in proc.stdout:
        progress(line.rstrip("\n"))
    return proc.wait()


R.run.__defaults__ = (print, spawn_profiled, False, None)
sys.exit(pipeline.main(sys.argv[1:]))
