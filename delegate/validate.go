package delegate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/go-playground/validator/v10"
	"github.com/google/jsonschema-go/jsonschema"

	"miam/delegate/wire"
)

// FieldError is one thing wrong with a request: the field, by its JSON name
// and index path ("lot[1].consigne", "controle[0]"), and why.
type FieldError struct {
	Field  string
	Reason string
}

// String is "field: reason".
func (e FieldError) String() string { return e.Field + ": " + e.Reason }

// ValidationError lists everything wrong with a request at once, so that
// the agent can fix the whole call in one go.
type ValidationError struct {
	Fields []FieldError
}

// Error lists the fields, separated by "; ".
func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		parts[i] = f.String()
	}
	return "invalid deleguer request: " + strings.Join(parts, "; ")
}

// Validator checks deleguer requests (SPEC §2). It holds a validator/v10
// instance configured once and only read afterwards, so one Validator may
// serve concurrent calls.
type Validator struct {
	v *validator.Validate
}

// NewValidator returns a Validator naming fields by their JSON names.
func NewValidator() *Validator {
	v := validator.New(validator.WithRequiredStructEnabled())
	v.RegisterTagNameFunc(func(f reflect.StructField) string {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			return ""
		}
		return name
	})
	return &Validator{v: v}
}

// defaultValidator is built on first use and read-only afterwards.
var defaultValidator = sync.OnceValue(NewValidator)

// Validate checks req with a shared read-only Validator; see
// Validator.Validate.
func Validate(req wire.Request) error {
	return defaultValidator().Validate(req)
}

// Validate returns nil when req is acceptable, else a *ValidationError
// naming every bad field. It checks the `validate` tags of wire.Request
// first, then the rules tags cannot express, for the request and each bout
// of its lot:
//
//   - schema is only meaningful with format json, and must be a JSON Schema
//     that resolves on its own (no remote references);
//   - commande needs the commande control: controle nil (the defaults) or
//     listing "commande";
//   - a bout of a lot may not hold a lot itself;
//   - sortie, fichiers, perimetre and modele are paths relative to the
//     project, clean (as path.Clean leaves them), slash-separated and not
//     escaping it through "..";
//   - fichiers and modele may end in a line range ":START-END" with
//     1 ≤ START ≤ END; sortie and perimetre may not.
//
// Errors come in that order: tag errors in field order, then the other
// rules, request before bouts.
func (v *Validator) Validate(req wire.Request) error {
	var fields []FieldError
	err := v.v.Struct(req)
	var verrs validator.ValidationErrors
	switch {
	case err == nil:
	case errors.As(err, &verrs):
		for _, fe := range verrs {
			fields = append(fields, tagError(fe))
		}
	default:
		// InvalidValidationError: a bug of ours, not of the caller.
		fields = append(fields, FieldError{Field: "request", Reason: err.Error()})
	}
	fields = append(fields, crossFields("", req, false)...)
	for i, bout := range req.Lot {
		fields = append(fields, crossFields(fmt.Sprintf("lot[%d].", i), bout, true)...)
	}
	if len(fields) == 0 {
		return nil
	}
	return &ValidationError{Fields: fields}
}

// tagError turns a validator/v10 error into a FieldError named by its JSON
// path, without the root struct's name.
func tagError(fe validator.FieldError) FieldError {
	field := fe.Namespace()
	if _, rest, ok := strings.Cut(field, "."); ok {
		field = rest
	}
	var reason string
	switch fe.Tag() {
	case "required":
		reason = "required"
	case "oneof":
		got := fmt.Sprint(fe.Value())
		if strings.HasPrefix(field, "controle[") || strings.Contains(field, ".controle[") {
			reason = fmt.Sprintf("unknown control %q: want one of %s", got, fe.Param())
		} else {
			reason = fmt.Sprintf("must be one of %s, not %q", fe.Param(), got)
		}
	case "min":
		reason = "must be at least " + fe.Param()
	case "max":
		reason = "must be at most " + fe.Param()
	default:
		reason = "fails " + fe.Tag()
		if p := fe.Param(); p != "" {
			reason += "=" + p
		}
	}
	return FieldError{Field: field, Reason: reason}
}

// crossFields checks the rules validator tags cannot express on one request
// or bout; prefix names the bout ("lot[2].").
func crossFields(prefix string, r wire.Request, inLot bool) []FieldError {
	var out []FieldError
	bad := func(field, reason string) {
		out = append(out, FieldError{Field: prefix + field, Reason: reason})
	}
	if schema := bytes.TrimSpace(r.Schema); len(schema) > 0 && !bytes.Equal(schema, []byte("null")) {
		if r.Format != "json" {
			bad("schema", `needs format "json"`)
		}
		if reason := checkSchema(schema); reason != "" {
			bad("schema", reason)
		}
	}
	if r.Commande != "" && r.Controle != nil && !slices.Contains(*r.Controle, "commande") {
		bad("commande", `is never run: controle must include "commande" or be left out`)
	}
	if inLot && len(r.Lot) > 0 {
		bad("lot", "a bout of a lot may not hold a lot itself")
	}
	if r.Sortie != "" {
		if reason := checkPath(r.Sortie, false); reason != "" {
			bad("sortie", reason)
		}
	}
	if r.Modele != "" {
		if reason := checkPath(r.Modele, true); reason != "" {
			bad("modele", reason)
		}
	}
	for i, f := range r.Fichiers {
		if f == "" {
			continue // reported by the required tag
		}
		if reason := checkPath(f, true); reason != "" {
			bad(fmt.Sprintf("fichiers[%d]", i), reason)
		}
	}
	for i, p := range r.Perimetre {
		if p == "" {
			continue
		}
		if reason := checkPath(p, false); reason != "" {
			bad(fmt.Sprintf("perimetre[%d]", i), reason)
		}
	}
	return out
}

// checkSchema returns why schema is no usable JSON Schema, or "": it must
// be an object that github.com/google/jsonschema-go resolves without
// loading anything (the syntaxe control validates answers with it).
func checkSchema(schema []byte) string {
	if schema[0] != '{' {
		return "must be a JSON object (a JSON Schema)"
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(schema, &s); err != nil {
		return "not a JSON Schema: " + err.Error()
	}
	if _, err := s.Resolve(nil); err != nil {
		return "not a usable JSON Schema: " + err.Error()
	}
	return ""
}

// checkPath returns why p is not an acceptable project path, or "". With
// ranged, p may end in a line range ":START-END".
func checkPath(p string, ranged bool) string {
	file, lines, hasRange := splitRange(p)
	if hasRange {
		if !ranged {
			return fmt.Sprintf("%q: a line range is not allowed here", p)
		}
		if reason := checkRange(lines); reason != "" {
			return fmt.Sprintf("%q: %s", p, reason)
		}
	}
	switch {
	case file == "":
		return fmt.Sprintf("%q: no file name", p)
	case strings.ContainsRune(file, 0):
		return fmt.Sprintf("%q: contains a NUL byte", p)
	case strings.Contains(file, `\`):
		return fmt.Sprintf("%q: use forward slashes", p)
	case path.IsAbs(file) || hasDrive(file):
		return fmt.Sprintf("%q: must be relative to the project root", p)
	case path.Clean(file) == ".." || strings.HasPrefix(path.Clean(file), "../"):
		return fmt.Sprintf("%q: escapes the project", p)
	case file == ".":
		return fmt.Sprintf("%q: must name a file or directory inside the project", p)
	case path.Clean(file) != file:
		return fmt.Sprintf("%q: not clean, write %q", p, path.Clean(file))
	}
	return ""
}

// splitRange splits "path:10-40" into "path" and "10-40". A suffix after the
// last colon made only of digits and dashes is taken for a range, even a
// malformed one, so that "x.py:10-" is reported rather than read as a file
// name.
func splitRange(p string) (file, lines string, ok bool) {
	i := strings.LastIndexByte(p, ':')
	if i < 0 {
		return p, "", false
	}
	suffix := p[i+1:]
	if suffix == "" || strings.Trim(suffix, "0123456789-") != "" {
		return p, "", false
	}
	return p[:i], suffix, true
}

// checkRange returns why "START-END" is not a valid line range, or "".
func checkRange(lines string) string {
	a, b, ok := strings.Cut(lines, "-")
	if !ok {
		return "line range must be START-END"
	}
	start, err1 := strconv.Atoi(a)
	end, err2 := strconv.Atoi(b)
	switch {
	case err1 != nil || err2 != nil:
		return "line range must be START-END with whole numbers"
	case start < 1:
		return "line range must start at line 1 or later"
	case end < start:
		return "line range must end at or after its start"
	}
	return ""
}

// hasDrive reports whether p starts with a Windows drive ("C:").
func hasDrive(p string) bool {
	return len(p) >= 2 && p[1] == ':' &&
		('a' <= p[0] && p[0] <= 'z' || 'A' <= p[0] && p[0] <= 'Z')
}
