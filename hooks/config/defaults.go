package config

// Defaults of SPEC §12, applied by the accessors when a field is zero.
const (
	DefaultTestsLines       = 10
	DefaultDocsLines        = 10
	DefaultCodeLines        = 30
	DefaultReadCharsPerTurn = 40000
	DefaultReadLinesPerFile = 400
	DefaultSmallEditLines   = 3
)

func orInt(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// TestsLinesOr is rule 1's threshold.
func (b Budgets) TestsLinesOr() int { return orInt(b.TestsLines, DefaultTestsLines) }

// DocsLinesOr is rule 10's threshold: documentation lines one call may add
// to a Markdown file, or docstring lines to a source file.
func (b Budgets) DocsLinesOr() int { return orInt(b.DocsLines, DefaultDocsLines) }

// CodeLinesOr is rule 2's threshold.
func (b Budgets) CodeLinesOr() int { return orInt(b.CodeLines, DefaultCodeLines) }

// SmallEditLinesOr is the size under which an edit is never charged.
func (b Budgets) SmallEditLinesOr() int { return orInt(b.SmallEditLines, DefaultSmallEditLines) }

// ReadCharsPerTurnOr is rule 5's per-turn character budget.
func (b Budgets) ReadCharsPerTurnOr() int { return orInt(b.ReadCharsPerTurn, DefaultReadCharsPerTurn) }

// ReadLinesPerFileOr is rule 5's per-file line budget.
func (b Budgets) ReadLinesPerFileOr() int { return orInt(b.ReadLinesPerFile, DefaultReadLinesPerFile) }
