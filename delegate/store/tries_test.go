package store

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"miam/delegate/wire"
)

func TestAddListTries(t *testing.T) {
	clk := newClock(t0)
	s := openAt(t, t.TempDir(), clk)
	id, _ := s.Create(ctx(t), "s", "/p", sampleRequest())
	s.SetState(ctx(t), id, wire.EnCours, "")
	fail := Try{
		RequestID: id, Engine: "local", Model: "qwen", InputTokens: 900, OutputTokens: 300,
		Duration:  4200 * time.Millisecond,
		Controls:  []wire.Control{{Nom: "syntaxe", OK: true}, {Nom: "lint", OK: false, Message: "E501 line 3"}},
		StartedAt: t0, EndedAt: t0.Add(4200 * time.Millisecond),
	}
	broke := Try{RequestID: id, Engine: "api", Model: "gpt", ErrorKind: "rate_limited", Error: "429"}
	good := Try{RequestID: id, Engine: "api", Model: "gpt", InputTokens: 1000, OutputTokens: 200, CostUSD: 0.0042, OK: true,
		Controls: []wire.Control{{Nom: "syntaxe", OK: true}}}
	var want []Try
	for i, tr := range []Try{fail, broke, good} {
		clk.Advance(time.Second)
		n, err := s.AddTry(ctx(t), tr)
		if err != nil || n != i+1 {
			t.Fatalf("AddTry %d = %d, %v", i, n, err)
		}
		tr.N = n
		if tr.StartedAt.IsZero() {
			tr.StartedAt, tr.EndedAt = clk.Now(), clk.Now()
		}
		want = append(want, tr)
	}
	got, err := s.ListTries(ctx(t), id)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ListTries (-want +got):\n%s", diff)
	}
	rec, _ := s.Get(ctx(t), id)
	if rec.Attempts != 3 || rec.ProgressStep != "try 3 api/gpt" {
		t.Errorf("record after tries: attempts %d, step %q", rec.Attempts, rec.ProgressStep)
	}

	// A duplicate number is refused; an unknown request too.
	if _, err := s.AddTry(ctx(t), Try{RequestID: id, N: 2, Engine: "x", Model: "y"}); err == nil {
		t.Error("AddTry with a used N: no error")
	}
	if _, err := s.AddTry(ctx(t), Try{RequestID: "dnope", Engine: "x"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("AddTry on unknown request: %v", err)
	}
	// A try after the end still counts (its cost was spent) but is no progress.
	s.Finish(ctx(t), id, wire.Answer{Fin: wire.BesoinClaude, Raison: "sans_progres"})
	if n, err := s.AddTry(ctx(t), Try{RequestID: id, Engine: "api", Model: "gpt", CostUSD: 0.001}); err != nil || n != 4 {
		t.Errorf("AddTry after Finish = %d, %v", n, err)
	}
	if rec, _ := s.Get(ctx(t), id); rec.ProgressStep != "try 3 api/gpt" || rec.Attempts != 4 {
		t.Errorf("after late try: step %q attempts %d", rec.ProgressStep, rec.Attempts)
	}
}

func TestSpentToday(t *testing.T) {
	s := openAt(t, t.TempDir(), newClock(t0))
	id, _ := s.Create(ctx(t), "s", "/p", sampleRequest())
	day1 := time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC)
	day2 := day1.AddDate(0, 0, 1)
	for _, tr := range []Try{
		{Engine: "api", CostUSD: 0.50, StartedAt: day1.Add(-time.Millisecond)}, // last ms of 13 March
		{Engine: "api", CostUSD: 0.25, StartedAt: day1},                        // first ms of 14 March
		{Engine: "api", CostUSD: 0.10, StartedAt: day2.Add(-time.Millisecond)}, // last ms of 14 March
		{Engine: "haiku", CostUSD: 1.00, StartedAt: day1.Add(12 * time.Hour)},
		{Engine: "api", CostUSD: 0.05, StartedAt: day2}, // 15 March
		{Engine: "local", CostUSD: 0, StartedAt: day1.Add(time.Hour)},
	} {
		tr.RequestID, tr.Model = id, "m"
		if _, err := s.AddTry(ctx(t), tr); err != nil {
			t.Fatal(err)
		}
	}
	paris := time.FixedZone("CET", 3600)
	tests := []struct {
		name   string
		engine string
		day    time.Time
		want   float64
	}{
		{name: "api on 14th", engine: "api", day: day1.Add(15 * time.Hour), want: 0.35},
		{name: "api on 13th", engine: "api", day: day1.Add(-time.Hour), want: 0.50},
		{name: "api on 15th", engine: "api", day: day2, want: 0.05},
		{name: "all engines on 14th", engine: "", day: day1, want: 1.35},
		{name: "haiku on 14th", engine: "haiku", day: day1, want: 1.00},
		{name: "local is free", engine: "local", day: day1, want: 0},
		{name: "unknown engine", engine: "nope", day: day1, want: 0},
		// 00:30 in UTC+1 on the 15th is 23:30 UTC on the 14th.
		{name: "day given in another zone", engine: "api", day: time.Date(2026, 3, 15, 0, 30, 0, 0, paris), want: 0.35},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.SpentToday(ctx(t), tt.engine, tt.day)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("SpentToday(%q, %s) = %v, want %v", tt.engine, tt.day, got, tt.want)
			}
		})
	}
}

func TestStats(t *testing.T) {
	s := openAt(t, t.TempDir(), newClock(t0))
	// Each request is a ladder of tries: engine/model and pass or fail.
	type step struct {
		engine, model string
		ok            bool
		cost          float64
	}
	ladders := [][]step{
		{{"local", "qwen", true, 0}},                                                           // qwen first try
		{{"local", "qwen", false, 0}, {"local", "qwen", true, 0}},                              // qwen repair
		{{"local", "qwen", false, 0}, {"local", "qwen", false, 0}, {"api", "gpt", true, 0.02}}, // escalated: gpt first try
		{{"api", "gpt", false, 0.01}, {"api", "gpt", true, 0.01}},                              // gpt repair
		{{"api", "gpt", true, 0.03}},                                                           // gpt first try
		{{"haiku", "claude-haiku", false, 0.001}},                                              // failed outright
	}
	for _, ladder := range ladders {
		id, _ := s.Create(ctx(t), "s", "/p", sampleRequest())
		for _, st := range ladder {
			if _, err := s.AddTry(ctx(t), Try{RequestID: id, Engine: st.engine, Model: st.model, OK: st.ok,
				CostUSD: st.cost, InputTokens: 100, OutputTokens: 10, Duration: time.Second}); err != nil {
				t.Fatal(err)
			}
		}
	}
	got, err := s.Stats(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	want := []ModelStats{
		{Engine: "api", Model: "gpt", Requests: 3, Tries: 4, Successes: 3, FirstTry: 2, Repairs: 1,
			InputTokens: 400, OutputTokens: 40, CostUSD: 0.07, Duration: 4 * time.Second},
		{Engine: "haiku", Model: "claude-haiku", Requests: 1, Tries: 1, Successes: 0, FirstTry: 0, Repairs: 0,
			InputTokens: 100, OutputTokens: 10, CostUSD: 0.001, Duration: time.Second},
		{Engine: "local", Model: "qwen", Requests: 3, Tries: 5, Successes: 2, FirstTry: 1, Repairs: 1,
			InputTokens: 500, OutputTokens: 50, CostUSD: 0, Duration: 5 * time.Second},
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("Stats (-want +got):\n%s", diff)
	}
}
