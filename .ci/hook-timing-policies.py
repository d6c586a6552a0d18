#!/usr/bin/env python3
"""Times the whole miam-hook process with a 30-rule .miam/policies.yaml
loaded, against a Python no-op hook, alternating the two in the same run
(as .ci/hook-timing.py does without policies).

Usage: .ci/hook-timing-policies.py [runs]   (default 200 of each)
miam-hook runs in a project with the 30 rules and, as "no policies", in the
same project without the file. Two calls are timed: a mutating Bash command (every rule is matched, the
counters change, so the session state is written on every call; one rule
caps the cost, so the transcript is read too) and the 400-line Python Write
of hook-timing.py. Prints medians, p90s and the ratio miam-hook / python.

With HOOK_A and HOOK_B set to two miam-hook binaries, times them against each
other instead (each in its own session of the policies project, alternating
with the Python no-op) and prints the ratio B / A:
  HOOK_A=/tmp/a HOOK_B=/tmp/b .ci/hook-timing-policies.py 300
"""
import json, os, statistics, subprocess, sys, tempfile, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from build_hook import build_hook

runs = int(sys.argv[1]) if len(sys.argv) > 1 else 200
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
work = tempfile.mkdtemp(prefix="miam-timing-policies-")
ab = os.environ.get("HOOK_A") and os.environ.get("HOOK_B")
if ab:
    hook = os.environ["HOOK_A"]
else:
    hook = os.path.join(work, "miam-hook")
    build_hook(root, hook)  # as README's install builds it
proj = os.path.join(work, "proj")
os.makedirs(os.path.join(proj, "src"))
os.makedirs(os.path.join(proj, ".miam"))
with open(os.path.join(proj, ".miam", "config.yaml"), "w") as f:
    f.write("budgets:\n  code_lines: 100000000\nrules:\n  plan: off\n")  # allowed, like hook-timing.py

# 30 rules of every kind, with caps high enough never to trip during the run.
rules = []
for i, prefix in enumerate(["git push", "rm", "kubectl delete", "terraform apply", "npm publish",
                            "docker push", "helm upgrade", "gh release", "aws s3 rm", "psql"]):
    rules.append(f'  - id: approve-{i}\n    tool_pattern: "Bash({prefix}:*)"\n    require_approval: true\n')
for i, glob in enumerate(["src/*", "src/**/*.go", "*.py", "docs/**", "/etc/*", "migrations/*.sql",
                          "deploy/**", ".github/**", "Makefile", "**/*.lock"]):
    rules.append(f'  - id: warn-{i}\n    verdict_on_match: warn\n    reason_template: "{{tool}} writes {{target}}"\n'
                 f'    tool_pattern: "Write({glob})"\n')
for i in range(5):
    rules.append(f'  - id: cool-{i}\n    verdict_on_match: block\n    tool_pattern: "Bash(cmd{i}:*)"\n'
                 f'    cooldown_after: {{count: 1000000, minutes: 1}}\n')
for i, pat in enumerate(["Bash", "Write", "Edit", "*"]):
    rules.append(f'  - id: budget-{i}\n    verdict_on_match: block\n    tool_pattern: "{pat}"\n'
                 f'    per_session: {{max_tool_calls: 100000000, max_writes: 100000000, max_duration_min: 100000}}\n')
rules.append('  - id: cost\n    verdict_on_match: warn\n    per_session: {max_cost_usd: 1000000}\n')
assert len(rules) == 30
with open(os.path.join(proj, ".miam", "policies.yaml"), "w") as f:
    f.write("rules:\n" + "".join(rules))

transcript = os.path.join(work, "transcript.jsonl")
with open(transcript, "w") as f:
    for i in range(200):
        f.write(json.dumps({"type": "assistant", "message": {"id": f"msg_{i}", "model": "claude-sonnet-4-5",
                "usage": {"input_tokens": 1000, "output_tokens": 200}, "content": [{"type": "text", "text": "x" * 500}]}}) + "\n")

lines = []
for i in range(100):
    lines += [f"def f{i}(x):", f'    """Return x plus {i}."""', f"    return x + {i}", ""]
def payload(tool, tool_input):
    return json.dumps({
        "session_id": "timing", "transcript_path": transcript, "cwd": proj,
        "hook_event_name": "PreToolUse", "tool_name": tool, "tool_use_id": "toolu_t", "tool_input": tool_input,
    }).encode()
payloads = {
    "Bash touch": payload("Bash", {"command": "touch notes.txt", "description": "Touch"}),
    "400-line Write": payload("Write", {"file_path": os.path.join(proj, "src", "big.py"), "content": "\n".join(lines) + "\n"}),
}
# The same project without policies.yaml, to see what the policies add.
bare = os.path.join(work, "bare")
os.makedirs(os.path.join(bare, "src"))
os.makedirs(os.path.join(bare, ".miam"))
with open(os.path.join(bare, ".miam", "config.yaml"), "w") as f:
    f.write("budgets:\n  code_lines: 100000000\n")
env = dict(os.environ, CLAUDE_PROJECT_DIR=proj)
cmds = {
    "miam-hook": ([hook], env),
    "no policies": ([hook], dict(os.environ, CLAUDE_PROJECT_DIR=bare)),
    "python no-op": ([sys.executable, "-c", "import json,sys; json.load(sys.stdin)"], env),
}
# A and B keep their own session's state: one binary's counts must not be
# the other's (and an older binary may lay its state out differently).
session = {}
if ab:
    cmds = {
        "A": ([os.environ["HOOK_A"]], env),
        "B": ([os.environ["HOOK_B"]], env),
        "python no-op": cmds["python no-op"],
    }
    session = {"A": b'"session_id": "timing-a"', "B": b'"session_id": "timing-b"'}
# One call first, to check the policies load (a broken file would fail open
# and time nothing useful).
out = subprocess.run([hook], input=payloads["Bash touch"], env=env, capture_output=True, check=True).stdout
if b"not applied" in out:
    sys.exit(f"policies.yaml did not load: {out.decode()}")
for label, data in payloads.items():
    times = {k: [] for k in cmds}
    for _ in range(runs):
        for name, (cmd, cenv) in cmds.items():
            d = data.replace(b'"session_id": "timing"', session[name]) if name in session else data
            t0 = time.perf_counter()
            subprocess.run(cmd, input=d, env=cenv, stdout=subprocess.DEVNULL, check=True)
            times[name].append((time.perf_counter() - t0) * 1000)
    for name, ts in times.items():
        ts.sort()
        print(f"{label:15s} {name:14s} median {statistics.median(ts):6.2f} ms   p90 {ts[int(len(ts) * 0.9)]:6.2f} ms   (n={len(ts)}, 30 rules)")
    py = statistics.median(times["python no-op"])
    if ab:
        a, b = statistics.median(times["A"]), statistics.median(times["B"])
        print(f"{label:15s} ratio A / python no-op {a / py:.2f}, B / python no-op {b / py:.2f}, B / A {b / a:.3f}")
    else:
        print(f"{label:15s} ratio miam-hook / python no-op (medians): {statistics.median(times['miam-hook']) / py:.2f}")
