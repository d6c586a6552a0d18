package trace

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"io"
	"slices"
	"time"
)

// Tally is what `miam stats` tells of a ledger.
type Tally struct {
	// Evaluated counts the tool calls the hook evaluated (PreToolUse
	// records, unchecked ones left out); Denied and Asked those it refused
	// or asked about.
	Evaluated int `json:"evaluated"`
	Denied    int `json:"denied"`
	Asked     int `json:"asked"`
	// BlockRate is Denied / Evaluated, 0 when nothing was evaluated.
	BlockRate float64 `json:"block_rate"`
	// Unchecked counts the calls let through because the hook failed.
	Unchecked int `json:"unchecked"`
	// Stops counts the stop decisions (Stop, SubagentStop), StopsBlocked
	// those that kept the agent going.
	Stops        int `json:"stops"`
	StopsBlocked int `json:"stops_blocked"`
	// Rules are the rules that denied, asked or measured, most denies
	// first; a blocked stop counts as its rule's deny.
	Rules []RuleCount `json:"rules"`
	// Corrupt counts the lines skipped: not a record, or longer than any
	// record is written.
	Corrupt int `json:"corrupt"`
	// Hosts counts the records by host: `miam doctor` warns about a host
	// miam is installed for that never emitted one.
	Hosts map[string]int `json:"hosts,omitempty"`
	// First and Last date the records read.
	First time.Time `json:"first,omitzero"`
	Last  time.Time `json:"last,omitzero"`
}

// RuleCount is one rule's share of the ledger.
type RuleCount struct {
	Rule     string `json:"rule"`
	Denies   int    `json:"denies"`
	Asks     int    `json:"asks"`
	Measured int    `json:"measured"`
}

// maxRead bounds a line the reader buffers: records are under MaxLine, so a
// longer line is corrupt whatever it holds.
const maxRead = 64 << 10

// Read tallies a ledger. A line that does not decode is skipped and
// counted; only a read error fails, with the tally so far.
func Read(r io.Reader) (Tally, error) {
	var t Tally
	rules := map[string]*RuleCount{}
	rule := func(name string) *RuleCount {
		rc := rules[name]
		if rc == nil {
			rc = &RuleCount{Rule: name}
			rules[name] = rc
		}
		return rc
	}
	br := bufio.NewReaderSize(r, maxRead)
	var err error
	for err == nil {
		var line []byte
		line, err = br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			t.Corrupt++
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			continue
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		rec, derr := Decode(line)
		if derr != nil {
			t.Corrupt++
			continue
		}
		t.add(rec, rule)
	}
	t.Rules = make([]RuleCount, 0, len(rules))
	for _, rc := range rules {
		t.Rules = append(t.Rules, *rc)
	}
	slices.SortFunc(t.Rules, func(a, b RuleCount) int {
		return cmp.Or(b.Denies-a.Denies, b.Asks-a.Asks, b.Measured-a.Measured, cmp.Compare(a.Rule, b.Rule))
	})
	if t.Evaluated > 0 {
		t.BlockRate = float64(t.Denied) / float64(t.Evaluated)
	}
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return t, err
}

func (t *Tally) add(rec Record, rule func(string) *RuleCount) {
	if rec.Host != "" {
		if t.Hosts == nil {
			t.Hosts = map[string]int{}
		}
		t.Hosts[rec.Host]++
	}
	if t.First.IsZero() || rec.Time.Before(t.First) {
		t.First = rec.Time
	}
	if rec.Time.After(t.Last) {
		t.Last = rec.Time
	}
	switch {
	case rec.Unchecked:
		t.Unchecked++
		return
	case rec.Event == Stop || rec.Event == SubagentStop:
		t.Stops++
		if rec.Decision == Deny {
			t.StopsBlocked++
		}
	case rec.Event == PreToolUse:
		t.Evaluated++
		switch rec.Decision {
		case Deny:
			t.Denied++
		case Ask:
			t.Asked++
		}
	default:
		return // an event a newer miam-hook records: not a call, not a stop
	}
	if rec.Rule != "" {
		switch rec.Decision {
		case Deny:
			rule(rec.Rule).Denies++
		case Ask:
			rule(rec.Rule).Asks++
		}
	}
	for _, m := range rec.Measured {
		rule(m).Measured++
	}
}
