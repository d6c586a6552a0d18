package budgets

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSyntaxErrors(t *testing.T) {
	tests := []struct {
		name string
		lang Lang
		src  string
		want []SyntaxError
	}{
		{name: "python ok", lang: LangPython, src: "def f(x):\n    return x + 1\n"},
		{name: "go ok", lang: LangGo, src: "package p\n\nfunc f() int {\n\treturn 1\n}\n"},
		{name: "javascript ok", lang: LangJavaScript, src: "function f() {\n  return [1, 2];\n}\n"},
		{name: "tsx ok", lang: LangTSX, src: "const a = <div>hi</div>;\n"},
		{name: "rust ok", lang: LangRust, src: "fn main() {\n    let x = 1;\n}\n"},
		{name: "bash ok", lang: LangBash, src: "if [ -f x ]; then\n  echo hi\nfi\n"},
		{name: "empty", lang: LangPython, src: ""},
		{
			name: "python missing colon",
			lang: LangPython,
			src:  "def f(x)\n    return x\n",
			want: []SyntaxError{{Line: 1, Column: 1, Text: "def f(x)"}},
		},
		{
			name: "python unclosed paren",
			lang: LangPython,
			src:  "def f(x):\n    return (x + 1\n",
			want: []SyntaxError{{Line: 2, Column: 5, Text: "return (x + 1"}},
		},
		{
			name: "python unterminated string",
			lang: LangPython,
			src:  "def f(x):\n    s = \"abc\n",
			want: []SyntaxError{{Line: 2, Column: 9, Text: `s = "abc`}},
		},
		{
			name: "go truncated function: missing brace placed after the last line",
			lang: LangGo,
			src:  "package p\n\nfunc f() int {\n\treturn 1\n",
			want: []SyntaxError{{Line: 4, Column: 10, Missing: true, Text: "return 1"}},
		},
		{
			name: "go dangling operator",
			lang: LangGo,
			src:  "package p\n\nfunc f() int {\n\treturn 1 +\n}\n",
			want: []SyntaxError{{Line: 4, Column: 11, Text: "return 1 +"}},
		},
		{
			name: "javascript missing bracket",
			lang: LangJavaScript,
			src:  "function f() {\n  return [1, 2;\n}\n",
			want: []SyntaxError{{Line: 2, Column: 15, Missing: true, Text: "return [1, 2;"}},
		},
		{
			name: "rust missing semicolon",
			lang: LangRust,
			src:  "fn main() {\n    let x = 1\n}\n",
			want: []SyntaxError{{Line: 2, Column: 14, Missing: true, Text: "let x = 1"}},
		},
		{
			name: "bash missing fi",
			lang: LangBash,
			src:  "if [ -f x ]; then\n  echo hi\n",
			want: []SyntaxError{{Line: 2, Column: 10, Missing: true, Text: "echo hi"}},
		},
		{
			name: "c missing semicolon",
			lang: LangC,
			src:  "int main() { return 0 }",
			want: []SyntaxError{{Line: 1, Column: 22, Missing: true, Text: "int main() { return 0 }"}},
		},
		{
			name: "columns count runes",
			lang: LangJavaScript,
			src:  "const s = 'é' + ;\n",
			want: []SyntaxError{{Line: 1, Column: 15, Text: "const s = 'é' + ;"}},
		},
		{
			name: "no grammar",
			lang: "",
			src:  "this is { not code",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := SyntaxErrors(tt.lang, []byte(tt.src))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("SyntaxErrors(%s, %q) mismatch (-want +got):\n%s", tt.lang, tt.src, diff)
			}
		})
	}
}

func TestSyntaxErrorsSourceOrder(t *testing.T) {
	src := "function f() {\n  return [1, 2;\n}\nfunction g() {\n  return (3;\n}\n"
	want := []SyntaxError{
		{Line: 2, Column: 15, Missing: true, Text: "return [1, 2;"},
		{Line: 5, Column: 12, Missing: true, Text: "return (3;"},
	}
	if diff := cmp.Diff(want, SyntaxErrors(LangJavaScript, []byte(src))); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
}

func TestSyntaxErrorTextShortened(t *testing.T) {
	src := "x = (" + strings.Repeat("a + ", 100) + "\n"
	got := SyntaxErrors(LangPython, []byte(src))
	if len(got) == 0 {
		t.Fatal("want a syntax error")
	}
	if n := len([]rune(got[0].Text)); n > maxSyntaxText+1 {
		t.Errorf("Text has %d runes, want at most %d", n, maxSyntaxText+1)
	}
}

func TestCheckSyntaxParsed(t *testing.T) {
	tests := []struct {
		name string
		lang Lang
		src  string
		want bool
	}{
		{name: "grammar", lang: LangGo, src: "package p\n", want: true},
		{name: "empty source", lang: LangGo, src: "", want: true},
		{name: "no grammar", lang: "", src: "x", want: false},
		{name: "unknown language", lang: "cobol", src: "x", want: false},
		{name: "too large", lang: LangPython, src: strings.Repeat("x = 1\n", maxParseBytes/6+1), want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, got := CheckSyntax(tt.lang, []byte(tt.src)); got != tt.want {
				t.Errorf("CheckSyntax parsed = %v, want %v", got, tt.want)
			}
		})
	}
}

func FuzzSyntaxErrors(f *testing.F) {
	f.Add("python", "def f(x):\n    return (x + 1\n")
	f.Add("go", "package p\nfunc f() {")
	f.Add("javascript", "function f() { return [1, 2; }")
	f.Add("bash", "if [ -f x ]; then\n")
	f.Add("rust", "fn main() { let s = \"\xff")
	f.Add("cpp", "\n\n\n")
	f.Fuzz(func(t *testing.T, lang, src string) {
		for _, e := range SyntaxErrors(Lang(lang), []byte(src)) {
			if e.Line < 1 || e.Column < 1 {
				t.Fatalf("bad position %+v", e)
			}
			if e.Line > strings.Count(src, "\n")+1 {
				t.Fatalf("line %d past the end of %q", e.Line, src)
			}
		}
	})
}
