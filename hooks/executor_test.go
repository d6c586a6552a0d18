package hooks

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"miam/budgets"
	"miam/delegate/wire"
)

func TestExecutorLine(t *testing.T) {
	now := time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC)
	const proj = "/home/u/proj"
	local := func(ready bool, reason string) wire.EngineStatus {
		return wire.EngineStatus{Name: "local", Ready: ready, Model: "qwen2.5-coder:7b", Reason: reason}
	}
	api := func(ready bool, projects ...string) wire.EngineStatus {
		return wire.EngineStatus{Name: "api", Ready: ready, Model: "qwen/qwen3-coder", Projects: projects}
	}
	haiku := wire.EngineStatus{Name: "haiku", Model: "claude-haiku-4-5", Reason: "no key"}
	fresh := func(engines ...wire.EngineStatus) *wire.Status {
		return &wire.Status{Updated: now.Add(-30 * time.Second), Engines: engines}
	}
	tests := []struct {
		name   string
		status *wire.Status // nil: missing
		now    time.Time
		want   string
	}{
		{name: "fresh local ready", status: fresh(local(true, ""), api(true, proj), haiku), now: now,
			want: "Executor: local (qwen2.5-coder:7b) is ready."},
		{name: "local not ready, api allowed", status: fresh(local(false, "no model loaded"), api(true, "/other", proj), haiku), now: now,
			want: "Executor: api (OpenRouter, model qwen/qwen3-coder), this project is allowed."},
		{name: "benchmark holds the GPU, api allowed", status: fresh(local(false, "benchmark holds the GPU"), api(true, proj), haiku), now: now,
			want: "Executor: api (OpenRouter, model qwen/qwen3-coder), this project is allowed."},
		{name: "api not allowed for this project", status: fresh(local(false, "no model loaded"), api(true, "/other"), haiku), now: now,
			want: "Executor: a Haiku subagent (no local model ready, API not allowed for this project): deleguer will hand the bout back as a ready Agent call."},
		{name: "api allowed but over its cap", status: fresh(local(false, "benchmark holds the GPU"),
			wire.EngineStatus{Name: "api", Reason: "daily cap reached (2.10 of 2.00 USD)", Projects: []string{proj}}, haiku), now: now,
			want: "Executor: a Haiku subagent (a benchmark holds the GPU, API unavailable: daily cap reached (2.10 of 2.00 USD)): deleguer will hand the bout back as a ready Agent call."},
		{name: "stale", status: &wire.Status{Updated: now.Add(-5 * time.Minute), Engines: []wire.EngineStatus{local(true, "")}}, now: now,
			want: "Executor: unknown (the daemon's status is 5 min old; deleguer will tell)."},
		{name: "just under two minutes is fresh", status: &wire.Status{Updated: now.Add(-119 * time.Second), Engines: []wire.EngineStatus{local(true, "")}}, now: now,
			want: "Executor: local (qwen2.5-coder:7b) is ready."},
		{name: "missing", now: now,
			want: "Executor: unknown (the daemon's status is missing; deleguer will tell)."},
		{name: "no clock", status: fresh(local(true, "")),
			want: "Executor: unknown (no clock to date the daemon's status; deleguer will tell)."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			env := Env{Project: proj, Now: tt.now, Executors: func() (wire.Status, bool) {
				calls++
				if tt.status == nil {
					return wire.Status{}, false
				}
				return *tt.status, true
			}}
			if d := cmp.Diff(tt.want, executorLine(env)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			if calls != 1 {
				t.Errorf("loader called %d times, want 1", calls)
			}
		})
	}
}

// TestExecutorsLoadedOnlyOnDeny: the status file is read for a delegation
// deny, never for a call that passes (the hot path).
func TestExecutorsLoadedOnlyOnDeny(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lines int
		want  int
	}{
		{name: "small write passes", lines: 5, want: 0},
		{name: "write over budget denied", lines: 40, want: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			env := Env{Project: "/p", Files: rulesProject(), Executors: func() (wire.Status, bool) {
				calls++
				return wire.Status{}, false
			}}
			ev := toolEvent(PreToolUse, "Write", "tw", WriteInput{FilePath: "/p/src/x.py", Content: assigns("x", tc.lines)})
			v, _ := Decide(ev, budgets.State{}, env)
			if calls != tc.want {
				t.Errorf("loader called %d times, want %d (verdict %v)", calls, tc.want, v.Decision)
			}
			if tc.want == 1 && !strings.Contains(v.Reason, "Executor: unknown (the daemon's status is missing") {
				t.Errorf("deny reason lacks the executor line:\n%s", v.Reason)
			}
		})
	}
}
