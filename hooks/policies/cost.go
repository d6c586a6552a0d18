package policies

import (
	"bytes"
	"encoding/json"
	"strings"

	"miam/budgets"
)

// AddTranscript brings a transcript's cost up to date with data, the bytes
// of the transcript from c.Offset on. Only whole lines are read: a line
// still being written is read next time. Claude Code writes one line per
// content block, each repeating its message's usage, so a message is
// counted once, by its id.
func AddTranscript(c budgets.TranscriptCost, data []byte) budgets.TranscriptCost {
	end := bytes.LastIndexByte(data, '\n')
	if end < 0 {
		return c
	}
	for line := range bytes.SplitSeq(data[:end], []byte{'\n'}) {
		var e struct {
			Type    string `json:"type"`
			Message struct {
				ID    string `json:"id"`
				Model string `json:"model"`
				Usage *usage `json:"usage"`
			} `json:"message"`
		}
		if !bytes.Contains(line, []byte(`"usage"`)) || json.Unmarshal(line, &e) != nil ||
			e.Type != "assistant" || e.Message.Usage == nil {
			continue
		}
		usd := e.Message.Usage.cost(e.Message.Model)
		if e.Message.ID == "" || e.Message.ID != c.LastID {
			c.USD += c.LastUSD
		}
		c.LastID, c.LastUSD = e.Message.ID, usd
	}
	c.Offset += int64(end + 1)
	return c
}

type usage struct {
	Input      float64 `json:"input_tokens"`
	Output     float64 `json:"output_tokens"`
	CacheWrite float64 `json:"cache_creation_input_tokens"`
	CacheRead  float64 `json:"cache_read_input_tokens"`
}

// cost estimates a message's price from its usage, at list prices per
// million tokens by model family; cache writes cost 1.25× input, cache
// reads 0.1×. An unknown model is priced as Opus, so a cap errs early.
func (u usage) cost(model string) float64 {
	in, out := 5.0, 25.0
	m := strings.ToLower(model)
	switch {
	// claude-opus-4-20250514 and 4.1 are priced higher than the later Opus.
	case strings.Contains(m, "opus-4-1"), strings.Contains(m, "opus-4-0"), strings.Contains(m, "opus-4-2"),
		strings.Contains(m, "3-opus"), m == "claude-opus-4":
		in, out = 15, 75
	case strings.Contains(m, "sonnet"):
		in, out = 3, 15
	case strings.Contains(m, "3-5-haiku"), strings.Contains(m, "haiku-3-5"):
		in, out = 0.8, 4
	case strings.Contains(m, "3-haiku"):
		in, out = 0.25, 1.25
	case strings.Contains(m, "haiku"):
		in, out = 1, 5
	}
	return (u.Input*in + u.CacheWrite*in*1.25 + u.CacheRead*in*0.1 + u.Output*out) / 1e6
}
