package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"miam/budgets"
	"miam/hooks"
)

// statusInput is what Claude Code pipes to a statusLine command, as far as
// rule 9 needs it.
type statusInput struct {
	SessionID string `json:"session_id"`
	Cwd       string `json:"cwd"`
	Workspace struct {
		ProjectDir string `json:"project_dir"`
		CurrentDir string `json:"current_dir"`
	} `json:"workspace"`
}

// decodeStatusInput reads the status line payload and picks the project:
// the workspace's project dir, else CLAUDE_PROJECT_DIR (envProject), else
// the cwd.
func decodeStatusInput(data []byte, envProject string) (sessionID, project string, err error) {
	var in statusInput
	if err := json.Unmarshal(data, &in); err != nil {
		return "", "", fmt.Errorf("status line payload: %w", err)
	}
	if in.SessionID == "" {
		return "", "", errors.New("status line payload: no session_id")
	}
	for _, p := range []string{in.Workspace.ProjectDir, envProject, in.Cwd, in.Workspace.CurrentDir} {
		if p != "" {
			return in.SessionID, p, nil
		}
	}
	return "", "", errors.New("status line payload: no project directory (workspace.project_dir, cwd)")
}

// runStatusline prints rule 9's line for Claude Code's statusLine setting
// (`miam install --statusline` sets it up). It reads the session's state
// without its lock: the file is only ever replaced whole. A status line is
// not the place for an error: on a problem it prints "miam · ?" and says why
// on stderr, and exits 0.
func runStatusline(_ context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		return fmt.Errorf("usage: miam statusline (reads Claude Code's status line JSON on stdin)")
	}
	data, err := io.ReadAll(io.LimitReader(stdin, 1<<20))
	var sid, project string
	if err == nil {
		sid, project, err = decodeStatusInput(data, os.Getenv("CLAUDE_PROJECT_DIR"))
	}
	if err != nil {
		fmt.Fprintln(stdout, "miam · ?")
		fmt.Fprintf(stderr, "miam statusline: %v\n", err)
		return nil
	}
	st := budgets.Store{Dir: filepath.Join(project, ".miam", "state")}.Load(sid)
	fmt.Fprintln(stdout, hooks.StatusLine(st))
	return nil
}
