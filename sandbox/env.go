package sandbox

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// TrustedPath is the PATH inside the sandbox and the only one argv[0] is
// resolved on: system directories, never the clone, the cwd or a relative
// entry.
var trustedPath = []string{"/usr/local/bin", "/usr/bin", "/bin"}

// fixedEnv are the variables every command gets; Policy.Env cannot change
// them.
var fixedEnv = [][2]string{
	{"PATH", strings.Join(trustedPath, ":")},
	{"HOME", "/tmp/home"},
	{"TMPDIR", "/tmp"},
	{"LANG", "C.UTF-8"},
	{"TERM", "dumb"},
	{"CI", "1"},
}

// Environ builds the command's environment from nothing: the fixed
// variables, then extra in name order. A secret-looking name is refused
// (ErrSecretEnv) even when the project allow-lists it, and so is a name
// that is not a plain identifier or that overrides a fixed variable.
func Environ(extra map[string]string) ([]string, error) {
	env := make([]string, 0, len(fixedEnv)+len(extra))
	fixed := map[string]bool{}
	for _, kv := range fixedEnv {
		env = append(env, kv[0]+"="+kv[1])
		fixed[kv[0]] = true
	}
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		switch {
		case !validName(k):
			return nil, fmt.Errorf("%w: %q is not a variable name", ErrPolicy, k)
		case fixed[k]:
			return nil, fmt.Errorf("%w: %s is fixed by the sandbox", ErrPolicy, k)
		case SecretName(k):
			return nil, fmt.Errorf("%w: %s", ErrSecretEnv, k)
		}
		env = append(env, k+"="+extra[k])
	}
	return env, nil
}

func validName(k string) bool {
	if k == "" || k[0] >= '0' && k[0] <= '9' {
		return false
	}
	for _, r := range k {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// SecretName tells whether an environment variable's name looks like it
// holds a secret or reaches a host service (SANDBOX.md §3.7).
func SecretName(k string) bool {
	u := strings.ToUpper(k)
	for _, s := range []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "PRIVATE", "API_KEY", "APIKEY", "AUTH"} {
		if strings.Contains(u, s) {
			return true
		}
	}
	if u == "KEY" || strings.HasSuffix(u, "_KEY") {
		return true
	}
	for _, p := range []string{"AWS_", "GITHUB_", "GH_", "ANTHROPIC_", "OPENAI_", "OPENROUTER_", "PYPI_", "NPM_", "GOOGLE_", "AZURE_", "LD_"} {
		if strings.HasPrefix(u, p) {
			return true
		}
	}
	switch u {
	case "SSH_AUTH_SOCK", "GPG_AGENT_INFO", "DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR", "KUBECONFIG", "DOCKER_HOST", "DOCKER_CONFIG", "NETRC":
		return true
	}
	return false
}
