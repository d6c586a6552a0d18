#!/usr/bin/env python3
"""Times the whole miam-hook process against a Python no-op hook, alternating
the two in the same run, on the payloads the issues name:

  write    PreToolUse Write of a 400-line Python file (issue 2)
  heredoc  PreToolUse Bash writing a 30-line here-doc into a source file (issue 6)
  wakeup   UserPromptSubmit of a task notification whose output holds a valide
           answer: the hook reads it and injects the conduct (issue 6)

Usage: .ci/hook-timing.py [runs] [scenario ...]   (default 200 runs, every scenario)
Prints, per scenario, the medians, p90s and the ratio miam-hook / python no-op.

With HOOK_A and HOOK_B set to two miam-hook binaries, times them against each
other instead (A B, then B A, … with the no-op after each pair): on a busy
machine only their ratio means anything, and each child's CPU time (user +
sys), which scheduling noise disturbs less, is reported too. E.g.
  git stash; go build -o /tmp/a ./cmd/miam-hook; git stash pop; go build -o /tmp/b ./cmd/miam-hook
  HOOK_A=/tmp/a HOOK_B=/tmp/b .ci/hook-timing.py 500 write heredoc
"""
import json, os, resource, statistics, subprocess, sys, tempfile, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from build_hook import build_hook

runs = int(sys.argv[1]) if len(sys.argv) > 1 else 200
wanted = sys.argv[2:] or ["write", "heredoc", "wakeup"]
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
work = tempfile.mkdtemp(prefix="miam-timing-")
if os.environ.get("HOOK_A") and os.environ.get("HOOK_B"):
    bins = {"A": os.environ["HOOK_A"], "B": os.environ["HOOK_B"]}
else:
    bins = {"miam-hook": os.path.join(work, "miam-hook")}
    build_hook(root, bins["miam-hook"])  # as README's install builds it
proj = os.path.join(work, "proj")
os.makedirs(os.path.join(proj, "src"))
# Large budgets and no plan rule, so every call is charged the same way and
# never denied: the figure is the common case.
os.makedirs(os.path.join(proj, ".miam", "state"))
with open(os.path.join(proj, ".miam", "config.yaml"), "w") as f:
    f.write("budgets:\n  code_lines: 100000000\nrules:\n  plan: off\n")
sid = "timing"
state_path = os.path.join(proj, ".miam", "state", f"session-{sid}.json")
base = {"session_id": sid, "transcript_path": "/dev/null", "cwd": proj}


def py_lines(n):
    lines = []
    for i in range(n // 4):
        lines += [f"def f{i}(x):", f'    """Return x plus {i}."""', f"    return x + {i}", ""]
    return "\n".join(lines) + "\n"


def write_payload():
    return dict(base, hook_event_name="PreToolUse", tool_name="Write", tool_use_id="toolu_t",
                tool_input={"file_path": os.path.join(proj, "src", "big.py"), "content": py_lines(400)})


def heredoc_payload():
    body = py_lines(30)
    return dict(base, hook_event_name="PreToolUse", tool_name="Bash", tool_use_id="toolu_h",
                tool_input={"command": f"cat > src/gen.py <<'EOF'\n{body}EOF", "description": "write gen.py"})


# The wake-up consumes the wait it ends: the state before it is put back
# before each run, outside the timed span.
wake_state = {"schema": 1, "session_id": sid, "turn": 1, "turn_open": True, "since_delegation": 24,
              "this_turn": {"written": {"code": 24}}, "session": {"written": {"code": 24}},
              "waits": {"d1": {"reprise": "miam attendre d1", "launched": True, "tool_use_id": "toolu_r", "task_id": "b7x2k9q"}}}
task_out = os.path.join(work, "b7x2k9q.output")
with open(task_out, "w") as f:
    f.write(json.dumps({"ok": True, "demande_id": "d1", "etat": "valide", "fin": "valide", "verdict": "valide",
                        "essais": 1, "moteur_final": "local", "sortie": "src/calc.py",
                        "diff": {"files": ["src/calc.py"], "added": 2, "removed": 0}}) + "\n\n[exited with code 0]\n")


def wakeup_payload():
    prompt = (f"<task-notification>\n<task-id>b7x2k9q</task-id>\n<tool-use-id>toolu_r</tool-use-id>\n"
              f"<output-file>{task_out}</output-file>\n<status>completed</status>\n"
              f"<summary>Background command \"wait\" completed (exit code 0)</summary>\n</task-notification>")
    return dict(base, hook_event_name="UserPromptSubmit", prompt=prompt)


def reset_wake_state():
    with open(state_path, "w") as f:
        json.dump(wake_state, f)


scenarios = {
    "write": (write_payload, None, "400-line Write"),
    "heredoc": (heredoc_payload, None, "Bash 30-line here-doc"),
    "wakeup": (wakeup_payload, reset_wake_state, "UserPromptSubmit wake-up"),
}
env = dict(os.environ, CLAUDE_PROJECT_DIR=proj)
noop = [sys.executable, "-c", "import json,sys; json.load(sys.stdin)"]
for name in wanted:
    make, before, label = scenarios[name]
    payload = json.dumps(make()).encode()
    times = {who: [] for who in [*bins, "python no-op"]}
    cpu = {who: [] for who in bins}
    for i in range(runs):
        order = list(bins) if i % 2 == 0 else list(reversed(bins))
        for who in order:
            if before:
                before()
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            out = subprocess.run([bins[who]], input=payload, env=env, capture_output=True, check=True)
            times[who].append((time.perf_counter() - t0) * 1000)
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu[who].append((r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime) * 1000)
            if name == "wakeup" and b"ended valide" not in out.stdout:
                sys.exit(f"the wake-up did not inject the conduct: {out.stdout!r} {out.stderr!r}")
        t0 = time.perf_counter()
        subprocess.run(noop, input=payload, env=env, stdout=subprocess.DEVNULL, check=True)
        times["python no-op"].append((time.perf_counter() - t0) * 1000)
    print(f"== {label} (n={runs})")
    for who, ts in times.items():
        ts.sort()
        print(f"  {who:14s} median {statistics.median(ts):6.2f} ms   p90 {ts[int(len(ts) * 0.9)]:6.2f} ms")
    m = {k: statistics.median(v) for k, v in times.items()}
    c = {k: statistics.median(v) for k, v in cpu.items()}
    for who in bins:
        print(f"  ratio {who} / python no-op (medians): {m[who] / m['python no-op']:.2f}   child CPU median {c[who]:.2f} ms")
    if "B" in bins:
        print(f"  ratio B / A: wall {m['B'] / m['A']:.3f}, child CPU {c['B'] / c['A']:.3f}")
