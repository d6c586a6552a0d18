#!/usr/bin/env python3
"""Times the whole miam-hook process on a PreToolUse Write of a 400-line
Python file against a Python no-op hook, alternating the two in the same run.

Usage: .ci/hook-timing.py [runs]   (default 200 of each)
Prints the medians, p90s and the ratio miam-hook / python no-op.
"""
import json, os, statistics, subprocess, sys, tempfile, time

runs = int(sys.argv[1]) if len(sys.argv) > 1 else 200
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
work = tempfile.mkdtemp(prefix="miam-timing-")
hook = os.path.join(work, "miam-hook")
subprocess.run(["go", "build", "-o", hook, "./cmd/miam-hook"], cwd=root, check=True)
proj = os.path.join(work, "proj")
os.makedirs(os.path.join(proj, "src"))
# A large budget so every call is charged the same way and never denied.
os.makedirs(os.path.join(proj, ".miam"))
with open(os.path.join(proj, ".miam", "config.yaml"), "w") as f:
    f.write("budgets:\n  code_lines: 100000000\n")
lines = []
for i in range(100):
    lines += [f"def f{i}(x):", f'    """Return x plus {i}."""', f"    return x + {i}", ""]
payload = json.dumps({
    "session_id": "timing", "transcript_path": "/dev/null", "cwd": proj,
    "hook_event_name": "PreToolUse", "tool_name": "Write", "tool_use_id": "toolu_t",
    "tool_input": {"file_path": os.path.join(proj, "src", "big.py"), "content": "\n".join(lines) + "\n"},
}).encode()
env = dict(os.environ, CLAUDE_PROJECT_DIR=proj)
cmds = {
    "miam-hook": [hook],
    "python no-op": [sys.executable, "-c", "import json,sys; json.load(sys.stdin)"],
}
times = {k: [] for k in cmds}
for _ in range(runs):
    for name, cmd in cmds.items():
        t0 = time.perf_counter()
        subprocess.run(cmd, input=payload, env=env, stdout=subprocess.DEVNULL, check=True)
        times[name].append((time.perf_counter() - t0) * 1000)
for name, ts in times.items():
    ts.sort()
    print(f"{name:14s} median {statistics.median(ts):6.2f} ms   p90 {ts[int(len(ts) * 0.9)]:6.2f} ms   (n={len(ts)}, {len(lines)}-line Write)")
ratio = statistics.median(times["miam-hook"]) / statistics.median(times["python no-op"])
print(f"ratio miam-hook / python no-op (medians): {ratio:.2f}")
