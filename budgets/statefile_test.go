package budgets

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
)

func bump(s Store, id string) error {
	return s.Update(id, func(st *State) error { st.SinceDelegation++; return nil })
}

func bouts(n int) func(*State) error {
	return func(st *State) error {
		st.BoutStatus = map[int]string{}
		for i := range n {
			st.BoutStatus[i] = "delegue"
		}
		return nil
	}
}

// A state file cut in the middle of its overwrite starts with the cut
// mark: the journal holds the state that was being written, which readers
// take and the next Update writes out again. A file broken otherwise (by
// hand) is said broken, never silently replaced by the journal's state.
func TestCutStateFileFallsBackOnJournal(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	for range 3 {
		if err := bump(s, "s"); err != nil {
			t.Fatal(err)
		}
	}
	path := s.Path("s")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The cut mark, then the first half of a longer state over the end of
	// the old one.
	cut := append([]byte(`~"schema":1,"session_id":"s","since_delegation":3,"this_turn":{"written":{"co`), data[60:]...)
	if err := os.WriteFile(path, cut, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := s.Load("s"); got.SinceDelegation != 3 || got.Broken != "" {
		t.Errorf("cut state file: since_delegation %d (want the journal's 3), broken %q", got.SinceDelegation, got.Broken)
	}
	if err := s.Update("s", func(*State) error { return nil }); err != nil {
		t.Fatal(err)
	}
	data, _ = os.ReadFile(path)
	var st State
	if err := json.Unmarshal(data, &st); err != nil || st.SinceDelegation != 3 {
		t.Errorf("after an Update, the state file holds %q (%v)", data, err)
	}
	// Broken by hand: said so.
	os.WriteFile(path, []byte(`{"schema":1,"se`), 0o644)
	if got := s.Load("s"); got.Broken == "" || got.SinceDelegation != 0 {
		t.Errorf("broken by hand: %+v", got)
	}
	// Both cut: nothing to go on, the session starts afresh and says so.
	os.WriteFile(path, []byte(`~"schema":1,"se`), 0o644)
	os.WriteFile(path+NextSuffix, []byte(`{"sch`), 0o644)
	if got := s.Load("s"); got.Broken == "" || got.SinceDelegation != 0 {
		t.Errorf("both cut: %+v", got)
	}
}

// The file stays one JSON document that plain tools read: padded with
// blanks when the state shrinks, cut when the blanks grow past
// maxPadding; the writes after a change of size are in place.
func TestStateFileStaysPlainJSON(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	path := s.Path("s")
	check := func(when string, bouts, size int) {
		t.Helper()
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var st State
		if err := json.Unmarshal(data, &st); err != nil || len(st.BoutStatus) != bouts {
			t.Errorf("%s: %d bouts in a %d-byte file (%v)", when, len(st.BoutStatus), len(data), err)
		}
		if size > 0 && len(data) != size {
			t.Errorf("%s: %d bytes, want %d", when, len(data), size)
		}
	}
	if err := s.Update("s", bouts(100)); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(path)
	check("100 bouts", 100, 0)
	if err := s.Update("s", bouts(10)); err != nil {
		t.Fatal(err)
	}
	check("shrunk to 10 bouts: padded", 10, int(fi.Size()))
	if err := s.Update("s", bouts(8000)); err != nil {
		t.Fatal(err)
	}
	check("grown to 8000", 8000, 0)
	if err := s.Update("s", bouts(1)); err != nil {
		t.Fatal(err)
	}
	fi, _ = os.Stat(path)
	if fi.Size() > maxPadding {
		t.Errorf("a state of 1 bout kept a %d-byte file", fi.Size())
	}
	check("shrunk to 1: cut", 1, 0)
	entries, _ := os.ReadDir(s.Dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "session-s.json session-s.json.next" {
		t.Errorf("state dir holds %v", names)
	}
}

// The repair exemption lets the model edit its state with the Write and
// Edit tools: what it writes is what the next call reads, and a state
// file removed starts the session afresh (the journal is not a backup).
func TestStateEditedByHand(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	path := s.Path("s")
	for range 5 {
		if err := bump(s, "s"); err != nil {
			t.Fatal(err)
		}
	}
	data, _ := os.ReadFile(path)
	// The Edit tool: one value replaced, the padding kept.
	edited := bytes.Replace(data, []byte(`"since_delegation":5`), []byte(`"since_delegation":0`), 1)
	os.WriteFile(path, edited, 0o644)
	if got := s.Load("s").SinceDelegation; got != 0 {
		t.Errorf("after an edit: since_delegation %d, want 0", got)
	}
	// The Write tool: the whole file, pretty-printed.
	pretty, _ := json.MarshalIndent(map[string]any{"schema": 1, "session_id": "s", "since_delegation": 2}, "", "  ")
	os.WriteFile(path, pretty, 0o644)
	if err := bump(s, "s"); err != nil {
		t.Fatal(err)
	}
	if got := s.Load("s").SinceDelegation; got != 3 {
		t.Errorf("after a Write and a bump: since_delegation %d, want 3", got)
	}
	os.Remove(path)
	if got := s.Load("s"); got.SinceDelegation != 0 || got.Broken != "" {
		t.Errorf("removed state file: %+v", got)
	}
}

// Writers in parallel, growing and shrinking the state, lose no update;
// readers without the lock alongside them always find a whole state.
func TestParallelWritersAndReaders(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	const writers, each = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, writers*each+1)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				errs <- s.Update("s", func(st *State) error {
					st.SinceDelegation++
					if w == 0 {
						return bouts(i * 37 % 500)(st)
					}
					return nil
				})
			}
		}()
	}
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for range 2 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if st := s.Load("s"); st.Broken != "" {
					t.Errorf("a reader found a broken state: %s", st.Broken)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := s.Load("s"); got.SinceDelegation != writers*each {
		t.Errorf("since_delegation = %d, want %d", got.SinceDelegation, writers*each)
	}
}

func FuzzPickState(f *testing.F) {
	f.Add([]byte(`{"schema":1}   `), []byte(`{}`))
	f.Add([]byte(`{"schema":1,"se`), []byte(`{"schema":1}`))
	f.Add([]byte(`~"schema":1,"se`), []byte(`{"schema":1}`))
	f.Add([]byte("  \n"), []byte(`{"schema":1}`))
	f.Fuzz(func(t *testing.T, main, next []byte) {
		doc, journal, err := pickState(main, func() []byte { return next })
		switch {
		case errors.Is(err, errNoState):
			if !blank(main) {
				t.Fatalf("errNoState for %q", main)
			}
		case err != nil:
			t.Fatal(err)
		case journal:
			if main[0] != cutMark || !json.Valid(doc) || !bytes.Equal(doc, next) {
				t.Fatalf("took the journal %q for %q", next, main)
			}
		case !bytes.Equal(doc, main):
			t.Fatalf("picked %q from %q / %q", doc, main, next)
		}
	})
}

// The state file and its journal are written in place: a symlink, a hard
// link, a FIFO, a socket or a directory planted in their stead is moved
// aside, never written through, and the session goes on counting (told
// when its counts start afresh).
func TestPlantedFilesAreReplaced(t *testing.T) {
	plant := map[string]func(victim, at string) error{
		"symlink":   os.Symlink,
		"hard link": os.Link,
		"fifo":      func(_, at string) error { return syscall.Mkfifo(at, 0o644) },
		"directory": func(_, at string) error { return os.MkdirAll(at+"/sub", 0o755) },
		"socket": func(_, at string) error {
			fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
			if err != nil {
				return err
			}
			defer syscall.Close(fd)
			return syscall.Bind(fd, &syscall.SockaddrUnix{Name: at})
		},
	}
	for kind, mk := range plant {
		for _, name := range []string{"session-s.json", "session-s.json" + NextSuffix} {
			t.Run(kind+" "+name, func(t *testing.T) {
				s := Store{Dir: t.TempDir()}
				if err := bump(s, "s"); err != nil {
					t.Fatal(err)
				}
				victim := s.Dir + "/victim"
				os.WriteFile(victim, []byte("precious\n"), 0o644)
				os.Remove(s.Dir + "/" + name)
				if err := mk(victim, s.Dir+"/"+name); err != nil {
					t.Fatal(err)
				}
				var broken string
				if err := s.Update("s", func(st *State) error {
					broken = st.Broken
					st.SinceDelegation++
					return nil
				}); err != nil {
					t.Fatalf("Update with a planted %s: %v", kind, err)
				}
				if err := bump(s, "s"); err != nil {
					t.Fatalf("second Update with a planted %s: %v", kind, err)
				}
				if (broken != "") != (name == "session-s.json") {
					t.Errorf("the session was told %q", broken)
				}
				if data, _ := os.ReadFile(victim); string(data) != "precious\n" {
					t.Errorf("the planted %s's target was written: %q", kind, data)
				}
				want := 3
				if name == "session-s.json" {
					want = 2 // the state file replaced: the session starts afresh
				}
				if got := s.Load("s").SinceDelegation; got != want {
					t.Errorf("since_delegation = %d, want %d", got, want)
				}
			})
		}
	}
}

// A file too large to be a state is rewritten, cut to the state.
func TestHugeStateFileIsRewritten(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	f, err := os.Create(s.Path("s"))
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(maxStateLen + 1)
	f.Close()
	if err := bump(s, "s"); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(s.Path("s"))
	if got := s.Load("s"); got.SinceDelegation != 1 || fi.Size() > 4096 {
		t.Errorf("since_delegation %d, file of %d bytes", got.SinceDelegation, fi.Size())
	}
}

// The journal holds what the state holds: it is no more readable.
func TestJournalKeepsTheStatePermissions(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	if err := os.WriteFile(s.Path("s"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := bump(s, "s"); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(s.Path("s") + NextSuffix); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("journal: %v %v", fi.Mode(), err)
	}
}

// A state file cut short and its state taken from the journal is made
// whole before the journal is written again: a second cut, of the
// journal, must not leave both cut.
func TestCutStateFileRepairedFirst(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	for range 3 {
		if err := bump(s, "s"); err != nil {
			t.Fatal(err)
		}
	}
	path := s.Path("s")
	data, _ := os.ReadFile(path)
	os.WriteFile(path, append([]byte("~"), data[1:]...), 0o644) // a killed overwrite
	// The next Update dies while it writes the journal: played here by a
	// callback that cuts the journal before Update writes anything.
	boom := errors.New("killed")
	s.Update("s", func(*State) error {
		os.WriteFile(path+NextSuffix, []byte(`{"schema":1,"sess`), 0o644)
		return boom
	})
	if got := s.Load("s"); got.SinceDelegation != 3 || got.Broken != "" {
		t.Errorf("after a cut state file then a cut journal: %+v", got)
	}
}
