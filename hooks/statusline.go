package hooks

import (
	"fmt"

	"miam/budgets"
)

// StatusLine is rule 9's text for the host's status line: the share of
// code lines written by delegation rather than by hand, and the exceptions
// opened, for the turn and for the session. A share with nothing written
// yet is a dash, not 0 %: nothing was kept from the delegate.
func StatusLine(st budgets.State) string {
	line := "miam · tour " + tallyLine(st.ThisTurn) + " │ session " + tallyLine(st.Session)
	if st.FallbackTurn != 0 && st.FallbackTurn == st.Turn {
		line += " │ aucun exécuteur : règles ouvertes"
	}
	return line
}

func tallyLine(t budgets.Tally) string {
	share := "délégué — %"
	if total := t.Written.Code + t.Delegated; total > 0 {
		share = fmt.Sprintf("délégué %d %%", t.Delegated*100/total)
	}
	return fmt.Sprintf("%s · exceptions %d", share, t.Exceptions)
}
