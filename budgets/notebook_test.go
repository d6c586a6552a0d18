package budgets

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNotebookAdded(t *testing.T) {
	const nb = `{
 "cells": [
  {"id": "a1", "cell_type": "code", "source": ["import os\n", "x = 1\n"]},
  {"id": "b2", "cell_type": "code", "source": "y = 2\n# note"},
  {"id": "m3", "cell_type": "markdown", "source": ["# Title\n", "Some prose.\n"]}
 ],
 "metadata": {"kernelspec": {"language": "python"}, "language_info": {"name": "python"}},
 "nbformat": 4, "nbformat_minor": 5
}`
	const noIDs = `{"cells": [{"cell_type": "code", "source": ["x = 1\n"]}], "metadata": {}}`
	const ruby = `{"cells": [{"id": "r", "cell_type": "code", "source": "x = 1"}],
 "metadata": {"kernelspec": {"language": "ruby"}}}`
	const julia = `{"cells": [], "metadata": {"language_info": {"name": "julia"}}}`
	tests := []struct {
		name                string
		nb, cell, src, mode string
		want                Counts
	}{
		{"replace list source", nb, "a1", "import os\nx = 1\ny = x + 1\n", "replace", Counts{Code: 1}},
		{"replace string source", nb, "b2", "y = 2\n# note\n# more\nz = 3", "replace", Counts{Code: 1, Comment: 1}},
		{"empty mode is replace", nb, "a1", "import os\n", "", Counts{}},
		{"insert counts everything", nb, "a1", "import os\nx = 1\n\n# c\n", "insert", Counts{Code: 2, Comment: 1, Blank: 1}},
		{"delete adds nothing", nb, "a1", "", "delete", Counts{}},
		{"markdown is prose", nb, "m3", "# Title\nSome prose.\nMore prose.\n\n", "replace", Counts{Doc: 1, Blank: 1}},
		{"unknown cell is an insert", nb, "zz", "x = 1\n", "replace", Counts{Code: 1}},
		{"cell-N for cells without ids", noIDs, "cell-0", "x = 1\ny = 2\n", "replace", Counts{Code: 1}},
		{"kernelspec language", ruby, "r", "x = 1\n# c\n", "replace", Counts{Comment: 1}},
		{"unknown language counts non-blank lines", julia, "", "# c\nx = 1\n", "insert", Counts{Code: 2}},
		{"invalid json is a python insert", "{not json", "a1", "x = 1\n# c\n", "replace", Counts{Code: 1, Comment: 1}},
		{"empty notebook bytes", "", "a1", "x = 1\n", "replace", Counts{Code: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := NotebookAdded([]byte(tt.nb), tt.cell, tt.src, tt.mode)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("NotebookAdded mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
