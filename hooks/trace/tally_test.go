package trace

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func line(r Record) string { return string(r.Append(nil)) }

func TestRead(t *testing.T) {
	at := func(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }
	call := func(min int, dec, rule string) Record {
		return Record{Time: at(min), Session: "s", Event: PreToolUse, Host: "claude", Tool: "Bash", Args: "ab", Decision: dec, Rule: rule}
	}
	measured := call(5, None, "")
	measured.Measured = []string{"write_budget"}
	unchecked := call(6, None, "")
	unchecked.Unchecked = true
	tests := []struct {
		name   string
		ledger string
		want   Tally
	}{
		{name: "empty", ledger: "", want: Tally{Rules: []RuleCount{}}},
		{
			name: "calls, stops, rules",
			ledger: line(call(1, Deny, "tool_policy")) + line(call(2, None, "")) + line(call(3, Deny, "write_budget")) +
				line(call(4, Deny, "tool_policy")) + line(call(0, Ask, "policies:push")) + line(measured) + line(unchecked) +
				line(call(7, Allow, "policies:push")) +
				line(Record{Time: at(8), Session: "s", Event: Stop, Host: "claude", Decision: Deny, Rule: "report"}) +
				line(Record{Time: at(9), Session: "s", Event: Stop, Host: "claude", Decision: None}) +
				line(Record{Time: at(10), Session: "s", Event: SubagentStop, Host: "claude", Decision: None}) +
				line(Record{Time: at(11), Session: "s", Event: "SessionStart", Host: "opencode", Decision: None}),
			want: Tally{Evaluated: 7, Denied: 3, Asked: 1, BlockRate: 3.0 / 7, Unchecked: 1, Stops: 3, StopsBlocked: 1,
				Rules: []RuleCount{{Rule: "tool_policy", Denies: 2}, {Rule: "write_budget", Denies: 1, Measured: 1}, {Rule: "report", Denies: 1},
					{Rule: "policies:push", Asks: 1}},
				Hosts: map[string]int{"claude": 11, "opencode": 1}, First: at(0), Last: at(11)},
		},
		{
			name: "corrupt lines skipped and counted",
			ledger: "garbage\n" + line(call(1, Deny, "tool_policy")) + "\n   \n" + `{"time":"2026-11-29T22:00:00Z","event":"Pre` + "\n" +
				strings.Repeat("x", maxRead+10) + "\n" + line(call(2, None, "")) + `{"decision":"deny"}`,
			want: Tally{Evaluated: 2, Denied: 1, BlockRate: 0.5, Corrupt: 4,
				Rules: []RuleCount{{Rule: "tool_policy", Denies: 1}}, Hosts: map[string]int{"claude": 2}, First: at(1), Last: at(2)},
		},
		{
			name:   "last line without newline",
			ledger: strings.TrimSuffix(line(call(1, Deny, "tool_policy")), "\n"),
			want: Tally{Evaluated: 1, Denied: 1, BlockRate: 1, Rules: []RuleCount{{Rule: "tool_policy", Denies: 1}},
				Hosts: map[string]int{"claude": 1}, First: at(1), Last: at(1)},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Read(strings.NewReader(tc.ledger))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("Read (-want +got):\n%s", d)
			}
		})
	}
}

func TestReadError(t *testing.T) {
	boom := errors.New("boom")
	got, err := Read(readerThenError{strings.NewReader(line(Record{Time: t0, Event: Stop, Decision: None})), boom})
	if !errors.Is(err, boom) {
		t.Fatalf("err %v, want %v", err, boom)
	}
	if got.Stops != 1 {
		t.Errorf("tally so far lost: %+v", got)
	}
}

type readerThenError struct {
	r   *strings.Reader
	err error
}

func (r readerThenError) Read(p []byte) (int, error) {
	if r.r.Len() == 0 {
		return 0, r.err
	}
	return r.r.Read(p)
}

// FuzzRead: a ledger of any bytes tallies without panic or error, every
// line counted once at most.
func FuzzRead(f *testing.F) {
	f.Add([]byte(line(Record{Time: t0, Event: PreToolUse, Decision: Deny, Rule: "r"}) + "garbage\n"))
	f.Add([]byte("\n\n{}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := Read(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		lines := bytes.Count(data, []byte("\n")) + 1
		if got.Evaluated+got.Unchecked+got.Stops+got.Corrupt > lines {
			t.Fatalf("%d lines tallied as %+v", lines, got)
		}
		if got.BlockRate < 0 || got.BlockRate > 1 {
			t.Fatalf("block rate %v", got.BlockRate)
		}
	})
}
