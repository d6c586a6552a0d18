package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportClosureStaysSmall keeps the per-call hook light: it runs on every
// tool call, so it must not link the daemon's side.
func TestImportClosureStaysSmall(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	forbidden := []string{
		"net/http",
		"github.com/ollama/",
		"github.com/sashabaranov/go-openai",
		"github.com/anthropics/",
		"github.com/modelcontextprotocol/",
		"modernc.org/sqlite",
		"miam/delegate",
		"miam/controls",
		"miam/sandbox",
		// Its package init alone costs ~0.45 ms of every hook call.
		"github.com/go-playground/validator/",
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps printed %d packages; the check would prove nothing", len(deps))
	}
	for _, d := range deps {
		if d == "miam/delegate/wire" {
			continue
		}
		for _, f := range forbidden {
			if d == f || strings.HasPrefix(d, f) {
				t.Errorf("miam-hook links %s: the hook binary must not import the daemon side", d)
			}
		}
	}
}
