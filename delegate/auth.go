package delegate

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
)

// Files the daemon keeps in its state directory ($XDG_STATE_HOME/miam/).
const (
	DaemonFile = "daemon.json" // where the daemon listens
	HeaderFile = "attente.hdr" // one "Authorization: Bearer …" line, mode 0600
)

// Address is what daemon.json holds.
type Address struct {
	Port int `json:"port"`
	PID  int `json:"pid"`
}

// URL is the daemon's base URL; it only ever listens on loopback.
func (a Address) URL() string { return fmt.Sprintf("http://127.0.0.1:%d", a.Port) }

// NewToken returns a fresh random bearer token.
func NewToken() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("token: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// HeaderLine is the line of attente.hdr, in the form curl's -H @file reads.
func HeaderLine(token string) string { return "Authorization: Bearer " + token }

// WriteDaemonFiles publishes the daemon's address and token: the header file
// first and with mode 0600, so a reader that sees the address can always
// authenticate.
func WriteDaemonFiles(dir string, addr Address, token string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("state dir: %w", err)
	}
	if err := writeAtomic(filepath.Join(dir, HeaderFile), []byte(HeaderLine(token)+"\n"), 0o600); err != nil {
		return err
	}
	data, _ := json.Marshal(addr)
	return writeAtomic(filepath.Join(dir, DaemonFile), append(data, '\n'), 0o600)
}

// ReadDaemonFiles reads what WriteDaemonFiles wrote.
func ReadDaemonFiles(dir string) (Address, string, error) {
	var addr Address
	data, err := os.ReadFile(filepath.Join(dir, DaemonFile))
	if err != nil {
		return addr, "", fmt.Errorf("daemon address: %w", err)
	}
	if err := json.Unmarshal(data, &addr); err != nil || addr.Port <= 0 {
		return addr, "", fmt.Errorf("daemon address %s: malformed", filepath.Join(dir, DaemonFile))
	}
	hdr, err := os.ReadFile(filepath.Join(dir, HeaderFile))
	if err != nil {
		return addr, "", fmt.Errorf("daemon token: %w", err)
	}
	token, ok := strings.CutPrefix(strings.TrimSpace(string(hdr)), "Authorization: Bearer ")
	if !ok || token == "" {
		return addr, "", fmt.Errorf("daemon token %s: malformed", filepath.Join(dir, HeaderFile))
	}
	return addr, token, nil
}

// authorized checks the bearer token in constant time.
func authorized(r *http.Request, token string) bool {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(got), []byte(token)) == 1
}

func writeAtomic(path string, data []byte, perm os.FileMode) error {
	tmp := fmt.Sprintf("%s.%d.tmp", path, os.Getpid())
	if err := os.WriteFile(tmp, data, perm); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Chmod(tmp, perm); err != nil { // WriteFile keeps an existing file's mode
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
