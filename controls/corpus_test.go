package controls

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"miam/delegate/wire"
)

// corpusCase is one labelled answer of fixtures/controls: a txtar archive
// with request.json, answer, expect.json (control name → expected ok for
// every control the request runs, commande aside), files/<path> for the
// joined files and manifests/<path> for the project's manifests.
type corpusCase struct {
	name      string
	req       wire.Request
	answer    string
	expect    map[string]bool
	files     map[string][]byte
	manifests map[string][]byte
}

func loadCorpus(t testing.TB) []corpusCase {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("..", "fixtures", "controls", "*.txtar"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no corpus in fixtures/controls (%v)", err)
	}
	var out []corpusCase
	for _, p := range paths {
		a, err := txtar.ParseFile(p)
		if err != nil {
			t.Fatal(err)
		}
		c := corpusCase{name: strings.TrimSuffix(filepath.Base(p), ".txtar"), files: map[string][]byte{}, manifests: map[string][]byte{}}
		var haveReq, haveAnswer, haveExpect bool
		for _, f := range a.Files {
			switch {
			case f.Name == "request.json":
				haveReq = true
				if err := json.Unmarshal(f.Data, &c.req); err != nil {
					t.Fatalf("%s: request.json: %v", p, err)
				}
			case f.Name == "expect.json":
				haveExpect = true
				if err := json.Unmarshal(f.Data, &c.expect); err != nil {
					t.Fatalf("%s: expect.json: %v", p, err)
				}
			case f.Name == "answer":
				haveAnswer = true
				c.answer = string(f.Data)
			case strings.HasPrefix(f.Name, "files/"):
				c.files[strings.TrimPrefix(f.Name, "files/")] = f.Data
			case strings.HasPrefix(f.Name, "manifests/"):
				c.manifests[strings.TrimPrefix(f.Name, "manifests/")] = f.Data
			default:
				t.Fatalf("%s: unknown section %q", p, f.Name)
			}
		}
		if !haveReq || !haveAnswer || !haveExpect {
			t.Fatalf("%s: request.json, answer and expect.json are required", p)
		}
		out = append(out, c)
	}
	return out
}

func (c corpusCase) input() Input {
	files := c.files
	if len(files) == 0 {
		files = nil
	}
	in := NewInput(c.req, c.answer, files)
	if len(c.manifests) > 0 {
		in.Manifests = c.manifests
	}
	return in
}

// good reports whether every control is expected to pass.
func (c corpusCase) good() bool {
	for _, ok := range c.expect {
		if !ok {
			return false
		}
	}
	return true
}

// linterFor reports whether the lint control has its tool for the case.
func linterFor(in Input) bool {
	var tools []string
	switch in.Lang {
	case "python":
		tools = []string{"ruff", "pyflakes", "pyflakes3"}
	case "go":
		tools = []string{"go"}
	default:
		return false
	}
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err == nil {
			return true
		}
	}
	return false
}

// TestCorpus runs every answer of fixtures/controls through Full(): each
// control on its own for its precision and recall (a positive is a failed
// answer), and Run for the overall verdict. It fails when a bad answer is
// judged valide or more than 5 % of the good ones fail.
func TestCorpus(t *testing.T) {
	cases := loadCorpus(t)
	reg := Full()
	type tally struct{ tp, fp, fn, tn int }
	per := map[string]*tally{}
	langs := map[string]bool{}
	var good, goodFailed, bad, badPassed int
	ctx := context.Background()
	for _, c := range cases {
		in := c.input()
		if in.Lang != "" {
			langs[string(in.Lang)] = true
		} else if l := c.req.Langue; l != "" {
			langs["text:"+l] = true
		}
		names := slices.DeleteFunc(Selected(c.req), func(n string) bool { return n == NameCommande })
		var labelled []string
		for n := range c.expect {
			labelled = append(labelled, n)
		}
		slices.Sort(labelled)
		sortedNames := slices.Sorted(slices.Values(names))
		if !slices.Equal(labelled, sortedNames) {
			t.Errorf("%s: labels %v, but the request runs %v", c.name, labelled, sortedNames)
			continue
		}
		lintMissing := !linterFor(in) && slices.Contains(names, NameLint)
		for _, n := range names {
			ctl, _ := reg.Lookup(n)
			got := checkSafely(ctx, ctl, in)
			want := c.expect[n]
			if n == NameLint && lintMissing && !want {
				t.Logf("%s: no linter installed, lint not judged", c.name)
				continue
			}
			tl := per[n]
			if tl == nil {
				tl = &tally{}
				per[n] = tl
			}
			switch {
			case !got.OK && !want:
				tl.tp++
				if testing.Verbose() {
					t.Logf("%s: %s: %s", c.name, n, got.Message)
				}
			case !got.OK && want:
				tl.fp++
				t.Logf("%s: %s failed a good answer: %s", c.name, n, got.Message)
			case got.OK && !want:
				tl.fn++
				t.Logf("%s: %s missed the fault (%s)", c.name, n, got.Message)
			default:
				tl.tn++
			}
		}
		cs, _ := reg.Select(names)
		_, ok := Run(ctx, cs, in)
		if c.good() {
			good++
			if !ok {
				goodFailed++
				t.Logf("%s: good answer failed", c.name)
			}
		} else {
			onlyLint := true
			for n, want := range c.expect {
				onlyLint = onlyLint && (want || n == NameLint)
			}
			if onlyLint && lintMissing {
				continue
			}
			bad++
			if ok {
				badPassed++
				t.Errorf("%s: bad answer judged valide", c.name)
			}
		}
	}
	t.Logf("corpus: %d answers (%d good, %d bad) in %d languages", len(cases), good, bad, len(langs))
	t.Logf("%-11s %4s %4s %4s %4s %9s %6s", "control", "TP", "FP", "FN", "TN", "precision", "recall")
	for _, n := range slices.Sorted(func(yield func(string) bool) {
		for n := range per {
			if !yield(n) {
				return
			}
		}
	}) {
		tl := per[n]
		t.Logf("%-11s %4d %4d %4d %4d %9s %6s", n, tl.tp, tl.fp, tl.fn, tl.tn, ratio(tl.tp, tl.tp+tl.fp), ratio(tl.tp, tl.tp+tl.fn))
	}
	t.Logf("good answers failed: %d/%d; bad answers judged valide: %d/%d", goodFailed, good, badPassed, bad)
	if len(cases) < 60 {
		t.Errorf("the corpus has %d answers, want at least 60", len(cases))
	}
	if good > 0 && float64(goodFailed) > 0.05*float64(good) {
		t.Errorf("%d of %d good answers failed: more than 5%%", goodFailed, good)
	}
}

func ratio(a, b int) string {
	if b == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f", float64(a)/float64(b))
}
