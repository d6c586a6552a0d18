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
