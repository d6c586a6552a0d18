package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"miam/sandbox"
)

func TestDoctor(t *testing.T) {
	works := sandbox.Capabilities{Root: true, Probes: []sandbox.Probe{
		{Backend: "bwrap", OK: true, Path: "/usr/bin/bwrap", Rlimits: "ptrace"},
		{Backend: "native", Reason: "this program does not run the sandbox helper", Fix: "call sandbox.Init() first thing in main"},
		{Backend: "landlock", Reason: "never used as root"},
	}}
	broken := sandbox.Capabilities{Probes: []sandbox.Probe{
		{Backend: "bwrap", Reason: "not found at /usr/bin/bwrap", Fix: "install the 'bubblewrap' package"},
		{Backend: "native", Reason: "not built yet"},
	}}
	inject := func(c sandbox.Capabilities) func(context.Context) sandbox.Capabilities {
		return func(context.Context) sandbox.Capabilities { return c }
	}
	var out bytes.Buffer
	if err := doctor(t.Context(), nil, &out, &out, inject(works)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"bwrap     ok  /usr/bin/bwrap (rlimits set by ptrace)", "native    no  this program does not run the sandbox helper",
		"fix: call sandbox.Init()", "landlock  no  never used as root", "runs in: bwrap", "uid 65534"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	err := doctor(t.Context(), nil, &out, &out, inject(broken))
	if !errors.Is(err, errNoBackend) || !strings.Contains(out.String(), "fix: install the 'bubblewrap' package") {
		t.Errorf("err=%v\n%s", err, out.String())
	}
	out.Reset()
	if err := doctor(t.Context(), []string{"--json"}, &out, &out, inject(works)); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Backend string          `json:"backend"`
		Probes  []sandbox.Probe `json:"probes"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil || got.Backend != "bwrap" || len(got.Probes) != 3 {
		t.Errorf("%v %+v\n%s", err, got, out.String())
	}
}

// TestDoctorProjectWarnings: doctor reports the project's governance
// warnings, in text and JSON, without failing for them.
func TestDoctorProjectWarnings(t *testing.T) {
	proj := t.TempDir()
	writeTestFile(t, filepath.Join(proj, ".miam", "policies.yaml"),
		"rules:\n  - id: all\n    verdict_on_match: block\n    per_session: {max_tool_calls: 100, max_duration_min: 30}\n")
	works := func(context.Context) sandbox.Capabilities {
		return sandbox.Capabilities{Probes: []sandbox.Probe{{Backend: "bwrap", OK: true, Path: "/usr/bin/bwrap"}}}
	}
	var out bytes.Buffer
	if err := doctor(t.Context(), []string{"--dir", proj}, &out, &out, works); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"2 warning(s)", `rule "all" blocks without a tool_pattern`, "caps sessions at 30 min"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := doctor(t.Context(), []string{"--dir", proj, "--json"}, &out, &out, works); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Warnings []string `json:"warnings"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil || len(got.Warnings) != 2 {
		t.Errorf("%v %+v\n%s", err, got, out.String())
	}
	out.Reset()
	if err := doctor(t.Context(), []string{"--dir", t.TempDir()}, &out, &out, works); err != nil || !strings.Contains(out.String(), "no warning") {
		t.Errorf("a project without miam files: err %v\n%s", err, out.String())
	}
}

// The real detection runs and names a reason for each failed probe.
func TestDoctorOnThisMachine(t *testing.T) {
	var out bytes.Buffer
	err := runDoctor(t.Context(), nil, &out, &out)
	if err != nil && !errors.Is(err, errNoBackend) {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "bwrap") {
		t.Errorf("%s", out.String())
	}
}
