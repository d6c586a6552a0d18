package budgets

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// allLangs lists every grammar, for fuzzing and coverage checks.
var allLangs = []Lang{
	LangPython, LangGo, LangJavaScript, LangTypeScript, LangTSX, LangRust,
	LangJava, LangC, LangCPP, LangCSharp, LangRuby, LangBash,
}

func TestLangOf(t *testing.T) {
	tests := []struct {
		path string
		want Lang
	}{
		{"a.py", LangPython}, {"stubs/a.pyi", LangPython}, {"cmd/main.go", LangGo},
		{"a.js", LangJavaScript}, {"a.mjs", LangJavaScript}, {"a.cjs", LangJavaScript}, {"a.jsx", LangJavaScript},
		{"a.ts", LangTypeScript}, {"a.mts", LangTypeScript}, {"a.cts", LangTypeScript}, {"a.tsx", LangTSX},
		{"a.rs", LangRust}, {"A.java", LangJava}, {"a.c", LangC}, {"a.h", LangC},
		{"a.cc", LangCPP}, {"a.cpp", LangCPP}, {"a.cxx", LangCPP}, {"a.hpp", LangCPP}, {"a.hh", LangCPP},
		{"a.cs", LangCSharp}, {"a.rb", LangRuby}, {"a.sh", LangBash}, {"a.bash", LangBash},
		{"A.PY", LangPython}, {"README.md", ""}, {"Makefile", ""}, {"dir.py/file", ""}, {"", ""},
	}
	for _, tt := range tests {
		if got := LangOf(tt.path); got != tt.want {
			t.Errorf("LangOf(%q) = %q, want %q", tt.path, got, tt.want)
		}
	}
}

// TestCountSamples counts one real-looking file per language. The expected
// counts were worked out line by line from the files in testdata/.
func TestCountSamples(t *testing.T) {
	tests := []struct {
		file string
		want Counts
	}{
		// Docstrings of module, class and method are doc (the blank line
		// inside one is blank); the f-string's second line is code.
		{"sample.py", Counts{Code: 8, Comment: 2, Blank: 9, Doc: 6}},
		// Comment groups above package, type and func are doc; the
		// detached one is a comment; the raw string's lines are code.
		{"sample.go", Counts{Code: 12, Comment: 2, Blank: 5, Doc: 7}},
		{"sample.js", Counts{Code: 15, Comment: 2, Blank: 3, Doc: 4}},
		{"sample.ts", Counts{Code: 13, Comment: 2, Blank: 3, Doc: 1}},
		// `{/* a JSX comment */}` is a comment line.
		{"sample.tsx", Counts{Code: 11, Comment: 2, Blank: 2, Doc: 1}},
		{"sample.rs", Counts{Code: 18, Comment: 3, Blank: 5, Doc: 4}},
		// The text block's three lines are code.
		{"sample.java", Counts{Code: 16, Comment: 2, Blank: 4, Doc: 4}},
		{"sample.c", Counts{Code: 11, Comment: 3, Blank: 4, Doc: 4}},
		{"sample.cpp", Counts{Code: 11, Comment: 2, Blank: 4, Doc: 2}},
		{"sample.cs", Counts{Code: 15, Comment: 2, Blank: 2, Doc: 3}},
		// Comments right above class and def are doc; =begin/=end is a comment.
		{"sample.rb", Counts{Code: 13, Comment: 5, Blank: 4, Doc: 3}},
		// The shebang is a comment; the heredoc is code.
		{"sample.sh", Counts{Code: 9, Comment: 3, Blank: 4, Doc: 0}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			got := Count(LangOf(tt.file), src)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Count(%s) mismatch (-want +got):\n%s", tt.file, diff)
			}
			if got.Total() != lineCount(src) {
				t.Errorf("Total = %d, file has %d lines", got.Total(), lineCount(src))
			}
		})
	}
}

// TestClassify pins down the rules line by line on small snippets.
func TestClassify(t *testing.T) {
	const (
		C = LineCode
		M = LineComment
		B = LineBlank
		D = LineDoc
	)
	tests := []struct {
		name string
		lang Lang
		src  string
		want []LineKind
	}{
		{"empty", LangPython, "", []LineKind{}},
		{"final newline opens no line", LangPython, "x = 1\n", []LineKind{C}},
		{"no final newline", LangPython, "x = 1\n\ny = 2", []LineKind{C, B, C}},
		{"whitespace only is blank", LangGo, "package p\n \t \r\n", []LineKind{C, B}},
		{"crlf", LangPython, "x = 1\r\n# c\r\n\r\n", []LineKind{C, M, B}},
		{"code with trailing comment is code", LangPython, "x = 1  # one\n", []LineKind{C}},
		{"python function docstring", LangPython,
			"def f():\n    '''One.\n\n    Two.'''\n    return 1\n", []LineKind{C, D, B, D, C}},
		{"comment before module docstring", LangPython,
			"#!/usr/bin/env python\n\"\"\"Doc.\"\"\"\nx = 1\n", []LineKind{M, D, C}},
		{"string after a statement is code", LangPython,
			"x = 1\n\"\"\"not a\ndocstring\"\"\"\n", []LineKind{C, C, C}},
		{"docstring in an if block is code", LangPython,
			"x = 1\nif x:\n    \"\"\"s\"\"\"\n", []LineKind{C, C, C}},
		{"python multi-line string", LangPython,
			"s = '''a\nb\n'''\n", []LineKind{C, C, C}},
		{"go comment inside a function", LangGo,
			"package p\n\nfunc f() {\n\t// c\n}\n", []LineKind{C, B, C, M, C}},
		{"go doc needs adjacency", LangGo,
			"package p\n\n// detached\n\n// Doc.\nvar x = 1\n", []LineKind{C, B, M, B, D, C}},
		{"go block comment then code, documenting it", LangGo,
			"package p\n\n/* a\nb */ var x = 1\n", []LineKind{C, B, D, C}},
		{"rust four slashes are not doc", LangRust,
			"//// banner\n/// Doc.\n//! Inner.\nfn f() {}\n", []LineKind{M, D, D, C}},
		{"c empty block comment is not doc", LangC,
			"/**/\n/** Doc. */\nint x;\n", []LineKind{M, D, C}},
		{"js template literal lines are code", LangJavaScript,
			"const s = `a\n\nb`;\n", []LineKind{C, B, C}},
		{"java line and block comments", LangJava,
			"class A {\n  // c\n  /* d\n   e */\n}\n", []LineKind{C, M, M, M, C}},
		{"csharp xml doc", LangCSharp,
			"/// <summary>A.</summary>\nclass A {}\n", []LineKind{D, C}},
		{"ruby doc needs a def below", LangRuby,
			"# c\nx = 1\n# Doc.\ndef f\nend\n", []LineKind{M, C, D, C, C}},
		{"bash comment", LangBash, "# c\necho hi # t\n", []LineKind{M, C}},
		{"no grammar counts non-blank lines", "", "# c\n\nx\n", []LineKind{C, B, C}},
		{"garbage still classifies", LangPython, "def (:\n  # c\n\x00\xff\n", []LineKind{C, M, C}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Classify(tt.lang, []byte(tt.src))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Classify mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCommentsNeverCode checks, in every language, that comment-only and
// blank lines never count as code.
func TestCommentsNeverCode(t *testing.T) {
	comments := map[Lang]string{
		LangPython: "# a\n\n   # b\n", LangRuby: "# a\n\n   # b\n", LangBash: "# a\n\n   # b\n",
	}
	for _, l := range allLangs {
		src, ok := comments[l]
		if !ok {
			src = "// a\n\n   // b\n/* c\n\n d */\n"
		}
		t.Run(string(l), func(t *testing.T) {
			got := Count(l, []byte(src))
			if got.Code != 0 || got.Total() != lineCount([]byte(src)) {
				t.Errorf("Count(%q) = %+v, want no code", src, got)
			}
		})
	}
}

// TestCountHugeInput checks that a file too large to parse is counted as
// non-blank lines rather than slowing the hook down.
func TestCountHugeInput(t *testing.T) {
	src := []byte(strings.Repeat("# comment\n\n", maxParseBytes/10))
	want := Counts{Code: maxParseBytes / 10, Blank: maxParseBytes / 10}
	if diff := cmp.Diff(want, Count(LangPython, src)); diff != "" {
		t.Errorf("Count mismatch (-want +got):\n%s", diff)
	}
}

func FuzzCount(f *testing.F) {
	seedFuzz(f)
	f.Fuzz(func(t *testing.T, li uint8, src []byte) {
		l := allLangs[int(li)%len(allLangs)]
		kinds := Classify(l, src)
		if len(kinds) != lineCount(src) {
			t.Fatalf("%s: %d kinds for %d lines", l, len(kinds), lineCount(src))
		}
		c := Count(l, src)
		if c.Total() != lineCount(src) {
			t.Fatalf("%s: Count %+v totals %d, want %d", l, c, c.Total(), lineCount(src))
		}
		for i, k := range kinds {
			if k > LineDoc {
				t.Fatalf("%s: line %d has kind %d", l, i, k)
			}
		}
	})
}

// seedFuzz seeds a fuzz target with every sample file in its language.
func seedFuzz(f *testing.F) {
	entries, err := os.ReadDir("testdata")
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range entries {
		l := LangOf(e.Name())
		if l == "" {
			continue
		}
		src, err := os.ReadFile(filepath.Join("testdata", e.Name()))
		if err != nil {
			f.Fatal(err)
		}
		for i, al := range allLangs {
			if al == l {
				f.Add(uint8(i), src)
			}
		}
	}
	f.Add(uint8(0), []byte("\"\"\"\n"))
	f.Add(uint8(1), []byte("/*"))
	f.Add(uint8(10), []byte("=begin\n"))
}

// generated writes a plausible n-line file: functions with docstrings or
// doc comments, comments, blank lines and statements.
func generated(l Lang, n int) []byte {
	var b strings.Builder
	switch l {
	case LangPython:
		b.WriteString("\"\"\"Generated module.\"\"\"\n\nimport os\n\n")
		for i := 0; strings.Count(b.String(), "\n") < n-10; i++ {
			fmt.Fprintf(&b, "\ndef func_%d(a, b):\n    \"\"\"Add a and b.\"\"\"\n    # add them\n    total = a + b  # sum\n    if total > %d:\n        return os.path.join(str(a), \"x\")\n    return total\n\n", i, i)
		}
	case LangGo:
		b.WriteString("// Package gen is generated.\npackage gen\n\nimport \"strconv\"\n")
		for i := 0; strings.Count(b.String(), "\n") < n-10; i++ {
			fmt.Fprintf(&b, "\n// Func%d adds a and b.\nfunc Func%d(a, b int) string {\n\t// add them\n\ttotal := a + b // sum\n\tif total > %d {\n\t\treturn strconv.Itoa(a)\n\t}\n\treturn \"x\"\n}\n", i, i, i)
		}
	}
	for i := 0; strings.Count(b.String(), "\n") < n; i++ {
		if l == LangGo {
			fmt.Fprintf(&b, "var v%d = %d\n", i, i)
		} else {
			fmt.Fprintf(&b, "v%d = %d\n", i, i)
		}
	}
	return []byte(b.String())
}

func benchmarkCount(b *testing.B, l Lang) {
	src := generated(l, 2000)
	lines := lineCount(src)
	if lines != 2000 {
		b.Fatalf("generated %d lines, want 2000", lines)
	}
	b.SetBytes(int64(len(src)))
	b.ResetTimer()
	for b.Loop() {
		Count(l, src)
	}
	b.ReportMetric(float64(lines*b.N)/b.Elapsed().Seconds(), "lines/s")
}

func BenchmarkCountPython2000(b *testing.B) { benchmarkCount(b, LangPython) }

func BenchmarkCountGo2000(b *testing.B) { benchmarkCount(b, LangGo) }
