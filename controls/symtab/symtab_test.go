package symtab

import "testing"

func TestTables(t *testing.T) {
	tests := []struct {
		name      string
		table     *Table
		mod, sym  string
		want      bool
		wantModOK bool
	}{
		{"python builtin", Python(), "builtins", "len", true, true},
		{"python os.path", Python(), "os.path", "join", true, true},
		{"python invented", Python(), "os.path", "joinpath", false, true},
		{"python submodule name", Python(), "xml.etree", "ElementTree", true, true},
		{"python json", Python(), "json", "loads", true, true},
		{"python no such module", Python(), "requests", "get", false, false},
		{"go strings", Go(), "strings", "Cut", true, true},
		{"go invented", Go(), "strings", "Reverse", false, true},
		{"go net/http", Go(), "net/http", "NewRequestWithContext", true, true},
		{"go no such package", Go(), "encoding/yaml", "Marshal", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.table.HasModule(tt.mod); got != tt.wantModOK {
				t.Errorf("HasModule(%q) = %v, want %v", tt.mod, got, tt.wantModOK)
			}
			if got := tt.table.Has(tt.mod, tt.sym); got != tt.want {
				t.Errorf("Has(%q, %q) = %v, want %v", tt.mod, tt.sym, got, tt.want)
			}
		})
	}
}

func BenchmarkLoad(b *testing.B) {
	for b.Loop() {
		load("python.txt")
		load("go.txt")
	}
}
