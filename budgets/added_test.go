package budgets

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAdded(t *testing.T) {
	tests := []struct {
		name          string
		lang          Lang
		before, after string
		want          Counts
	}{
		{"new file", LangPython, "", "x = 1\n\n# c\ny = 2\n", Counts{Code: 2, Comment: 1, Blank: 1}},
		{"identical", LangPython, "x = 1\ny = 2\n", "x = 1\ny = 2\n", Counts{}},
		{"deleted lines add nothing", LangPython, "x = 1\ny = 2\n", "x = 1\n", Counts{}},
		{"reindent adds nothing", LangPython, "if a:\n    x = 1\n", "if a:\n        x = 1\n", Counts{}},
		{"reorder adds nothing", LangGo, "package p\nvar a = 1\nvar b = 2\n", "package p\nvar b = 2\nvar a = 1\n", Counts{}},
		{"one line changed", LangPython, "x = 1\ny = 2\n", "x = 1\ny = 3\n", Counts{Code: 1}},
		{"duplicates count beyond before", LangPython, "x += 1\n", "x += 1\nx += 1\nx += 1\n", Counts{Code: 2}},
		{"comment and blank lines are not code", LangGo,
			"package p\n", "package p\n\n// Doc.\nfunc F() {\n\t// c\n}\n", Counts{Code: 2, Comment: 1, Blank: 1, Doc: 1}},
		{"new docstring is doc", LangPython,
			"def f():\n    return 1\n", "def f():\n    \"\"\"Say.\n\n    More.\"\"\"\n    return 1\n", Counts{Doc: 2, Blank: 1}},
		// The last occurrence is the added one: it sits inside a string,
		// so it is code, although the first occurrence (a comment) is not.
		{"last occurrences are the added ones", LangPython,
			"# x\n", "# x\ns = '''\n# x\n'''\n", Counts{Code: 3}},
		{"no grammar", "", "a\n", "a\nb\n\nc\n", Counts{Code: 2, Blank: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var before []byte
			if tt.before != "" {
				before = []byte(tt.before)
			}
			got := Added(tt.lang, before, []byte(tt.after))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Added mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestApplyEdit(t *testing.T) {
	tests := []struct {
		name               string
		content, old, new_ string
		all                bool
		want               string
		ok                 bool
	}{
		{"first occurrence", "a b a", "a", "c", false, "c b a", true},
		{"replace all", "a b a", "a", "c", true, "c b c", true},
		{"not found", "a b", "z", "c", false, "a b", false},
		{"empty old creates a file", "", "", "new", false, "new", true},
		{"empty old on a non-empty file fails", "x", "", "new", false, "x", false},
		{"deletion", "a\nb\n", "b\n", "", false, "a\n", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ApplyEdit(tt.content, tt.old, tt.new_, tt.all)
			if got != tt.want || ok != tt.ok {
				t.Errorf("ApplyEdit = %q, %v; want %q, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestEditAdded(t *testing.T) {
	const file = "import os\n\ndef f():\n    foo()\n    foo()\n\ndef g():\n    foo()\n    foo()\n"
	tests := []struct {
		name   string
		onDisk string
		exists bool
		edits  []Edit
		want   Counts
	}{
		{"one edit", file, true,
			[]Edit{{Old: "def g():", New: "def g():\n    \"\"\"G.\"\"\"\n    bar()"}},
			Counts{Code: 1, Doc: 1}},
		// Four occurrences of foo() each become three lines, one of them
		// foo() itself: 4 × 2 = 8 new lines.
		{"replace all counts every occurrence", file, true,
			[]Edit{{Old: "    foo()", New: "    log()\n    foo()\n    done()", ReplaceAll: true}},
			Counts{Code: 8}},
		{"without replace all only the first", file, true,
			[]Edit{{Old: "    foo()", New: "    log()\n    foo()\n    done()"}},
			Counts{Code: 2}},
		{"multi edit applies in order", file, true,
			[]Edit{{Old: "def f():", New: "def f(x):"}, {Old: "def f(x):", New: "def f(x, y):\n    # why"}},
			Counts{Code: 1, Comment: 1}},
		{"missing file falls back to the edits", "", false,
			[]Edit{{Old: "", New: "a = 1\nb = 2\n# c\n"}},
			Counts{Code: 2, Comment: 1}},
		{"edit not found falls back to the edits", file, true,
			[]Edit{{Old: "nowhere()", New: "nowhere()\nsomewhere()"}},
			Counts{Code: 1}},
		{"fallback with replace all counts once", "", false,
			[]Edit{{Old: "x()", New: "x()\ny()\nz()", ReplaceAll: true}},
			Counts{Code: 2}},
		{"deletion adds nothing", file, true,
			[]Edit{{Old: "def g():\n    foo()\n    foo()\n", New: ""}},
			Counts{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := EditAdded(LangPython, []byte(tt.onDisk), tt.exists, tt.edits)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("EditAdded mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func BenchmarkAdded(b *testing.B) {
	var before, after strings.Builder
	for i := range 50 {
		fmt.Fprintf(&before, "def f%d(a):\n    \"\"\"Doc.\"\"\"\n    # c\n    x = a + %d\n    return x\n\n\n", i, i)
		fmt.Fprintf(&after, "def f%d(a):\n    \"\"\"Doc.\"\"\"\n    # c\n    x = a + %d\n    y = x * 2\n    return y\n\n", i, i)
	}
	for range 50 {
		before.WriteString("pass\n")
		after.WriteString("pass\n")
	}
	bb, ab := []byte(before.String()), []byte(after.String())
	if n := lineCount(ab); n != 400 {
		b.Fatalf("after has %d lines, want 400", n)
	}
	for b.Loop() {
		Added(LangPython, bb, ab)
	}
	b.ReportMetric(float64(400*b.N)/b.Elapsed().Seconds(), "lines/s")
}
