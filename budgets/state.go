package budgets

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"syscall"
)

// SchemaVersion is the version of the state file layout. A file of another
// version is read as a fresh session.
const SchemaVersion = 1

// Lines are line counts by kind.
type Lines struct {
	Code  int `json:"code,omitempty"`
	Doc   int `json:"doc,omitempty"`
	Tests int `json:"tests,omitempty"` // code lines that went to test files
}

// Add returns l + m.
func (l Lines) Add(m Lines) Lines {
	return Lines{Code: l.Code + m.Code, Doc: l.Doc + m.Doc, Tests: l.Tests + m.Tests}
}

// Sub returns l - m, never below zero.
func (l Lines) Sub(m Lines) Lines {
	return Lines{Code: max(0, l.Code-m.Code), Doc: max(0, l.Doc-m.Doc), Tests: max(0, l.Tests-m.Tests)}
}

// Tally is what one turn or one whole session did.
type Tally struct {
	Written     Lines          `json:"written"`               // by the main agent, by hand
	Delegations int            `json:"delegations,omitempty"` // successful deleguer answers
	Denied      map[string]int `json:"denied,omitempty"`      // denies by rule
	Measured    map[string]int `json:"measured,omitempty"`    // would-be denies of rules in measure mode
	Opened      map[string]int `json:"opened,omitempty"`      // denies the fallback let through (no executor)
	// Delegated is the lines the valid delegations added (their diff.added).
	Delegated int `json:"delegated,omitempty"`
	// Exceptions is how many exceptions were opened.
	Exceptions int `json:"exceptions,omitempty"`
	// ReadChars is the characters the main agent read (rule 5).
	ReadChars int `json:"read_chars,omitempty"`
}

// Charge is what an allowed call was charged, kept until the host says
// whether the call ran, so that a failed call is refunded.
type Charge struct {
	Lines           Lines `json:"lines"`
	SinceDelegation int   `json:"since_delegation"` // what went to the write budget
	// What a Read was charged by the read budget (rule 5).
	ReadChars int    `json:"read_chars,omitempty"`
	ReadFile  string `json:"read_file,omitempty"`
	ReadLines int    `json:"read_lines,omitempty"`
	// Exception is the index+1 of the exception the call's lines were
	// taken from (0: none), and ExceptionLines how many.
	Exception      int `json:"exception,omitempty"`
	ExceptionLines int `json:"exception_lines,omitempty"`
}

// State is one session's counters, persisted between hook processes.
type State struct {
	Schema    int    `json:"schema"`
	SessionID string `json:"session_id"`
	Turn      int    `json:"turn"` // 1-based number of the current turn; 0 before the first prompt
	TurnOpen  bool   `json:"turn_open"`
	// SinceDelegation is the write budget's counter: code lines the main
	// agent wrote by hand since its last successful delegation.
	SinceDelegation int               `json:"since_delegation"`
	ThisTurn        Tally             `json:"this_turn"`
	Session         Tally             `json:"session"`
	Pending         map[string]Charge `json:"pending,omitempty"` // by tool_use_id
	// Waits are delegations answered ok: null, by demande_id, until the
	// session learns how they ended.
	Waits map[string]Wait `json:"waits,omitempty"`
	// Snapshots are the files a Bash call may write by means whose line
	// count cannot be known before it runs (perl -pi, python -c, a
	// program's output), as they were before it ran, by tool_use_id: the
	// hook counts what the call added when it ends.
	Snapshots map[string][]Snapshot `json:"snapshots,omitempty"`
	// Exceptions are the exceptions opened in this session, in order, with
	// the lines each has used; a spent one stays, as the session's log.
	Exceptions []Exception `json:"exceptions,omitempty"`
	// ReadLines is, for this turn, the lines read of each project file
	// (rule 5): ranges add up.
	ReadLines map[string]int `json:"read_lines,omitempty"`
	// Valides maps each output file a valid delegation wrote
	// (project-relative) to its demande_id (rules 3 and 13).
	Valides map[string]string `json:"valides,omitempty"`
	// PlanTurn is the turn in which rule 6 (plan first) let a code write
	// through: it stays quiet for the rest of that turn.
	PlanTurn int `json:"plan_turn,omitempty"`
	// PlanTache is the tache of the plan whose bouts BoutStatus follows.
	PlanTache string `json:"plan_tache,omitempty"`
	// BoutStatus is each plan bout's status by id, as the deleguer answers
	// set it (SPEC §7). It lives here, not in the plan file: that file is
	// the agent's and miam never writes it.
	BoutStatus map[int]string `json:"bout_status,omitempty"`
	// FallbackTurn is the turn in which a delegation found no executor
	// (the daemon unreachable): the delegation rules are open for the rest
	// of it, their denies turned into notices (SPEC §8 fallback). A
	// delegation that answers closes it again. FallbackWhy is the error.
	FallbackTurn int    `json:"fallback_turn,omitempty"`
	FallbackWhy  string `json:"fallback_why,omitempty"`
	// Policies is the temporal policies' share (.miam/policies.yaml);
	// whoever changes it copies it first, so Clone may share it.
	Policies *PolicyState `json:"policies,omitempty"`
	// Mutations counts the session's calls that may change something
	// (file writes and edits, Bash commands not read-only), main agent and
	// subagents alike; never their content (SPEC §9, post_tool_use).
	Mutations int `json:"mutations,omitempty"`
	// ReminderTurn is the turn whose first mutation got governance's
	// evidence reminder (once per turn).
	ReminderTurn int `json:"reminder_turn,omitempty"`
	// Capsule is governance's record written at PreCompact, re-injected by
	// the SessionStart that follows the compaction.
	Capsule *Capsule `json:"capsule,omitempty"`
	// Broken says why the file this state was loaded from could not be
	// read (it was started afresh); never persisted.
	Broken string `json:"-"`
}

// Capsule is the governance state saved before a compaction: what the
// compacted conversation must not forget.
type Capsule struct {
	Profile   string `json:"profile"`
	Tache     string `json:"tache,omitempty"`   // the current task, or empty
	NoTask    string `json:"no_task,omitempty"` // why there is none
	Mutations int    `json:"mutations,omitempty"`
	// Gates are the gates open (red) at the time, in words.
	Gates []string `json:"gates,omitempty"`
}

// Fallback reports whether the delegation rules are open for the current
// turn because no executor answers.
func (s State) Fallback() bool { return s.FallbackTurn != 0 && s.FallbackTurn == s.Turn }

// The reasons an exception may give (SPEC §6): a closed list.
var ExceptionReasons = []string{"concurrence", "securite", "debogage-multi-fichiers", "secret"}

// Exception is a budget the main agent opened to write by hand: limited to
// Fichiers (project-relative paths or globs) and Lignes code lines.
type Exception struct {
	Raison   string   `json:"raison"`
	Fichiers []string `json:"fichiers"`
	Lignes   int      `json:"lignes"`           // lines granted
	Used     int      `json:"used,omitempty"`   // lines consumed
	Turn     int      `json:"turn,omitempty"`   // turn it was opened in
	Source   string   `json:"source,omitempty"` // "mcp" or "cli"
}

// CheckException validates an exception request, naming the field at
// fault.
func CheckException(raison string, fichiers []string, lignes int) error {
	ok := false
	for _, r := range ExceptionReasons {
		ok = ok || r == raison
	}
	switch {
	case !ok:
		return fmt.Errorf("raison: %q is not one of %v", raison, ExceptionReasons)
	case len(fichiers) == 0:
		return fmt.Errorf("fichiers: name at least one file")
	case lignes <= 0:
		return fmt.Errorf("lignes: must be a positive number of lines, got %d", lignes)
	}
	for i, f := range fichiers {
		if f == "" {
			return fmt.Errorf("fichiers[%d]: empty", i)
		}
	}
	return nil
}

// Snapshot is one file before a Bash call that may write it.
type Snapshot struct {
	Path   string `json:"path"`             // project-relative, slash-separated
	Before string `json:"before,omitempty"` // content before the call; empty for a new file
	How    string `json:"how"`              // what writes it, e.g. "python code"
	Edit   bool   `json:"edit,omitempty"`   // an in-place edit: small ones are exempt
	Test   bool   `json:"test,omitempty"`   // a test file
	// Exception is the index+1 in State.Exceptions of the exception that
	// covers this file, 0 for none: what the call added is taken from it.
	Exception int `json:"exception,omitempty"`
}

// Wait is a delegation the session waits for.
type Wait struct {
	Reprise   string `json:"reprise,omitempty"`
	Launched  bool   `json:"launched,omitempty"`    // its reprise runs in the background
	ToolUseID string `json:"tool_use_id,omitempty"` // of that background Bash call
	TaskID    string `json:"task_id,omitempty"`     // Claude Code's background task id
}

// Fresh returns the state of a session never seen before.
func Fresh(sessionID string) State {
	return State{Schema: SchemaVersion, SessionID: sessionID}
}

// Clone returns a deep copy, so a decision can return a new state without
// touching its input.
func (s State) Clone() State {
	s.ThisTurn = s.ThisTurn.clone()
	s.Session = s.Session.clone()
	s.Pending = maps.Clone(s.Pending)
	s.Waits = maps.Clone(s.Waits)
	s.Snapshots = maps.Clone(s.Snapshots)
	s.Exceptions = slices.Clone(s.Exceptions)
	s.ReadLines = maps.Clone(s.ReadLines)
	s.Valides = maps.Clone(s.Valides)
	s.BoutStatus = maps.Clone(s.BoutStatus)
	if s.Capsule != nil {
		c := *s.Capsule
		c.Gates = slices.Clone(c.Gates)
		s.Capsule = &c
	}
	return s
}

func (t Tally) clone() Tally {
	t.Denied = maps.Clone(t.Denied)
	t.Measured = maps.Clone(t.Measured)
	t.Opened = maps.Clone(t.Opened)
	return t
}

// Store keeps session states in Dir (<project>/.miam/state/), one file
// each (see statefile.go for its layout).
type Store struct {
	Dir string
}

// safeID reports whether a session id can be a file name as it is.
func safeID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for _, r := range id {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// Path returns the state file of a session. Session ids that are not plain
// names are hashed, so a payload cannot steer the path.
func (s Store) Path(sessionID string) string {
	name := sessionID
	if !safeID(name) {
		sum := sha256.Sum256([]byte(sessionID))
		name = "h" + hex.EncodeToString(sum[:12])
	}
	return filepath.Join(s.Dir, "session-"+name+".json")
}

// Load reads a session's state without locking. A missing, truncated,
// unparsable or other-version file is a fresh session, never an error.
func (s Store) Load(sessionID string) State {
	data, err := ReadStateFile(s.Path(sessionID))
	if err != nil {
		fresh := Fresh(sessionID)
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, errNoState) {
			fresh.Broken = err.Error()
		}
		return fresh
	}
	return decodeState(sessionID, data)
}

func decodeState(sessionID string, data []byte) State {
	var st State
	if err := json.Unmarshal(data, &st); err != nil {
		fresh := Fresh(sessionID)
		fresh.Broken = "unparsable: " + err.Error()
		return fresh
	}
	if st.Schema != SchemaVersion {
		fresh := Fresh(sessionID)
		fresh.Broken = fmt.Sprintf("schema version %d, not %d", st.Schema, SchemaVersion)
		return fresh
	}
	if st.SessionID != sessionID {
		return Fresh(sessionID)
	}
	return st
}

// Update runs fn on the session's state under an exclusive lock and writes
// the result, so parallel hook processes of one session never lose an
// update. When fn returns an error nothing is written.
func (s Store) Update(sessionID string, fn func(*State) error) error {
	path := s.Path(sessionID)
	f, held, moved, err := openLocked(path)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(s.Dir, 0o755); err != nil {
			return fmt.Errorf("state dir: %w", err)
		}
		f, held, moved, err = openLocked(path)
	}
	if err != nil {
		return err
	}
	defer f.Close() // and so unlocked
	size := held.Size
	doc, stale, err := readLocked(f, path, size)
	st := Fresh(sessionID)
	switch {
	case errors.Is(err, errNoState):
	case errors.Is(err, errTooLarge):
		st.Broken = err.Error() // rewritten below, cut to the state's length
	case err != nil:
		return fmt.Errorf("read state: %w", err)
	default:
		st = decodeState(sessionID, doc)
	}
	if moved != "" {
		st.Broken = moved
	}
	if stale {
		// The state file was cut short and its state is the journal's:
		// made whole first, so that a write of the journal cut short in
		// turn never leaves both cut.
		if size, err = overwrite(f, size, doc); err != nil {
			return fmt.Errorf("repair state: %w", err)
		}
	}
	// A broken file, or one cut short (its state taken from the journal),
	// is written out again even if nothing changes.
	rewrite := st.Broken != "" || stale
	before, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("encode state: %w", err)
	}
	if err := fn(&st); err != nil {
		return err
	}
	st.Schema, st.SessionID = SchemaVersion, sessionID
	data, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("encode state: %w", err)
	}
	if bytes.Equal(before, data) && !rewrite {
		// Most calls change nothing: skip the write.
		return nil
	}
	data = append(data, '\n')
	// The journal holds what the state holds: the same permissions.
	if err := writeJournal(path, data, fs.FileMode(held.Mode).Perm()); err != nil {
		return fmt.Errorf("write state journal: %w", err)
	}
	if _, err := overwrite(f, size, data); err != nil {
		return fmt.Errorf("write state: %w", err)
	}
	return nil
}

func flock(f *os.File) error { return lock(f, syscall.LOCK_EX) }

// WriteFileAtomic writes data to a temporary file beside path and renames it
// over path: a reader sees the old content or the new, never a torn file.
// There is no fsync: a crash may lose the last update, never corrupt the
// file, and the hook runs on every tool call.
func WriteFileAtomic(path string, data []byte, perm fs.FileMode) error {
	var tmp *os.File
	var err error
	for i := 0; ; i++ {
		name := fmt.Sprintf("%s.%d.%d.tmp", path, os.Getpid(), i)
		tmp, err = os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if err == nil || !errors.Is(err, fs.ErrExist) || i == 100 {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	name := tmp.Name()
	_, werr := tmp.Write(data)
	if err := errors.Join(werr, tmp.Close()); err != nil {
		os.Remove(name)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(name, path); err != nil {
		os.Remove(name)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// pendingExceptions is the file `miam exception` leaves its requests in,
// in Store.Dir, for the next hook call to claim.
const pendingExceptions = "exceptions-pending.json"

// RequestException appends an exception request to the pending file, under
// the same kind of lock as a session's state, written atomically.
func (s Store) RequestException(e Exception) error {
	if err := CheckException(e.Raison, e.Fichiers, e.Lignes); err != nil {
		return err
	}
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return fmt.Errorf("state dir: %w", err)
	}
	path := filepath.Join(s.Dir, pendingExceptions)
	lock, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return fmt.Errorf("exception lock: %w", err)
	}
	defer lock.Close()
	if err := flock(lock); err != nil {
		return fmt.Errorf("exception lock: %w", err)
	}
	var all []Exception
	if data, err := os.ReadFile(path); err == nil {
		_ = json.Unmarshal(data, &all) // a broken file is replaced
	}
	all = append(all, e)
	data, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return fmt.Errorf("encode exceptions: %w", err)
	}
	return WriteFileAtomic(path, append(data, '\n'), 0o644)
}

// ClaimExceptions takes the pending exception requests, if any: the file is
// renamed away first, so two hook processes never both claim one request.
// A missing file is no request and no error.
func (s Store) ClaimExceptions() ([]Exception, error) {
	path := filepath.Join(s.Dir, pendingExceptions)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	claimed := fmt.Sprintf("%s.%d.claimed", path, os.Getpid())
	if err := os.Rename(path, claimed); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil // another process claimed it
		}
		return nil, fmt.Errorf("claim exceptions: %w", err)
	}
	defer os.Remove(claimed)
	data, err := os.ReadFile(claimed)
	if err != nil {
		return nil, fmt.Errorf("claim exceptions: %w", err)
	}
	var all []Exception
	if err := json.Unmarshal(data, &all); err != nil {
		return nil, fmt.Errorf("claim exceptions: %s: %w", path, err)
	}
	return all, nil
}
