package hooks

import (
	"fmt"
	"io/fs"
	"path"
	"strings"

	"miam/budgets"
	"miam/hooks/config"
)

// RuleToolPolicy names governance's tool policy (SPEC §9) in config and
// traces.
const RuleToolPolicy = "tool_policy"

// The tool policy judges every PreToolUse, of the main agent and of
// subagents alike, before and regardless of the delegation rules:
//
//   - reading a secrets file (secrets.go) through Read, Grep (path or glob),
//     Glob or Bash is denied on every profile;
//   - a destructive Bash command (classify.go) is denied, or asked on
//     profile strict;
//   - anything else gets no opinion: a read-only call leaves as soon as it
//     is classified, a mutating one is the delegation rules' business.
//
// rules.tool_policy: measure counts instead of denying, off skips it; only
// the user's config may set either (config.Load).

// decideToolPolicy applies the tool policy to a PreToolUse.
func decideToolPolicy(ev Event, st budgets.State, env Env) (Verdict, budgets.State) {
	if ev.Name != PreToolUse {
		return Verdict{}, st
	}
	mode := env.Config.Rules.ToolPolicy.Or(config.Deny)
	if mode == config.Off {
		return Verdict{}, st
	}
	v := toolPolicy(ev.Tool, env)
	if v.IsZero() || (v.Decision == Ask && mode == config.Deny) {
		return v, st
	}
	v, st, _ = apply(mode, v, st)
	return v, st
}

// toolPolicy is the verdict of the tool policy on one call.
func toolPolicy(t Tool, env Env) Verdict {
	npmrc := npmrcReader(env)
	switch in := t.Input.(type) {
	case *ReadInput:
		if k := secretKind(in.FilePath, npmrc); k != "" {
			return secretVerdict(t.Name, in.FilePath, k)
		}
	case *GrepInput:
		if k := secretKind(in.Path, npmrc); k != "" {
			return secretVerdict(t.Name, in.Path, k)
		}
		if in.Glob != "" {
			if k := globSecretKind(in.Glob, npmrc); k != "" {
				return secretVerdict(t.Name, in.Glob, k)
			}
		}
	case *GlobInput:
		p := in.Pattern
		if in.Path != "" && !path.IsAbs(p) {
			p = path.Join(in.Path, p)
		}
		if k := globSecretKind(p, npmrc); k != "" {
			return secretVerdict(t.Name, in.Pattern, k)
		}
	case *BashInput:
		cl := classifyCommand(in.Command, func() string { return currentBranch(env) },
			func(p string) string { return secretKind(p, npmrc) })
		if cl.Secret != "" {
			return secretVerdict(t.Name, cl.Secret, cl.SecretKind)
		}
		if cl.Class == Destructive {
			return destructiveVerdict(cl, in.Command, env.Config.Governance.Profile.Or())
		}
	}
	return Verdict{}
}

func secretVerdict(tool, p, kind string) Verdict {
	if isGlob(p) {
		p = "files matching " + p
	}
	return Verdict{Decision: Deny, Rule: RuleToolPolicy, Reason: fmt.Sprintf(
		"miam tool policy (secrets): this %s call reads %s, %s. Secrets files are never read, on any profile: "+
			"their values would enter this conversation. Ask the user for what you need from it (a variable's name, not its value), "+
			"or read a template such as .env.example.", tool, p, kind)}
}

func destructiveVerdict(cl Classification, cmd string, profile config.Profile) Verdict {
	if len(cmd) > 200 {
		cmd = cmd[:200] + "…"
	}
	if profile == config.ProfileStrict {
		return Verdict{Decision: Ask, Rule: RuleToolPolicy, Reason: fmt.Sprintf(
			"miam tool policy (destructive): recognised %s in `%s`. Profile strict asks the user to confirm destructive commands.",
			cl.What, cmd)}
	}
	return Verdict{Decision: Deny, Rule: RuleToolPolicy, Reason: fmt.Sprintf(
		"miam tool policy (destructive): recognised %s in `%s`. Destructive commands are refused on profile %s. "+
			"Use a narrower command (delete the files you made by name, push without force), or ask the user to run it themselves.",
		cl.What, cmd, profile)}
}

// currentBranch reads the project's checked-out branch from .git/HEAD; ""
// when it cannot be told (no repository, detached HEAD, a worktree).
func currentBranch(env Env) string {
	if env.Files == nil {
		return ""
	}
	data, err := fs.ReadFile(env.Files, ".git/HEAD")
	if err != nil {
		return ""
	}
	ref, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "ref: refs/heads/")
	if !ok {
		return ""
	}
	return ref
}

// npmrcReader reads an .npmrc of the project; one outside cannot be read.
func npmrcReader(env Env) func(string) ([]byte, bool) {
	return func(p string) ([]byte, bool) {
		rel, inside := relPath(env.Project, p)
		return readFile(env, rel, inside)
	}
}

// mayTouchSecret is the cheap, config-free test NeedsState uses for the
// calls whose only possible verdict is the tool policy's: a Read, Grep or
// Glob that names a secrets file.
func mayTouchSecret(t Tool) bool {
	switch in := t.Input.(type) {
	case *ReadInput:
		return secretKind(in.FilePath, nil) != ""
	case *GrepInput:
		return secretKind(in.Path, nil) != "" || (in.Glob != "" && globSecretKind(in.Glob, nil) != "")
	case *GlobInput:
		p := in.Pattern
		if in.Path != "" && !path.IsAbs(p) {
			p = path.Join(in.Path, p)
		}
		return globSecretKind(p, nil) != ""
	}
	return false
}
