package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing/fstest"

	"miam/budgets"
	"miam/hooks"
	"miam/hooks/config"
)

// transcriptLine is the part of a Claude Code session transcript line
// (~/.claude/projects/<slug>/<session>.jsonl) that replay reads.
type transcriptLine struct {
	Type          string          `json:"type"`
	SessionID     string          `json:"sessionId"`
	Cwd           string          `json:"cwd"`
	IsSidechain   bool            `json:"isSidechain"`
	IsMeta        bool            `json:"isMeta"`
	AgentID       string          `json:"agentId"`
	Message       json.RawMessage `json:"message"`
	ToolUseResult json.RawMessage `json:"toolUseResult"`
}

type transcriptMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type contentBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// ReplayCall is one tool call of the transcript and what miam decides of it.
type ReplayCall struct {
	N        int    `json:"n"`
	Tool     string `json:"tool"`
	Path     string `json:"path,omitempty"`
	Decision string `json:"decision"`
	Rule     string `json:"rule,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Charged  int    `json:"charged_code_lines,omitempty"`
	Subagent bool   `json:"subagent,omitempty"`
}

// ReplayReport is replay's whole answer.
type ReplayReport struct {
	Transcript string         `json:"transcript"`
	Calls      []ReplayCall   `json:"calls"`
	Totals     ReplayTotals   `json:"totals"`
	State      budgets.State  `json:"final_state"`
	DeniedBy   map[string]int `json:"denied_by_rule,omitempty"`
}

// ReplayTotals sums the report.
type ReplayTotals struct {
	ToolCalls        int `json:"tool_calls"`
	Denied           int `json:"denied"`
	Prompts          int `json:"prompts"`
	CodeLinesByHand  int `json:"code_lines_by_hand"`
	DocLinesByHand   int `json:"doc_lines_by_hand"`
	TestLinesByHand  int `json:"test_lines_by_hand"`
	Delegations      int `json:"delegations"`
	SubagentCalls    int `json:"subagent_calls"`
	UnreadableLines  int `json:"unreadable_lines,omitempty"`
	UnmatchedResults int `json:"unmatched_results,omitempty"`
}

func runReplay(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fl := flag.NewFlagSet("replay", flag.ContinueOnError)
	fl.SetOutput(stderr)
	asJSON := fl.Bool("json", false, "print the report as JSON")
	cfgFile := fl.String("config", "", "a .miam/config.yaml to replay with (default: built-in defaults)")
	if err := fl.Parse(reorder(args)); err != nil {
		return err
	}
	if fl.NArg() != 1 {
		return fmt.Errorf("usage: miam replay TRANSCRIPT [--json] [--config FILE]")
	}
	var cfg config.Config
	if *cfgFile != "" {
		data, err := os.ReadFile(*cfgFile)
		if err != nil {
			return err
		}
		if cfg, err = config.Decode(cfg, *cfgFile, data); err != nil {
			return err
		}
	}
	f, err := os.Open(fl.Arg(0))
	if err != nil {
		return err
	}
	defer f.Close()
	rep, err := replay(f, cfg)
	if err != nil {
		return fmt.Errorf("%s: %w", fl.Arg(0), err)
	}
	rep.Transcript = filepath.Base(fl.Arg(0))
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	printReport(stdout, rep)
	return nil
}

// reorder puts flags before positional arguments, so `replay FILE --json`
// works as users type it.
func reorder(args []string) []string {
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--config" || a == "-config":
			flags = append(flags, a)
			if i+1 < len(args) {
				flags = append(flags, args[i+1])
				i++
			}
		case strings.HasPrefix(a, "-"):
			flags = append(flags, a)
		default:
			pos = append(pos, a)
		}
	}
	return append(flags, pos...)
}

// replayer feeds a transcript through hooks.Decide, keeping an in-memory
// copy of the files the session touched so that edits are measured against
// what the file held at that moment.
type replayer struct {
	cfg     config.Config
	project string
	files   fstest.MapFS
	st      budgets.State
	pending map[string]pendingCall
	rep     ReplayReport
}

type pendingCall struct {
	ev   hooks.Event
	call int // index in rep.Calls
}

func replay(r io.Reader, cfg config.Config) (ReplayReport, error) {
	rp := &replayer{cfg: cfg, files: fstest.MapFS{}, pending: map[string]pendingCall{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	lineNo := 0
	for sc.Scan() {
		lineNo++
		var l transcriptLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			rp.rep.Totals.UnreadableLines++
			continue
		}
		rp.line(l)
	}
	if err := sc.Err(); err != nil {
		return ReplayReport{}, fmt.Errorf("line %d: %w", lineNo+1, err)
	}
	if lineNo == 0 {
		return ReplayReport{}, fmt.Errorf("empty transcript")
	}
	rp.rep.Totals.UnmatchedResults += len(rp.pending)
	w := rp.st.Session.Written
	rp.rep.Totals.CodeLinesByHand, rp.rep.Totals.DocLinesByHand, rp.rep.Totals.TestLinesByHand = w.Code, w.Doc, w.Tests
	rp.rep.Totals.Delegations = rp.st.Session.Delegations
	rp.rep.DeniedBy = rp.st.Session.Denied
	rp.rep.State = rp.st
	if rp.rep.Calls == nil {
		rp.rep.Calls = []ReplayCall{}
	}
	return rp.rep, nil
}

func (rp *replayer) line(l transcriptLine) {
	if rp.st.SessionID == "" && l.SessionID != "" {
		rp.st = budgets.Fresh(l.SessionID)
	}
	if rp.project == "" && l.Cwd != "" {
		rp.project = l.Cwd
	}
	var msg transcriptMessage
	if len(l.Message) == 0 || json.Unmarshal(l.Message, &msg) != nil {
		return
	}
	agent := l.AgentID
	if l.IsSidechain && agent == "" {
		agent = "sidechain"
	}
	var text string
	if json.Unmarshal(msg.Content, &text) == nil {
		if l.Type == "user" && !l.IsMeta && !l.IsSidechain && !strings.HasPrefix(text, "<command-") {
			rp.prompt(text)
		}
		return
	}
	var blocks []contentBlock
	if json.Unmarshal(msg.Content, &blocks) != nil {
		return
	}
	for _, b := range blocks {
		switch {
		case l.Type == "assistant" && b.Type == "tool_use":
			rp.toolUse(b, agent)
		case l.Type == "user" && b.Type == "tool_result":
			rp.toolResult(b, l.ToolUseResult)
		case l.Type == "user" && b.Type == "text" && !l.IsMeta && !l.IsSidechain && len(blocks) == 1:
			rp.prompt(b.Text)
		}
	}
}

func (rp *replayer) env() hooks.Env {
	return hooks.Env{Config: rp.cfg, Project: rp.project, Files: rp.files}
}

func (rp *replayer) decide(ev hooks.Event) hooks.Verdict {
	ev.SessionID = rp.st.SessionID
	v, st := hooks.Decide(ev, rp.st, rp.env())
	rp.st = st
	return v
}

func (rp *replayer) prompt(text string) {
	ev := hooks.Event{Name: hooks.UserPromptSubmit, Prompt: text}
	if rp.st.TurnOpen && !ev.IsTaskNotification() {
		rp.decide(hooks.Event{Name: hooks.Stop})
	}
	if !ev.IsTaskNotification() {
		rp.rep.Totals.Prompts++
	}
	rp.decide(ev)
}

func (rp *replayer) toolUse(b contentBlock, agent string) {
	ev := hooks.Event{Name: hooks.PreToolUse, Tool: hooks.DecodeTool(b.Name, b.Input), ToolUseID: b.ID, AgentID: agent}
	before := rp.st.Session.Written.Code
	v := rp.decide(ev)
	call := ReplayCall{
		N: len(rp.rep.Calls) + 1, Tool: b.Name, Decision: v.Decision.String(), Rule: v.Rule, Reason: v.Reason,
		Charged: rp.st.Session.Written.Code - before, Subagent: agent != "",
	}
	if p := ev.Tool.Path(); p != "" {
		call.Path = rel(rp.project, p)
	}
	rp.rep.Totals.ToolCalls++
	if agent != "" {
		rp.rep.Totals.SubagentCalls++
	}
	if v.Decision == hooks.Deny {
		rp.rep.Totals.Denied++
	}
	rp.rep.Calls = append(rp.rep.Calls, call)
	rp.pending[b.ID] = pendingCall{ev: ev, call: len(rp.rep.Calls) - 1}
}

func (rp *replayer) toolResult(b contentBlock, result json.RawMessage) {
	p, ok := rp.pending[b.ToolUseID]
	if !ok {
		rp.rep.Totals.UnmatchedResults++
		return
	}
	delete(rp.pending, b.ToolUseID)
	ev := p.ev
	if b.IsError {
		ev.Name, ev.Error = hooks.PostToolUseFailure, "error"
		rp.decide(ev)
		return
	}
	ev.Name = hooks.PostToolUse
	ev.Response = result
	if _, mcp := ev.Tool.Input.(*hooks.MCPInput); mcp || len(result) == 0 {
		// MCP answers reach hooks as the tool_result content itself.
		ev.Response = b.Content
	}
	rp.decide(ev)
	rp.applyToFiles(ev.Tool, result)
}

// applyToFiles keeps the in-memory project in step with what the session
// did, seeding files from what Read and Edit results reveal.
func (rp *replayer) applyToFiles(t hooks.Tool, result json.RawMessage) {
	var res struct {
		OriginalFile *string `json:"originalFile"`
		File         struct {
			Content    string `json:"content"`
			StartLine  int    `json:"startLine"`
			NumLines   int    `json:"numLines"`
			TotalLines int    `json:"totalLines"`
		} `json:"file"`
	}
	_ = json.Unmarshal(result, &res)
	key := func(p string) string { return strings.TrimPrefix(rel(rp.project, p), "/") }
	get := func(p string) string {
		if f, ok := rp.files[key(p)]; ok {
			return string(f.Data)
		}
		if res.OriginalFile != nil {
			return *res.OriginalFile
		}
		return ""
	}
	put := func(p, s string) { rp.files[key(p)] = &fstest.MapFile{Data: []byte(s), Mode: 0o644} }
	switch in := t.Input.(type) {
	case *hooks.WriteInput:
		put(in.FilePath, in.Content)
	case *hooks.EditInput:
		s, _ := budgets.ApplyEdit(get(in.FilePath), in.OldString, in.NewString, in.ReplaceAll)
		put(in.FilePath, s)
	case *hooks.MultiEditInput:
		s := get(in.FilePath)
		for _, e := range in.Edits {
			s, _ = budgets.ApplyEdit(s, e.OldString, e.NewString, e.ReplaceAll)
		}
		put(in.FilePath, s)
	case *hooks.ReadInput:
		// Only a whole-file read tells us the whole file.
		if _, known := rp.files[key(in.FilePath)]; !known && res.File.StartLine <= 1 && res.File.NumLines >= res.File.TotalLines {
			put(in.FilePath, res.File.Content)
		}
	}
}

func rel(project, p string) string {
	if project != "" {
		if r, err := filepath.Rel(project, p); err == nil && !strings.HasPrefix(r, "..") {
			return filepath.ToSlash(r)
		}
	}
	return p
}

func printReport(w io.Writer, rep ReplayReport) {
	fmt.Fprintf(w, "replay of %s\n", rep.Transcript)
	for _, c := range rep.Calls {
		target := c.Tool
		if c.Path != "" {
			target += " " + c.Path
		}
		who := ""
		if c.Subagent {
			who = " (subagent, not counted)"
		}
		switch c.Decision {
		case "deny":
			first, _, _ := strings.Cut(c.Reason, "\n")
			fmt.Fprintf(w, "#%d %s: DENIED by %s%s\n    %s\n", c.N, target, c.Rule, who, first)
		default:
			charged := ""
			if c.Charged > 0 {
				charged = fmt.Sprintf(" (+%d code lines)", c.Charged)
			}
			fmt.Fprintf(w, "#%d %s: allowed%s%s\n", c.N, target, charged, who)
		}
	}
	t := rep.Totals
	fmt.Fprintf(w, "\ntotals: %d tool calls (%d in subagents), %d would have been denied, %d prompts\n", t.ToolCalls, t.SubagentCalls, t.Denied, t.Prompts)
	fmt.Fprintf(w, "written by hand: %d code lines (%d in tests), %d doc lines; successful delegations: %d\n", t.CodeLinesByHand, t.TestLinesByHand, t.DocLinesByHand, t.Delegations)
	if len(rep.DeniedBy) > 0 {
		rules := make([]string, 0, len(rep.DeniedBy))
		for r := range rep.DeniedBy {
			rules = append(rules, r)
		}
		sort.Strings(rules)
		for _, r := range rules {
			fmt.Fprintf(w, "denied by %s: %d\n", r, rep.DeniedBy[r])
		}
	}
}
