// Package config decodes miam's configuration (.miam/config.yaml and the
// user's $XDG_CONFIG_HOME/miam/config.yaml) strictly: an unknown key or a bad
// value is an error naming the file, the line and the key.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Mode is how a rule acts: deny (refuse with a ready delegation call),
// measure (count and report only) or off. The empty Mode means deny.
type Mode string

// The rule modes.
const (
	Deny    Mode = "deny"
	Measure Mode = "measure"
	Off     Mode = "off"
)

// UnmarshalYAML refuses anything but the three modes, naming the line.
func (m *Mode) UnmarshalYAML(n *yaml.Node) error {
	switch Mode(n.Value) {
	case Deny, Measure, Off:
		*m = Mode(n.Value)
		return nil
	}
	return fmt.Errorf("line %d: %q is not a rule mode (deny, measure or off)", n.Line, n.Value)
}

// Or returns m, or def when m is unset.
func (m Mode) Or(def Mode) Mode {
	if m == "" {
		return def
	}
	return m
}

// Config is the whole of SPEC §12. Zero fields mean the documented default;
// read values through the accessor methods, which apply the defaults.
type Config struct {
	Rules            Rules      `yaml:"rules"`
	Budgets          Budgets    `yaml:"budgets"`
	CheminsSensibles []string   `yaml:"chemins_sensibles"`
	TestGlobs        []string   `yaml:"test_globs"`
	Engines          Engines    `yaml:"engines"`
	Sandbox          Sandbox    `yaml:"sandbox"`
	Delegation       Delegation `yaml:"delegation"`
	Governance       Governance `yaml:"governance"`
	Agents           Agents     `yaml:"agents"`
}

// Agents names the project's agents for governance.
type Agents struct {
	// Entry is the entry persona: a project-relative file whose text the
	// session adopts at SessionStart (SPEC §9). Empty means none.
	Entry ProjectPath `yaml:"entry"`
}

// ProjectPath is a slash-separated path relative to the project that stays
// inside it. The empty ProjectPath means none.
type ProjectPath string

// UnmarshalYAML refuses an absolute path or one that leaves the project,
// naming the line.
func (p *ProjectPath) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: want a project-relative path", n.Line)
	}
	v := strings.TrimPrefix(n.Value, "./")
	if v == "" {
		*p = ""
		return nil
	}
	c := path.Clean(v)
	if strings.HasPrefix(v, "/") || strings.Contains(v, `\`) || c == "." || !fs.ValidPath(c) {
		return fmt.Errorf("line %d: %q is not a path inside the project (relative, no ..)", n.Line, n.Value)
	}
	*p = ProjectPath(c)
	return nil
}

// Rules holds each rule's mode.
type Rules struct {
	Tests       Mode `yaml:"tests"`
	WriteBudget Mode `yaml:"write_budget"`
	Commit      Mode `yaml:"commit"`
	ShellWrites Mode `yaml:"shell_writes"`
	ReadBudget  Mode `yaml:"read_budget"`
	Plan        Mode `yaml:"plan"`
	Docs        Mode `yaml:"docs"`
	Wait        Mode `yaml:"wait"`
	VerdictRead Mode `yaml:"verdict_read"`
	// ToolPolicy is governance's tool policy (destructive commands,
	// secrets). Only the user's file may set it below deny: a project file
	// is written by the model's side of the fence.
	ToolPolicy Mode `yaml:"tool_policy"`
}

// Governance is SPEC §9's section: what may happen at all, whoever writes.
type Governance struct {
	Profile Profile `yaml:"profile"`
}

// Profile is the project's governance profile. The empty Profile means
// default.
type Profile string

// The governance profiles.
const (
	ProfileDefault    Profile = "default"
	ProfileStrict     Profile = "strict"
	ProfileGoverned   Profile = "governed"
	ProfileProduction Profile = "production"
)

// UnmarshalYAML refuses anything but the four profiles, naming the line.
func (p *Profile) UnmarshalYAML(n *yaml.Node) error {
	switch Profile(n.Value) {
	case ProfileDefault, ProfileStrict, ProfileGoverned, ProfileProduction:
		*p = Profile(n.Value)
		return nil
	}
	return fmt.Errorf("line %d: %q is not a governance profile (default, strict, governed or production)", n.Line, n.Value)
}

// Or returns p, or default when p is unset.
func (p Profile) Or() Profile {
	if p == "" {
		return ProfileDefault
	}
	return p
}

// Budgets holds the thresholds of the delegation rules.
type Budgets struct {
	TestsLines       int `yaml:"tests_lines"`
	DocsLines        int `yaml:"docs_lines"` // rule 10; not in SPEC's sample, defaults like tests_lines
	CodeLines        int `yaml:"code_lines"`
	ReadCharsPerTurn int `yaml:"read_chars_per_turn"`
	ReadLinesPerFile int `yaml:"read_lines_per_file"`
	SmallEditLines   int `yaml:"small_edit_lines"`
}

// Engines configures the delegation daemon's executors.
type Engines struct {
	Order     []string    `yaml:"order"`
	Local     LocalEngine `yaml:"local"`
	API       APIEngine   `yaml:"api"`
	Haiku     HaikuEngine `yaml:"haiku"`
	BenchLock string      `yaml:"bench_lock"`
}

// LocalEngine is the Ollama executor.
type LocalEngine struct {
	Host  string `yaml:"host"`
	Model string `yaml:"model"`
}

// APIEngine is the OpenAI-compatible executor (OpenRouter by default).
type APIEngine struct {
	BaseURL     string   `yaml:"base_url"`
	Model       string   `yaml:"model"`
	KeyEnv      string   `yaml:"key_env"`
	DailyCapUSD float64  `yaml:"daily_cap_usd"`
	Projects    []string `yaml:"projects"`
}

// HaikuEngine is the Anthropic executor.
type HaikuEngine struct {
	BaseURL string `yaml:"base_url"`
	Model   string `yaml:"model"`
	KeyEnv  string `yaml:"key_env"`
}

// Sandbox configures the commande control's sandbox.
type Sandbox struct {
	Commandes []string `yaml:"commandes"`
	// AllowUnsandboxed is honoured only from the user's config: a project
	// file is written by the model's side of the fence.
	AllowUnsandboxed bool `yaml:"allow_unsandboxed"`
}

// Delegation holds the daemon's timing knobs.
type Delegation struct {
	CallWaitS     int `yaml:"call_wait_s"`
	Essais        int `yaml:"essais"`
	SansProgresS  int `yaml:"sans_progres_s"`
	AttenteRouteS int `yaml:"attente_route_s"`
}

// ErrInvalid marks a config file that cannot be used.
var ErrInvalid = errors.New("invalid config")

// Decode reads one config file's bytes on top of base: keys present in data
// replace base's, absent keys keep base's values, so decoding the user's
// file then the project's gives "project wins key by key". name is used in
// errors only.
func Decode(base Config, name string, data []byte) (Config, error) {
	cfg := base
	if len(bytes.TrimSpace(data)) == 0 {
		return cfg, nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil && !errors.Is(err, io.EOF) {
		return base, fmt.Errorf("%w: %s: %s", ErrInvalid, name, YAMLMessage(err))
	}
	return cfg, nil
}

// Load merges the user's config and the project's. A nil slice means the
// file does not exist. allow_unsandboxed, and rules.tool_policy below deny,
// are taken from the user's file only.
func Load(userName string, user []byte, projectName string, project []byte) (Config, error) {
	cfg, err := Decode(Config{}, userName, user)
	if err != nil {
		return Config{}, err
	}
	trusted := cfg.Sandbox.AllowUnsandboxed
	policy := cfg.Rules.ToolPolicy
	cfg, err = Decode(cfg, projectName, project)
	if err != nil {
		return Config{}, err
	}
	cfg.Sandbox.AllowUnsandboxed = trusted
	if cfg.Rules.ToolPolicy != Deny {
		// The project may tighten the tool policy, never loosen it.
		cfg.Rules.ToolPolicy = policy
	}
	return cfg, nil
}

// YAMLMessage turns yaml.v3's "field x not found in type config.Rules" into
// words a user can act on, keeping the line number. The policies file's
// decoder says its errors the same way.
func YAMLMessage(err error) string {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return strings.TrimPrefix(err.Error(), "yaml: ")
	}
	msgs := make([]string, 0, len(te.Errors))
	for _, e := range te.Errors {
		if i := strings.Index(e, ": field "); i >= 0 {
			rest := e[i+len(": field "):]
			key, _, _ := strings.Cut(rest, " not found")
			msgs = append(msgs, fmt.Sprintf("%s: unknown key %q", e[:i], key))
			continue
		}
		msgs = append(msgs, e)
	}
	return strings.Join(msgs, "; ")
}
