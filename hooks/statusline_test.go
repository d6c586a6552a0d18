package hooks

import (
	"testing"

	"miam/budgets"
)

func TestStatusLine(t *testing.T) {
	tally := func(code, delegated, exceptions int) budgets.Tally {
		return budgets.Tally{Written: budgets.Lines{Code: code}, Delegated: delegated, Exceptions: exceptions}
	}
	tests := []struct {
		name string
		st   budgets.State
		want string
	}{
		{"fresh session", budgets.State{}, "miam · tour délégué — % · exceptions 0 │ session délégué — % · exceptions 0"},
		{"82 % delegated this turn", budgets.State{Turn: 2, ThisTurn: tally(9, 41, 1), Session: tally(30, 70, 2)},
			"miam · tour délégué 82 % · exceptions 1 │ session délégué 70 % · exceptions 2"},
		{"all by hand", budgets.State{Turn: 1, ThisTurn: tally(12, 0, 0), Session: tally(12, 0, 0)},
			"miam · tour délégué 0 % · exceptions 0 │ session délégué 0 % · exceptions 0"},
		{"fallback open this turn", budgets.State{Turn: 3, FallbackTurn: 3, ThisTurn: tally(40, 0, 0), Session: tally(40, 10, 0)},
			"miam · tour délégué 0 % · exceptions 0 │ session délégué 20 % · exceptions 0 │ aucun exécuteur : règles ouvertes"},
		{"fallback of an earlier turn", budgets.State{Turn: 4, FallbackTurn: 3},
			"miam · tour délégué — % · exceptions 0 │ session délégué — % · exceptions 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := StatusLine(tt.st); got != tt.want {
				t.Errorf("StatusLine =\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}
