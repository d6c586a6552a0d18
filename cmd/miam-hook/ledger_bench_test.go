package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"miam/hooks/trace"
)

// BenchmarkAppendTrace weighs appendTrace (open O_APPEND, one write, close)
// against the same append under an exclusive flock, alone and with
// parallel writers: the lock is what appendTrace does without (ledger.go).
func BenchmarkAppendTrace(b *testing.B) {
	rec := trace.Record{Time: time.Now(), Session: "7d1f0c2e-4b9a-4e61-8f3d-2a5c9e0b6d41", Event: trace.PreToolUse,
		Host: "claude", Tool: "Bash", Args: "0123456789abcdef0123456789abcdef", Decision: trace.Deny, Rule: "tool_policy"}
	appendLocked := func(project string, rec trace.Record) error {
		line := rec.Append(make([]byte, 0, 512))
		f, err := openLedger(filepath.Join(project, ".miam", trace.FileName))
		if err != nil {
			return err
		}
		defer f.Close()
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			return err
		}
		defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return writeOnce(f, line)
	}
	for _, bc := range []struct {
		name string
		fn   func(string, trace.Record) error
	}{{"o_append", appendTrace}, {"flock", appendLocked}} {
		b.Run(bc.name, func(b *testing.B) {
			proj := b.TempDir()
			for b.Loop() {
				if err := bc.fn(proj, rec); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(bc.name+"-parallel", func(b *testing.B) {
			proj := b.TempDir()
			if err := os.MkdirAll(filepath.Join(proj, ".miam"), 0o755); err != nil {
				b.Fatal(err)
			}
			b.SetParallelism(4)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := bc.fn(proj, rec); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
