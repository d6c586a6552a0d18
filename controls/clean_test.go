package controls

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"miam/budgets"
)

func TestClean(t *testing.T) {
	tests := []struct {
		name        string
		raw         string
		lang        budgets.Lang
		wantCode    string
		wantCleaned bool
	}{
		{
			name:     "bare code",
			raw:      "def f(x):\n    return x\n",
			lang:     budgets.LangPython,
			wantCode: "def f(x):\n    return x\n",
		},
		{
			name:     "bare code with surrounding blank lines",
			raw:      "\n\nfunc f() {}\n\n\n",
			lang:     budgets.LangGo,
			wantCode: "func f() {}\n",
		},
		{
			name:        "fence with prose around",
			raw:         "Sure! Here is the implementation:\n\n```python\ndef f(x):\n    return x\n```\n\nThis function returns its argument.\n",
			lang:        budgets.LangPython,
			wantCode:    "def f(x):\n    return x\n",
			wantCleaned: true,
		},
		{
			name:        "prose without fences",
			raw:         "Here is the code you asked for:\ndef f(x):\n    return x\nIt runs in constant time.\n",
			lang:        budgets.LangPython,
			wantCode:    "def f(x):\n    return x\n",
			wantCleaned: true,
		},
		{
			name:     "code starting with a comment or a keyword is kept",
			raw:      "# Compute things.\nimport os.path\nprint the value.\n",
			lang:     budgets.LangPython,
			wantCode: "# Compute things.\nimport os.path\nprint the value.\n",
		},
		{
			name:        "fence matching the language preferred over install command",
			raw:         "Install first:\n```bash\npip install requests\n```\nThen:\n```py\nimport requests\n```\n",
			lang:        budgets.LangPython,
			wantCode:    "import requests\n",
			wantCleaned: true,
		},
		{
			name:        "untagged fence when none matches",
			raw:         "```\nfn main() {}\n```",
			lang:        budgets.LangRust,
			wantCode:    "fn main() {}\n",
			wantCleaned: true,
		},
		{
			name:        "file name as info string",
			raw:         "```src/app.ts\nexport const a = 1;\n```",
			lang:        budgets.LangTypeScript,
			wantCode:    "export const a = 1;\n",
			wantCleaned: true,
		},
		{
			name:        "parts of the same language joined",
			raw:         "First the helper:\n```go\nfunc helper() int { return 1 }\n```\nThen the main function:\n```go\nfunc Main() int { return helper() }\n```",
			lang:        budgets.LangGo,
			wantCode:    "func helper() int { return 1 }\n\nfunc Main() int { return helper() }\n",
			wantCleaned: true,
		},
		{
			name:        "draft then corrected version: longest wins",
			raw:         "```python\ndef f(x):\n    return x\n```\nOops, corrected:\n```python\ndef f(x):\n    if x is None:\n        return 0\n    return x\n```",
			lang:        budgets.LangPython,
			wantCode:    "def f(x):\n    if x is None:\n        return 0\n    return x\n",
			wantCleaned: true,
		},
		{
			name:        "identical fences count once",
			raw:         "```js\nlet a = 1;\n```\nagain:\n```js\nlet a = 1;\n```",
			lang:        budgets.LangJavaScript,
			wantCode:    "let a = 1;\n",
			wantCleaned: true,
		},
		{
			name:        "unknown language takes the first tagged language",
			raw:         "```rust\nfn a() {}\n```\n```bash\ncargo test\n```\n```rust\nfn b() {}\n```",
			wantCode:    "fn a() {}\n\nfn b() {}\n",
			wantCleaned: true,
		},
		{
			name:        "unclosed fence runs to the end",
			raw:         "```python\ndef f(x):\n    return (x +",
			lang:        budgets.LangPython,
			wantCode:    "def f(x):\n    return (x +\n",
			wantCleaned: true,
		},
		{
			name:        "tilde fence and indented fence",
			raw:         "  ~~~~python\n  x = 1\n  ~~~~\n",
			lang:        budgets.LangPython,
			wantCode:    "x = 1\n",
			wantCleaned: true,
		},
		{
			name:        "longer fence holds a shorter one",
			raw:         "````markdown\n```go\nx\n```\n````",
			wantCode:    "```go\nx\n```\n",
			wantCleaned: true,
		},
		{
			name:        "json in a fence",
			raw:         "Here you go:\n```json\n{\"a\": 1}\n```",
			lang:        jsonLang,
			wantCode:    "{\"a\": 1}\n",
			wantCleaned: true,
		},
		{
			name:        "json in prose",
			raw:         "The result is {\"a\": [1, 2]} as requested.",
			lang:        jsonLang,
			wantCode:    "{\"a\": [1, 2]}\n",
			wantCleaned: true,
		},
		{
			name:        "several json fences: the first valid one",
			raw:         "```json\n{\"a\": 1,}\n```\n```json\n{\"a\": 1}\n```",
			lang:        jsonLang,
			wantCode:    "{\"a\": 1}\n",
			wantCleaned: true,
		},
		{
			name:     "crlf",
			raw:      "x = 1\r\ny = 2\r\n",
			lang:     budgets.LangPython,
			wantCode: "x = 1\ny = 2\n",
		},
		{
			name: "empty",
			raw:  "  \n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, cleaned := Clean(tt.raw, tt.lang)
			if diff := cmp.Diff(tt.wantCode, code); diff != "" {
				t.Errorf("Clean code mismatch (-want +got):\n%s", diff)
			}
			if cleaned != tt.wantCleaned {
				t.Errorf("Clean cleaned = %v, want %v", cleaned, tt.wantCleaned)
			}
		})
	}
}

func FuzzClean(f *testing.F) {
	f.Add("Here:\n```python\ndef f():\n    pass\n```\nDone.", "python")
	f.Add("```\n```\n```go\n", "go")
	f.Add("  ```` x `y`\n~~~\n", "")
	f.Add("{\"a\": [1,", "json")
	f.Add("\r\n```js\r\nlet a\r\n```\r\n", "javascript")
	f.Fuzz(func(t *testing.T, raw, lang string) {
		code, cleaned := Clean(raw, budgets.Lang(lang))
		if code != "" && !strings.HasSuffix(code, "\n") {
			t.Fatalf("code %q does not end with a newline", code)
		}
		if code != "" && strings.TrimSpace(code) == "" {
			t.Fatalf("blank code %q", code)
		}
		if !cleaned && strings.TrimSpace(code) != strings.TrimSpace(strings.ReplaceAll(raw, "\r\n", "\n")) {
			t.Fatalf("cleaned = false but code %q differs from raw %q", code, raw)
		}
		Clean(code, budgets.Lang(lang)) // cleaning twice must not panic either
	})
}
