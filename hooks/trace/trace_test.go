package trace

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

var t0 = time.Date(2026, 11, 29, 22, 0, 0, 123456789, time.UTC)

func TestAppend(t *testing.T) {
	paris := time.FixedZone("CET", 3600)
	long := strings.Repeat("é", 200) // 400 bytes, 2-byte runes
	tests := []struct {
		name string
		rec  Record
		want string
	}{
		{
			name: "denied call",
			rec: Record{Time: t0, Session: "s1", Event: PreToolUse, Host: "claude", Tool: "Bash",
				Args: "0123456789abcdef0123456789abcdef", Decision: Deny, Rule: "tool_policy"},
			want: `{"time":"2026-11-29T22:00:00.123456789Z","session":"s1","event":"PreToolUse","host":"claude","tool":"Bash","args":"0123456789abcdef0123456789abcdef","decision":"deny","rule":"tool_policy"}`,
		},
		{
			name: "no opinion, subagent, local time made UTC",
			rec:  Record{Time: t0.In(paris), Session: "s1", Event: PreToolUse, Host: "opencode", Agent: "Explore", Tool: "Read", Args: "ab", Decision: None},
			want: `{"time":"2026-11-29T22:00:00.123456789Z","session":"s1","event":"PreToolUse","host":"opencode","agent":"Explore","tool":"Read","args":"ab","decision":"none"}`,
		},
		{
			name: "blocked stop",
			rec:  Record{Time: t0, Session: "s1", Event: Stop, Host: "claude", Decision: Deny, Rule: "report"},
			want: `{"time":"2026-11-29T22:00:00.123456789Z","session":"s1","event":"Stop","host":"claude","decision":"deny","rule":"report"}`,
		},
		{
			name: "measured",
			rec:  Record{Time: t0, Session: "s1", Event: PreToolUse, Host: "claude", Tool: "Write", Decision: None, Measured: []string{"docs", "write_budget"}},
			want: `{"time":"2026-11-29T22:00:00.123456789Z","session":"s1","event":"PreToolUse","host":"claude","tool":"Write","decision":"none","measured":["docs","write_budget"]}`,
		},
		{
			name: "unchecked",
			rec:  Record{Time: t0, Session: "s1", Event: PreToolUse, Host: "copilot", Tool: "Write", Decision: None, Unchecked: true},
			want: `{"time":"2026-11-29T22:00:00.123456789Z","session":"s1","event":"PreToolUse","host":"copilot","tool":"Write","decision":"none","unchecked":true}`,
		},
		{
			name: "long fields cut at a rune boundary",
			rec:  Record{Time: t0, Session: long, Event: PreToolUse, Host: "claude", Tool: "x" + long, Decision: None},
			want: `{"time":"2026-11-29T22:00:00.123456789Z","session":"` + strings.Repeat("é", 64) + `","event":"PreToolUse","host":"claude","tool":"x` + strings.Repeat("é", 63) + `","decision":"none"}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := string(tc.rec.Append([]byte("prev\n")))
			if d := cmp.Diff("prev\n"+tc.want+"\n", got); d != "" {
				t.Errorf("Append (-want +got):\n%s", d)
			}
		})
	}
}

// TestAppendNeverOverflows feeds the worst fields: every byte escaped to
// \u00XX, many measured rules. The line stays one valid record under
// MaxLine.
func TestAppendNeverOverflows(t *testing.T) {
	worst := strings.Repeat("\x01<", 5000)
	many := make([]string, 50)
	for i := range many {
		many[i] = worst
	}
	rec := Record{Time: t0, Session: worst, Event: worst, Host: worst, Agent: worst, Tool: worst, Args: worst,
		Decision: Deny, Rule: worst, Measured: many}
	line := rec.Append(nil)
	if len(line) > MaxLine {
		t.Fatalf("line of %d bytes, over MaxLine %d", len(line), MaxLine)
	}
	if bytes.Count(line, []byte("\n")) != 1 || line[len(line)-1] != '\n' {
		t.Fatalf("not one line: %q", line)
	}
	got, err := Decode(line)
	if err != nil {
		t.Fatal(err)
	}
	if got.Decision != Deny || got.Rule == "" || len(got.Measured) != maxRules {
		t.Errorf("cut too much: %+v", got)
	}
}

func TestDecode(t *testing.T) {
	tests := []struct {
		name    string
		line    string
		want    Record
		wantErr bool
	}{
		{name: "record", line: `{"time":"2026-11-29T22:00:00Z","session":"s","event":"PreToolUse","host":"claude","tool":"Bash","args":"ab","decision":"deny","rule":"tool_policy"}` + "\n",
			want: Record{Time: t0.Truncate(time.Second), Session: "s", Event: PreToolUse, Host: "claude", Tool: "Bash", Args: "ab", Decision: Deny, Rule: "tool_policy"}},
		{name: "unknown field tolerated", line: `{"time":"2026-11-29T22:00:00Z","event":"Stop","decision":"none","later":{"x":1}}`,
			want: Record{Time: t0.Truncate(time.Second), Event: Stop, Decision: None}},
		{name: "empty", line: "", wantErr: true},
		{name: "null", line: "null", wantErr: true},
		{name: "array", line: "[]", wantErr: true},
		{name: "torn", line: `{"time":"2026-11-29T22:00:00Z","event":"Pre`, wantErr: true},
		{name: "no time", line: `{"event":"Stop","decision":"none"}`, wantErr: true},
		{name: "bad time", line: `{"time":"yesterday","event":"Stop","decision":"none"}`, wantErr: true},
		{name: "no event", line: `{"time":"2026-11-29T22:00:00Z","decision":"none"}`, wantErr: true},
		{name: "unknown decision", line: `{"time":"2026-11-29T22:00:00Z","event":"Stop","decision":"maybe"}`, wantErr: true},
		{name: "two records glued", line: `{"time":"2026-11-29T22:00:00Z","event":"Stop","decision":"none"}{"time":"2026-11-29T22:00:00Z","event":"Stop","decision":"none"}`, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Decode([]byte(tc.line))
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v, want error %v", err, tc.wantErr)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("Decode (-want +got):\n%s", d)
			}
		})
	}
}

func TestRoundTrip(t *testing.T) {
	rec := Record{Time: t0, Session: "s", Event: PreToolUse, Host: "claude", Agent: "Plan", Tool: "Edit", Args: "ff",
		Decision: Ask, Rule: "policies:approve-push", Measured: []string{"docs"}}
	got, err := Decode(rec.Append(nil))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(rec, got); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
}

// FuzzDecode: the decoder never panics; what it accepts has a time, an
// event and a known decision, and encodes back to one bounded line that
// decodes alike.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"time":"2026-11-29T22:00:00Z","session":"s","event":"PreToolUse","host":"claude","tool":"Bash","args":"ab","decision":"deny","rule":"tool_policy"}`))
	f.Add([]byte(`{"time":"2026-11-29T22:00:00Z","event":"Stop","decision":"none","measured":["a","b"],"unchecked":true}`))
	f.Add([]byte(`{"time":"2026-11-29T22:00:00Z","event":"Pre`))
	f.Add([]byte("null"))
	f.Add([]byte("\xff\xfe"))
	f.Fuzz(func(t *testing.T, line []byte) {
		rec, err := Decode(line)
		if err != nil {
			if !cmp.Equal(rec, Record{}) {
				t.Fatalf("error %v with a record %+v", err, rec)
			}
			return
		}
		switch {
		case rec.Time.IsZero(), rec.Event == "":
			t.Fatalf("accepted a record without time or event: %+v", rec)
		case rec.Decision != None && rec.Decision != Allow && rec.Decision != Ask && rec.Decision != Deny:
			t.Fatalf("accepted decision %q", rec.Decision)
		}
		out := rec.Append(nil)
		if len(out) > MaxLine || !json.Valid(bytes.TrimSuffix(out, []byte("\n"))) || !utf8.Valid(out) {
			t.Fatalf("re-encoded to a bad line: %q", out)
		}
		again, err := Decode(out)
		if err != nil {
			t.Fatalf("re-encoded line does not decode: %v: %q", err, out)
		}
		if again.Decision != rec.Decision || again.Unchecked != rec.Unchecked || !again.Time.Equal(rec.Time.UTC()) {
			t.Fatalf("re-encoding changed the decision or the time: %+v then %+v", rec, again)
		}
	})
}
