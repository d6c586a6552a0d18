package config

import (
	"strings"
	"testing"
)

func TestGovernanceProfile(t *testing.T) {
	tests := []struct {
		name, data string
		want       Profile
		err        []string
	}{
		{name: "absent means default", data: "rules:\n  tests: deny\n", want: ProfileDefault},
		{name: "strict", data: "governance:\n  profile: strict\n", want: ProfileStrict},
		{name: "production", data: "governance:\n  profile: production\n", want: ProfileProduction},
		{name: "bad value", data: "rules:\n  tests: deny\ngovernance:\n  profile: paranoid\n",
			err: []string{".miam/config.yaml", "line 4", `"paranoid" is not a governance profile`}},
		{name: "unknown key", data: "governance:\n  profil: strict\n",
			err: []string{".miam/config.yaml", "line 2", `unknown key "profil"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Decode(Config{}, ".miam/config.yaml", []byte(tc.data))
			if tc.err != nil {
				if err == nil {
					t.Fatal("Decode succeeded, want an error")
				}
				for _, w := range tc.err {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not contain %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p := got.Governance.Profile.Or(); p != tc.want {
				t.Errorf("profile %q, want %q", p, tc.want)
			}
		})
	}
}

func TestToolPolicyProjectCannotLoosen(t *testing.T) {
	tests := []struct {
		name          string
		user, project string
		want          Mode
	}{
		{"project off ignored", "", "rules:\n  tool_policy: off\n", ""},
		{"project measure ignored", "", "rules:\n  tool_policy: measure\n", ""},
		{"user off kept", "rules:\n  tool_policy: off\n", "", Off},
		{"project tightens user's measure", "rules:\n  tool_policy: measure\n", "rules:\n  tool_policy: deny\n", Deny},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Load("user.yaml", []byte(tc.user), "project.yaml", []byte(tc.project))
			if err != nil {
				t.Fatal(err)
			}
			if got.Rules.ToolPolicy != tc.want {
				t.Errorf("tool_policy %q, want %q", got.Rules.ToolPolicy, tc.want)
			}
		})
	}
}

func TestAgentsEntry(t *testing.T) {
	tests := []struct {
		name, data string
		want       ProjectPath
		err        []string
	}{
		{name: "absent means none", data: "rules:\n  tests: deny\n", want: ""},
		{name: "empty means none", data: "agents:\n  entry: \"\"\n", want: ""},
		{name: "relative", data: "agents:\n  entry: agents/concierge.md\n", want: "agents/concierge.md"},
		{name: "dot slash cleaned", data: "agents:\n  entry: ./agents//concierge.md\n", want: "agents/concierge.md"},
		{name: "absolute refused", data: "agents:\n  entry: /etc/passwd\n",
			err: []string{".miam/config.yaml", "line 2", `"/etc/passwd" is not a path inside the project`}},
		{name: "escape refused", data: "rules:\n  tests: deny\nagents:\n  entry: ../x.md\n",
			err: []string{"line 4", `"../x.md" is not a path inside the project`}},
		{name: "not a scalar", data: "agents:\n  entry: [a, b]\n", err: []string{"line 2", "project-relative path"}},
		{name: "unknown key", data: "agents:\n  entree: a.md\n", err: []string{"line 2", `unknown key "entree"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Decode(Config{}, ".miam/config.yaml", []byte(tc.data))
			if tc.err != nil {
				if err == nil {
					t.Fatalf("Decode succeeded (%q), want an error", got.Agents.Entry)
				}
				for _, w := range tc.err {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not contain %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Agents.Entry != tc.want {
				t.Errorf("agents.entry %q, want %q", got.Agents.Entry, tc.want)
			}
		})
	}
}
