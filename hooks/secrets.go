package hooks

import (
	"path"
	"strings"
)

// Secrets files, which the tool policy never lets a model read (SPEC §9).
// A path is judged by its name, wherever it lies, so ~/.ssh/id_rsa,
// $HOME/.ssh/id_rsa and /home/u/.ssh/id_rsa are one file:
//
//   - dotenv files: .env and .env.* — but not .env.example, .env.sample,
//     .env.template or .env.dist, the committed templates that hold no value;
//   - private keys: id_rsa*, id_dsa*, id_ecdsa*, id_ed25519* (not *.pub, the
//     public half), *.pem, *.key, *.p12, *.pfx;
//   - credentials.json, .git-credentials, .netrc/_netrc, .pgpass, .pypirc;
//   - anything under .ssh/, .gnupg/, .azure/, .config/gcloud/; .aws/credentials,
//     .docker/config.json, .kube/config;
//   - .npmrc when it holds a token (_authToken, _auth, _password): a
//     project's .npmrc is read to tell; one that cannot be read (the user's
//     ~/.npmrc) is taken to hold one.
//
// Not covered: files named otherwise (prod.env, secrets.yaml), and a read
// through a path computed when the command runs.

// secretKind says what kind of secrets file p names, or "". npmrc reads an
// .npmrc; nil, or false, means it cannot be read.
func secretKind(p string, npmrc func(p string) ([]byte, bool)) string {
	p = strings.TrimSuffix(path.Clean(strings.ReplaceAll(p, `\`, "/")), "/")
	if p == "" || p == "." {
		return ""
	}
	base := path.Base(p)
	dirs := strings.Split(path.Dir(p), "/")
	for i, d := range dirs {
		switch {
		case d == ".ssh":
			return "an SSH file (~/.ssh)"
		case d == ".gnupg":
			return "a GnuPG keyring file (~/.gnupg)"
		case d == ".azure":
			return "an Azure credentials file (~/.azure)"
		case d == "gcloud" && i > 0 && dirs[i-1] == ".config":
			return "a Google Cloud credentials file (~/.config/gcloud)"
		}
	}
	parent := dirs[len(dirs)-1]
	switch {
	case base == ".ssh" || base == ".gnupg" || base == ".azure" || (base == "gcloud" && parent == ".config"):
		return "a credentials directory (" + base + ")"
	case base == ".env":
		return "a dotenv file"
	case strings.HasPrefix(base, ".env."):
		switch strings.TrimPrefix(base, ".env.") {
		case "example", "sample", "template", "dist":
			return ""
		}
		return "a dotenv file"
	case base == "credentials" && parent == ".aws":
		return "AWS credentials (~/.aws/credentials)"
	case base == "config.json" && parent == ".docker":
		return "Docker registry credentials (~/.docker/config.json)"
	case base == "config" && parent == ".kube":
		return "a kubeconfig (~/.kube/config)"
	case base == "credentials.json" || base == ".git-credentials":
		return "a credentials file"
	case base == ".netrc" || base == "_netrc" || base == ".pgpass" || base == ".pypirc":
		return "a password file (" + base + ")"
	case base == ".npmrc":
		if npmrc != nil {
			if data, ok := npmrc(p); ok && !npmToken(string(data)) {
				return ""
			}
		}
		return "an .npmrc holding a registry token"
	}
	for _, k := range []string{"id_rsa", "id_dsa", "id_ecdsa", "id_ed25519"} {
		if strings.HasPrefix(base, k) && !strings.HasSuffix(base, ".pub") {
			return "a private SSH key"
		}
	}
	switch path.Ext(base) {
	case ".pem", ".key", ".p12", ".pfx":
		return "a private key (" + path.Ext(base) + ")"
	}
	return ""
}

// npmToken reports an .npmrc line setting a token or password.
func npmToken(data string) bool {
	for _, line := range strings.Split(data, "\n") {
		key, _, ok := strings.Cut(line, "=")
		key = strings.TrimSpace(key)
		if ok && (strings.HasSuffix(key, "_authToken") || strings.HasSuffix(key, "_auth") || strings.HasSuffix(key, "_password")) {
			return true
		}
	}
	return false
}

// isGlob reports glob metacharacters.
func isGlob(p string) bool { return strings.ContainsAny(p, "*?[") }

// Names a glob is tried against: one aimed at secrets matches a secret name
// and no ordinary name (`.env*`, `*.pem`), so `*` or `**/*.go` are not.
var (
	secretNames   = []string{".env", ".env.local", ".env.production", "id_rsa", "id_ed25519", "server.pem", "server.key", "credentials.json", ".netrc", ".pgpass", ".git-credentials"}
	ordinaryNames = []string{"main.go", "README.md", "index.js", "app.py", "Makefile", "config.yaml", ".gitignore", "x", "a.txt"}
)

// globSecretKind says what kind of secrets file a glob pattern aims at, or "".
func globSecretKind(pattern string, npmrc func(string) ([]byte, bool)) string {
	if !isGlob(pattern) {
		return secretKind(pattern, npmrc)
	}
	pattern = path.Clean(pattern)
	// A secret directory anywhere in the literal part.
	if k := secretKind(path.Join(path.Dir(pattern), "x"), nil); k != "" {
		return k
	}
	base := path.Base(pattern)
	for _, o := range ordinaryNames {
		if ok, _ := path.Match(base, o); ok {
			return ""
		}
	}
	for _, s := range secretNames {
		if ok, _ := path.Match(base, s); ok {
			return secretKind(s, nil)
		}
	}
	return ""
}

// nonReaders take file names without reading them into their output.
func nonReaders(name string) bool {
	switch name {
	case "echo", "printf", "ls", "stat", "touch", "rm", "rmdir", "mkdir", "chmod", "chown", "test", "[",
		"which", "type", "cd", "find", "unlink", "shred", "basename", "dirname", "realpath", "readlink":
		return true
	}
	return false
}

// secretArgs notes a secrets file named by a command that reads its
// arguments: cat, head, cp, base64, tar, source, editors…
func (c *classifier) secretArgs(name string, args []string) {
	if c.out.Secret != "" || nonReaders(name) {
		return
	}
	if name == "git" {
		if p := positional(args); len(p) > 0 {
			switch p[0] {
			case "rm", "mv", "check-ignore", "ls-files", "status":
				return
			}
		}
	}
	switch name {
	case "cp", "mv", "install", "scp", "rsync", "ln":
		// The last operand is written, not read: cp .env.example .env.
		if p := positional(args); len(p) > 1 && args[len(args)-1] == p[len(p)-1] {
			args = args[:len(args)-1]
		}
	}
	for _, a := range args {
		// --env-file=.env, if=.env (dd), file=@.env (curl -F), @.env (curl -d)
		if i := strings.IndexByte(a, '='); i > 0 {
			a = a[i+1:]
		}
		a = strings.TrimPrefix(a, "@")
		if a == "" || (strings.HasPrefix(a, "-") && !strings.Contains(a, "/")) {
			continue
		}
		if kind := c.globOrName(a); kind != "" {
			c.out.Secret, c.out.SecretKind = a, kind
			return
		}
	}
}

func (c *classifier) globOrName(a string) string {
	if isGlob(a) {
		return globSecretKind(a, nil)
	}
	return c.secret(a)
}
