package sandbox

import "testing"

func TestUnsafeGitKey(t *testing.T) {
	for key, want := range map[string]bool{
		"filter.evil.clean":            true,
		"Filter.Evil.Process":          true,
		"filter.lfs.required":          true,
		"include.path":                 true,
		"includeIf.gitdir:/x/.path":    true,
		"diff.evil.textconv":           true,
		"DIFF.Evil.Command":            true,
		"diff.a.b.command":             true,
		"merge.evil.driver":            true,
		"gpg.program":                  true,
		"gpg.ssh.program":              true,
		"core.worktree":                true,
		"credential.helper":            true,
		"log.showSignature":            true,
		"core.fsmonitor":               false, // overridden on the command line
		"core.hookspath":               false,
		"diff.external":                false,
		"diff.evil.cachetextconv":      false,
		"core.repositoryformatversion": false,
		"remote.origin.url":            false,
		"branch.main.merge":            false,
	} {
		if got := unsafeGitKey(key); got != want {
			t.Errorf("unsafeGitKey(%q) = %v, want %v", key, got, want)
		}
	}
}
