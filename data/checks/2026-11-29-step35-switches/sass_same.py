"""Compile each given kernel file in this tree (/work/main) and in a worktree with switches.patch applied (/tmp/wtq),
nvcc 13.0, sm_90a, and compare their SASS (lab.kernels.switches.same_code: kernel names' file tags aside)."""
import subprocess, sys
sys.path.insert(0, '/work/main')
from lab.kernels import switches
out = []
for f in sys.argv[1:]:
    texts = []
    for root in ('/work/main', '/tmp/wtq'):
        subprocess.run(['/usr/local/cuda/bin/nvcc', '-std=c++17', '-O3', '--expt-relaxed-constexpr', '-gencode', 'arch=compute_90a,code=sm_90a',
                        f'-I{root}/kernels/include', '-cubin', f'{root}/{f}', '-o', '/tmp/same.cubin'], check=True)
        texts.append(subprocess.run(['/work/main/.venv/lib/python3.11/site-packages/nvidia/cu13/bin/cuobjdump', '-sass', '/tmp/same.cubin'],
                                    capture_output=True, text=True).stdout)
    print(f, 'same' if switches.same_code(*texts) else 'DIFFERENT', flush=True)
