package policies

import (
	"encoding/json"
	"testing"
)

func TestNormalizeCommand(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"folds blanks", "git   push\t origin  ", "git push origin"},
		{"keeps single quotes", "echo 'a   b'  c", "echo 'a   b' c"},
		{"keeps double quotes", `echo "a   b"   c`, `echo "a   b" c`},
		{"escaped quote in double", `echo "a \"  b"   c`, `echo "a \"  b" c`},
		{"escaped blank", `echo a\  b`, `echo a\  b`},
		{"param expansion untouched", "echo ${x:-a  b}", "echo ${x:-a  b}"},
		{"test bracket untouched", "[  -f x ]", "[  -f x ]"},
		{"non-ascii untouched", "echo “a  b”", "echo “a  b”"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NormalizeCommand(tt.in); got != tt.want {
				t.Errorf("NormalizeCommand(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestFingerprint(t *testing.T) {
	fp := func(tool string, in map[string]any) string {
		raw, _ := json.Marshal(in)
		return Fingerprint(tool, raw)
	}
	base := fp("Bash", map[string]any{"command": "git push origin main", "description": "Push"})
	same := []map[string]any{
		{"command": "git  push   origin main ", "description": "Push it"},
		{"command": "git push origin main", "timeout": 1000},
	}
	for _, in := range same {
		if got := fp("Bash", in); got != base {
			t.Errorf("%v: fingerprint differs from the same command's", in)
		}
	}
	other := []map[string]any{
		{"command": "git push origin dev"},
		{"command": "git push origin main", "run_in_background": true},
		{"command": "'git push' origin main"},
	}
	for _, in := range other {
		if got := fp("Bash", in); got == base {
			t.Errorf("%v: same fingerprint as a different call", in)
		}
	}
	// A here-doc's blanks are data (Python's indentation): not folded.
	heredoc := func(indent string) string {
		return fp("Bash", map[string]any{"command": "python3 - <<'EOF'\nif x:\n" + indent + "run()\nEOF"})
	}
	if heredoc("    ") == heredoc("  ") {
		t.Error("two here-docs that differ in indentation share a fingerprint")
	}
	if fp("Write", map[string]any{"file_path": "a", "content": "x"}) == fp("Write", map[string]any{"file_path": "a", "content": "y"}) {
		t.Error("a Write's content is part of its fingerprint")
	}
	if fp("Write", map[string]any{"file_path": "a", "content": "x"}) != Fingerprint("Write", json.RawMessage(`{"content":"x","file_path":"a"}`)) {
		t.Error("key order must not change a fingerprint")
	}
	if Fingerprint("Bash", json.RawMessage(`not json`)) == Fingerprint("Bash", json.RawMessage(`not  json`)) {
		t.Error("an input that is not an object is fingerprinted as sent")
	}
}
