package budgets

import (
	"encoding/json"
	"strconv"
	"strings"
)

// notebook is the part of an .ipynb file the counter reads.
type notebook struct {
	Cells []struct {
		ID       string          `json:"id"`
		CellType string          `json:"cell_type"`
		Source   json.RawMessage `json:"source"`
	} `json:"cells"`
	Metadata struct {
		LanguageInfo struct {
			Name string `json:"name"`
		} `json:"language_info"`
		Kernelspec struct {
			Language string `json:"language"`
		} `json:"kernelspec"`
	} `json:"metadata"`
}

// NotebookAdded counts the lines a NotebookEdit adds to the notebook nb.
// editMode is "replace" (the tool's default, also for ""), "insert" or
// "delete". A replace counts the new source against the cell's old one, an
// insert counts all of newSource, a delete adds nothing. The language comes
// from metadata.language_info.name, then metadata.kernelspec.language, else
// Python. Markdown and raw cells are prose: their new lines count as doc.
// When nb is not a notebook or the cell is not found, the edit is counted as
// an insert, so that a broken notebook cannot hide code.
func NotebookAdded(nb []byte, cellID, newSource, editMode string) Counts {
	if editMode == "delete" {
		return Counts{}
	}
	var n notebook
	if err := json.Unmarshal(nb, &n); err != nil {
		return Added(LangPython, nil, []byte(newSource))
	}
	lang := LangPython
	if name := n.Metadata.LanguageInfo.Name; name != "" {
		lang = langByName(name)
	} else if name := n.Metadata.Kernelspec.Language; name != "" {
		lang = langByName(name)
	}
	if editMode == "insert" {
		return Added(lang, nil, []byte(newSource))
	}
	i := findCell(&n, cellID)
	if i < 0 {
		return Added(lang, nil, []byte(newSource))
	}
	cell := n.Cells[i]
	old := cellSource(cell.Source)
	if cell.CellType == "markdown" || cell.CellType == "raw" {
		c := Added("", []byte(old), []byte(newSource))
		return Counts{Doc: c.Code, Blank: c.Blank}
	}
	return Added(lang, []byte(old), []byte(newSource))
}

// findCell finds a cell by id, then by the `cell-N` index Claude Code shows
// for cells that have no id (nbformat < 4.5); -1 when absent.
func findCell(n *notebook, id string) int {
	if id == "" {
		return -1
	}
	for i, c := range n.Cells {
		if c.ID == id {
			return i
		}
	}
	if k, err := strconv.Atoi(strings.TrimPrefix(id, "cell-")); err == nil && k >= 0 && k < len(n.Cells) && n.Cells[k].ID == "" {
		return k
	}
	return -1
}

// cellSource joins a cell's source, which nbformat allows as one string or
// as a list of lines that keep their own newlines.
func cellSource(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []string
	if json.Unmarshal(raw, &parts) == nil {
		return strings.Join(parts, "")
	}
	return ""
}
