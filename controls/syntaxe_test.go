package controls

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"miam/delegate/wire"
)

func TestSyntaxe(t *testing.T) {
	schema := json.RawMessage(`{
		"type": "object",
		"required": ["name", "items"],
		"properties": {
			"name": {"type": "string"},
			"level": {"enum": ["low", "high"]},
			"items": {"type": "array", "items": {"type": "object", "required": ["id"], "properties": {"id": {"type": "integer"}}}}
		}
	}`)
	tests := []struct {
		name string
		req  wire.Request
		raw  string
		want wire.Control
	}{
		{
			name: "valid python in a fence",
			req:  wire.Request{Consigne: "x", Sortie: "a.py"},
			raw:  "Here:\n```python\ndef f(x):\n    return x\n```\nDone.",
			want: wire.Control{Nom: "syntaxe", OK: true},
		},
		{
			name: "python missing colon",
			req:  wire.Request{Consigne: "x", Sortie: "a.py"},
			raw:  "def f(x)\n    return x\n",
			want: wire.Control{Nom: "syntaxe", Message: "line 1:1: syntax error near `def f(x)`"},
		},
		{
			name: "javascript missing bracket, two errors",
			req:  wire.Request{Consigne: "x", Sortie: "a.js"},
			raw:  "```js\nfunction f() {\n  return [1, 2;\n}\nfunction g() {\n  return (3;\n}\n```",
			want: wire.Control{Nom: "syntaxe", Message: "line 2:15: syntax error near `return [1, 2;` (something is missing there); 2 syntax errors in all"},
		},
		{
			name: "rust missing semicolon, language from the fence",
			req:  wire.Request{Consigne: "x"},
			raw:  "```rust\nfn main() {\n    let x = 1\n}\n```",
			want: wire.Control{Nom: "syntaxe", Message: "line 2:14: syntax error near `let x = 1` (something is missing there)"},
		},
		{
			name: "no grammar",
			req:  wire.Request{Consigne: "x", Sortie: "a.lua"},
			raw:  "print(",
			want: wire.Control{Nom: "syntaxe", OK: true, Message: "no grammar for this language: skipped"},
		},
		{
			name: "text skipped",
			req:  wire.Request{Consigne: "x", Type: "resume"},
			raw:  "A summary (unbalanced.",
			want: wire.Control{Nom: "syntaxe", OK: true, Message: "text, not code: skipped"},
		},
		{
			name: "valid json without schema",
			req:  wire.Request{Consigne: "x", Format: "json"},
			raw:  "```json\n{\"a\": 1}\n```",
			want: wire.Control{Nom: "syntaxe", OK: true},
		},
		{
			name: "invalid json: trailing comma",
			req:  wire.Request{Consigne: "x", Type: "extraction", Format: "json"},
			raw:  "{\n  \"a\": 1,\n}",
			want: wire.Control{Nom: "syntaxe", Message: "invalid JSON at line 3:1: invalid character '}' looking for beginning of object key string"},
		},
		{
			name: "invalid json: single quotes",
			req:  wire.Request{Consigne: "x", Format: "json"},
			raw:  "{'a': 1}",
			want: wire.Control{Nom: "syntaxe", Message: "invalid JSON at line 1:2: invalid character '\\'' looking for beginning of object key string"},
		},
		{
			name: "json matching the schema",
			req:  wire.Request{Consigne: "x", Format: "json", Schema: schema},
			raw:  `{"name": "a", "level": "low", "items": [{"id": 1}, {"id": 2, "extra": true}]}`,
			want: wire.Control{Nom: "syntaxe", OK: true},
		},
		{
			name: "json missing a required field",
			req:  wire.Request{Consigne: "x", Format: "json", Schema: schema},
			raw:  `{"name": "a"}`,
			want: wire.Control{Nom: "syntaxe", Message: `JSON does not match the schema: required: missing properties: ["items"]`},
		},
		{
			name: "json of the wrong type",
			req:  wire.Request{Consigne: "x", Format: "json", Schema: schema},
			raw:  `{"name": 3, "items": []}`,
			want: wire.Control{Nom: "syntaxe", Message: `JSON does not match the schema: validating /properties/name: type: 3 has type "integer", want "string"`},
		},
		{
			name: "json outside the enum",
			req:  wire.Request{Consigne: "x", Format: "json", Schema: schema},
			raw:  `{"name": "a", "level": "mid", "items": []}`,
			want: wire.Control{Nom: "syntaxe", Message: "JSON does not match the schema: validating /properties/level: enum: mid does not equal any of: [low high]"},
		},
		{
			name: "json item missing its id",
			req:  wire.Request{Consigne: "x", Format: "json", Schema: schema},
			raw:  `{"name": "a", "items": [{"id": 1}, {}]}`,
			want: wire.Control{Nom: "syntaxe", Message: "JSON does not match the schema: validating /properties/items: validating /properties/items/items: required: missing properties: [\"id\"]"},
		},
		{
			name: "unusable schema is not held against the answer",
			req:  wire.Request{Consigne: "x", Format: "json", Schema: json.RawMessage(`{"type": 5}`)},
			raw:  `{}`,
			want: wire.Control{Nom: "syntaxe", OK: true},
		},
		{
			name: "json array where an object is wanted",
			req:  wire.Request{Consigne: "x", Format: "json", Schema: schema},
			raw:  `[1]`,
			want: wire.Control{Nom: "syntaxe", Message: `JSON does not match the schema: type: [1] has type "array", want "object"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Syntaxe{}.Check(context.Background(), NewInput(tt.req, tt.raw, nil))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("syntaxe mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
