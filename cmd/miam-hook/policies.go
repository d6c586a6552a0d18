package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"miam/hooks/policies"
)

// loadPolicies reads the project's .miam/policies.yaml when the event is
// one the policies act on (act). present is false when the file does not
// exist, and then nothing else is done; a file that cannot be read or
// decoded is present with its error, which the decision shows while it
// lets the call through.
func loadPolicies(project string, act bool) (set *policies.Set, present bool, err error) {
	if !act {
		return nil, false, nil
	}
	name := filepath.Join(project, filepath.FromSlash(policies.File))
	data, err := os.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, true, fmt.Errorf("read policies: %w", err)
	}
	s, err := policies.Decode(filepath.FromSlash(policies.File), data)
	if err != nil {
		return nil, true, err
	}
	return &s, true, nil
}

// maxTranscriptRead bounds one read of the transcript for a cost cap; the
// rest is read by the next calls.
const maxTranscriptRead = 32 << 20

// readTranscript reads the session's transcript from offset on. A file
// shorter than offset was replaced: it is read again from the start by the
// caller, which sees no new line here.
func readTranscript(path string, offset int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, err
	}
	return io.ReadAll(io.LimitReader(f, maxTranscriptRead))
}
