// Package tools is the MCP front of the delegation daemon: the tools
// deleguer, suivre, annuler and etat, served over stdio by `miam mcp` and
// over streamable HTTP by the daemon, both on one Backend.
package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"miam/budgets"
	"miam/delegate"
	"miam/delegate/wire"
)

// Backend runs the requests: the daemon itself, or a client of it.
type Backend interface {
	Submit(ctx context.Context, session, project string, req wire.Request) (wire.Answer, error)
	Follow(ctx context.Context, id string, wait time.Duration) (wire.Answer, error)
	Cancel(ctx context.Context, id string) (wire.Answer, error)
	Etat(ctx context.Context, project string) (delegate.Etat, error)
}

// Session says which Claude Code session and project a tool call belongs
// to; `miam mcp` reads them from its environment.
type Session struct {
	ID      string
	Project string
	// CallWait caps suivre's attente_s (call_wait_s).
	CallWait time.Duration
}

// instructions reach Claude Code's system prompt under "## miam".
const instructions = "miam runs small, well-specified bouts of work on cheaper executors and checks them by machine. " +
	"Call deleguer with a precise consigne, the output file (sortie), a range to imitate (modele) and the names expected (attendus). " +
	"When it answers ok: null, run its `reprise` command once with run_in_background: true and do other work or end your turn: you are woken when it ends. " +
	"Never poll with suivre or sleep while a wait runs. A valide answer has been written and checked: integrate it without reading the whole body."

// NewServer builds the MCP server on a backend.
func NewServer(b Backend, s Session, version string) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "miam", Version: version}, &mcp.ServerOptions{Instructions: instructions})
	h := handlers{b: b, s: s}
	srv.AddTool(&mcp.Tool{Name: "deleguer", Description: "Delegate one bout (or a lot of bouts) to a cheaper executor; the answer is checked by machine and written to sortie only when valide.",
		InputSchema: json.RawMessage(deleguerSchema), OutputSchema: json.RawMessage(answerSchema)}, h.deleguer)
	srv.AddTool(&mcp.Tool{Name: "suivre", Description: "Return a request's answer at its end, or after attente_s seconds (capped). Prefer the reprise command in the background.",
		InputSchema: json.RawMessage(suivreSchema), OutputSchema: json.RawMessage(answerSchema)}, h.suivre)
	srv.AddTool(&mcp.Tool{Name: "annuler", Description: "Cancel a request.",
		InputSchema: json.RawMessage(idSchema), OutputSchema: json.RawMessage(answerSchema)}, h.annuler)
	srv.AddTool(&mcp.Tool{Name: "exception", Description: "Open an exception to write by hand: a budget of lignes code lines on the files named, " +
		"for a closed list of reasons (" + strings.Join(budgets.ExceptionReasons, ", ") + "). Counted in the turn report.",
		InputSchema: json.RawMessage(exceptionSchema)}, h.exception)
	srv.AddTool(&mcp.Tool{Name: "etat", Description: "Engines, queue and spend today.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{}}`)}, h.etat)
	return srv
}

type handlers struct {
	b Backend
	s Session
}

func (h handlers) deleguer(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in wire.Request
	if err := decodeArgs(req.Params.Arguments, &in); err != nil {
		return toolError(err), nil
	}
	if len(in.Lot) > 0 {
		return h.lot(ctx, in)
	}
	a, err := h.b.Submit(ctx, h.s.ID, h.s.Project, in)
	if err != nil {
		return toolError(err), nil
	}
	return result(a), nil
}

// lot submits each bout as its own request: one demande_id each.
func (h handlers) lot(ctx context.Context, in wire.Request) (*mcp.CallToolResult, error) {
	var all wire.Answer
	pending := false
	for i, bout := range in.Lot {
		a, err := h.b.Submit(ctx, h.s.ID, h.s.Project, bout)
		if err != nil {
			return toolError(fmt.Errorf("lot[%d]: %w", i, err)), nil
		}
		if a.OK == nil {
			pending = true
		}
		all.Lot = append(all.Lot, a)
	}
	ok := !pending
	for _, a := range all.Lot {
		if a.OK != nil && !*a.OK {
			ok = false
		}
	}
	if pending {
		all.Message = "Some bouts are still running: run each `reprise` once with run_in_background: true."
	} else {
		all.OK = &ok
	}
	return result(all), nil
}

func (h handlers) suivre(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in struct {
		DemandeID string `json:"demande_id"`
		AttenteS  *int   `json:"attente_s"`
	}
	if err := decodeArgs(req.Params.Arguments, &in); err != nil {
		return toolError(err), nil
	}
	if in.DemandeID == "" {
		return toolError(errors.New("demande_id: required")), nil
	}
	wait := 45 * time.Second
	if in.AttenteS != nil {
		wait = time.Duration(max(*in.AttenteS, 0)) * time.Second
	}
	if h.s.CallWait > 0 {
		wait = min(wait, h.s.CallWait)
	}
	a, err := h.b.Follow(ctx, in.DemandeID, wait)
	if err != nil {
		return toolError(err), nil
	}
	return result(a), nil
}

func (h handlers) annuler(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in struct {
		DemandeID string `json:"demande_id"`
	}
	if err := decodeArgs(req.Params.Arguments, &in); err != nil || in.DemandeID == "" {
		return toolError(errors.New("demande_id: required")), nil
	}
	a, err := h.b.Cancel(ctx, in.DemandeID)
	if err != nil {
		return toolError(err), nil
	}
	return result(a), nil
}

func (h handlers) etat(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	e, err := h.b.Etat(ctx, h.s.Project)
	if err != nil {
		return toolError(err), nil
	}
	text, _ := json.Marshal(e)
	return &mcp.CallToolResult{StructuredContent: e, Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}}, nil
}

// decodeArgs decodes tool arguments strictly: Claude Code does not check
// them against the schema, so a misspelt field must be named here.
func decodeArgs(raw json.RawMessage, v any) error {
	if len(raw) == 0 {
		raw = json.RawMessage("{}")
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("arguments: %w", err)
	}
	return nil
}

// result carries the answer as structured content; Claude Code shows the
// model that compact JSON (FINDINGS.md m1).
func result(a wire.Answer) *mcp.CallToolResult {
	text, _ := json.Marshal(a)
	return &mcp.CallToolResult{StructuredContent: a, Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}}
}

func toolError(err error) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "miam: " + err.Error()}}}
}

// exceptionSchema is the exception tool's input (SPEC §6).
const exceptionSchema = `{"type":"object","required":["raison","fichiers","lignes"],"additionalProperties":false,"properties":{` +
	`"raison":{"type":"string","enum":["concurrence","securite","debogage-multi-fichiers","secret"]},` +
	`"fichiers":{"type":"array","items":{"type":"string"},"minItems":1},` +
	`"lignes":{"type":"integer","minimum":1}}}`

// exceptionAnswer is what the exception tool answers: the miam hook opens
// the budget when it sees this answer (its PostToolUse); the daemon keeps
// nothing.
type exceptionAnswer struct {
	OK       bool     `json:"ok"`
	Raison   string   `json:"raison"`
	Fichiers []string `json:"fichiers"`
	Lignes   int      `json:"lignes"`
	Message  string   `json:"message"`
}

func (h handlers) exception(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in struct {
		Raison   string   `json:"raison"`
		Fichiers []string `json:"fichiers"`
		Lignes   int      `json:"lignes"`
	}
	if err := decodeArgs(req.Params.Arguments, &in); err != nil {
		return toolError(err), nil
	}
	if err := budgets.CheckException(in.Raison, in.Fichiers, in.Lignes); err != nil {
		return toolError(err), nil
	}
	a := exceptionAnswer{OK: true, Raison: in.Raison, Fichiers: in.Fichiers, Lignes: in.Lignes,
		Message: fmt.Sprintf("Exception opened: %d code lines by hand on %s. It is counted in the turn report; delegate the rest.",
			in.Lignes, strings.Join(in.Fichiers, ", "))}
	text, _ := json.Marshal(a)
	return &mcp.CallToolResult{StructuredContent: a, Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}}, nil
}
