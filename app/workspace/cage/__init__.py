"""The cage: the one place code ourobot did not write runs (setup, an agent's commands, the
test runs and the green proof), through one entry, `Cage.run`.

- `entry`: `Cage`, `CageJob`, `CageRun`, the startup check of bubblewrap;
- `mounts`: what a run sees of the machine (an allow-list and a synthesized /etc);
- `toolchain`: the sandbox's PATH and the toolchain folders bound for it;
- `limits`: processes, memory, /tmp, disk and output, each bounded and named when hit;
- `launch`: the run's first process (cgroup, limits, then bubblewrap or a reaper).
"""
