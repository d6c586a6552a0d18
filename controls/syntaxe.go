package controls

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"miam/budgets"
	"miam/delegate/wire"
)

// Syntaxe is the `syntaxe` control (SPEC §4). Code must parse with its
// tree-sitter grammar without ERROR or MISSING nodes (budgets.SyntaxErrors);
// the message names the first error's line and column, the text near it and
// the number of errors. A JSON answer (format json) must be valid JSON and,
// when the request gives a `schema`, match it: the whole of JSON Schema
// (2020-12 or draft 7) as github.com/google/jsonschema-go validates it, the
// first mismatch reported. A schema that does not resolve is not held
// against the answer (delegate.Validate refuses such requests). Text answers, code in a language without a grammar and
// code too large to parse pass with a message saying they were skipped.
type Syntaxe struct{}

// Name returns "syntaxe".
func (Syntaxe) Name() string { return NameSyntaxe }

// Cost returns CostPure.
func (Syntaxe) Cost() Cost { return CostPure }

// Check runs the control.
func (Syntaxe) Check(_ context.Context, in Input) wire.Control {
	switch in.Kind() {
	case KindText:
		return wire.Control{Nom: NameSyntaxe, OK: true, Message: "text, not code: skipped"}
	case KindJSON:
		return result(NameSyntaxe, checkJSON(in))
	}
	if in.Lang == "" {
		return wire.Control{Nom: NameSyntaxe, OK: true, Message: "no grammar for this language: skipped"}
	}
	errs, parsed := budgets.CheckSyntax(in.Lang, []byte(in.Code))
	if !parsed {
		return wire.Control{Nom: NameSyntaxe, OK: true, Message: "too large or too slow to parse: skipped"}
	}
	if len(errs) == 0 {
		return wire.Control{Nom: NameSyntaxe, OK: true}
	}
	e := errs[0]
	msg := fmt.Sprintf("line %d:%d: syntax error near `%s`", e.Line, e.Column, short(e.Text))
	if e.Missing {
		msg += " (something is missing there)"
	}
	if len(errs) > 1 {
		msg += fmt.Sprintf("; %d syntax errors in all", len(errs))
	}
	return wire.Control{Nom: NameSyntaxe, OK: false, Message: msg}
}

// checkJSON lists what is wrong with a JSON answer.
func checkJSON(in Input) []string {
	doc := []byte(strings.TrimSpace(in.Code))
	if len(doc) == 0 {
		return []string{"the answer holds no JSON"}
	}
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			// Offset counts the bytes read, the offending one included.
			line, col := position(doc, int(se.Offset)-1)
			return []string{fmt.Sprintf("invalid JSON at line %d:%d: %v", line, col, err)}
		}
		return []string{"invalid JSON: " + err.Error()}
	}
	schema := bytes.TrimSpace(in.Request.Schema)
	if len(schema) == 0 || string(schema) == "null" {
		return nil
	}
	rs, err := resolveSchema(schema)
	if err != nil {
		return nil // the request's fault, refused by delegate.Validate
	}
	if err := rs.Validate(v); err != nil {
		return []string{"JSON does not match the schema: " + strings.TrimPrefix(err.Error(), "validating root: ")}
	}
	return nil
}

// resolveSchema reads a JSON Schema (draft 2020-12 or 7) with
// github.com/google/jsonschema-go; references outside the document are not
// loaded.
func resolveSchema(raw []byte) (*jsonschema.Resolved, error) {
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	return s.Resolve(nil)
}

// position turns a byte offset into a 1-based line and column (bytes).
func position(doc []byte, off int) (line, col int) {
	off = min(max(off, 0), len(doc))
	start := bytes.LastIndexByte(doc[:off], '\n') + 1
	return bytes.Count(doc[:start], []byte{'\n'}) + 1, off - start + 1
}

// validJSON reports whether s is one JSON document.
func validJSON(s string) bool { return json.Valid([]byte(s)) }
