package budgets

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"
	"testing"
)

func bump(s Store, id string) error {
	return s.Update(id, func(st *State) error { st.SinceDelegation++; return nil })
}

// A slot cut short (a crash in the middle of a write, or a reader racing
// a writer) is skipped: the other slot still holds the previous state, and
// the next write goes over the bad one.
func TestTornSlotKeepsPreviousState(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	for range 3 {
		if err := bump(s, "s"); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(s.Path("s"))
	if err != nil {
		t.Fatal(err)
	}
	sf := parseSlots(data)
	cur, idx, ok := sf.newest()
	if !ok || cur.gen != 3 || sf.size != 2*minSlot {
		t.Fatalf("after 3 writes: newest gen %d ok %v, %d bytes", cur.gen, ok, sf.size)
	}
	// Tear the newest slot in its middle.
	at := int64(idx)*sf.slotSize() + slotHeader + 20
	f, err := os.OpenFile(s.Path("s"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte("\x00\x00\x00"), at)
	f.Close()
	if got := s.Load("s"); got.SinceDelegation != 2 || got.Broken != "" {
		t.Errorf("torn newest slot: since_delegation %d (want the previous, 2), broken %q", got.SinceDelegation, got.Broken)
	}
	if err := bump(s, "s"); err != nil {
		t.Fatal(err)
	}
	data, _ = os.ReadFile(s.Path("s"))
	sf = parseSlots(data)
	if cur, idx2, _ := sf.newest(); idx2 != idx || cur.gen != 3 {
		t.Errorf("the write went to slot %d gen %d, want the torn slot %d, gen 3", idx2, cur.gen, idx)
	}
	if got := s.Load("s"); got.SinceDelegation != 3 {
		t.Errorf("since_delegation = %d, want 3", got.SinceDelegation)
	}
}

// A state that outgrows its slots is laid out anew in a bigger file; the
// writes after it are in place again.
func TestStateOutgrowsItsSlots(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	err := s.Update("s", func(st *State) error {
		st.BoutStatus = map[int]string{}
		for i := range 1000 {
			st.BoutStatus[i] = "delegue"
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(s.Path("s"))
	if err != nil || fi.Size() <= 2*minSlot {
		t.Fatalf("a ~15 KB state in a %d-byte file (%v)", fi.Size(), err)
	}
	for range 2 {
		if err := bump(s, "s"); err != nil {
			t.Fatal(err)
		}
	}
	fi2, _ := os.Stat(s.Path("s"))
	got := s.Load("s")
	if fi2.Size() != fi.Size() || got.SinceDelegation != 2 || len(got.BoutStatus) != 1000 {
		t.Errorf("after two more writes: %d bytes (was %d), since_delegation %d, %d bouts", fi2.Size(), fi.Size(), got.SinceDelegation, len(got.BoutStatus))
	}
	entries, _ := os.ReadDir(s.Dir)
	if len(entries) != 1 {
		t.Errorf("state dir holds %d files, want the state file only", len(entries))
	}
}

// A session kept in the one-JSON layout of before is read, then laid out
// in slots at the first write, its old lock file removed.
func TestLegacyStateIsMigrated(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	legacy := `{"schema":1,"session_id":"s","turn":4,"since_delegation":12}` + "\n"
	if err := os.WriteFile(s.Path("s"), []byte(legacy), 0o644); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(s.Path("s")+".lock", nil, 0o644)
	if got := s.Load("s"); got.SinceDelegation != 12 || got.Turn != 4 {
		t.Fatalf("legacy state not read: %+v", got)
	}
	// A write that changes nothing still moves it.
	if err := s.Update("s", func(*State) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.Path("s") + ".lock"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the old lock file is left behind")
	}
	if data, _ := os.ReadFile(s.Path("s")); !parseSlots(data).slotted {
		t.Errorf("not laid out in slots: %.60q", data)
	}
	if got := s.Load("s"); got.SinceDelegation != 12 || got.Turn != 4 {
		t.Errorf("migrated state: %+v", got)
	}
}

// Writers in parallel, one of them growing the state past its slots
// (which replaces the file while the others wait on its lock), lose no
// update.
func TestParallelWritersAcrossRelayout(t *testing.T) {
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
					if w == 0 && i == each/2 {
						st.BoutStatus = map[int]string{}
						for b := range 1000 {
							st.BoutStatus[b] = "delegue"
						}
					}
					return nil
				})
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := s.Load("s"); got.SinceDelegation != writers*each || len(got.BoutStatus) != 1000 {
		t.Errorf("since_delegation = %d, want %d; %d bouts", got.SinceDelegation, writers*each, len(got.BoutStatus))
	}
}

// The file stays readable: cat shows the header lines and the JSON.
func TestSlotLayoutIsReadable(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	if err := bump(s, "s"); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(s.Path("s"))
	first, rest, _ := bytes.Cut(data, []byte("\n"))
	want := fmt.Sprintf(`%s%016x","len":"`, stateMagic, 1)
	if !strings.HasPrefix(string(first), want) || len(first) != slotHeader-1 || !bytes.HasPrefix(rest, []byte(`{"schema":1,"session_id":"s"`)) {
		t.Errorf("slot 0 starts %q / %.40q", first, rest)
	}
}

func FuzzParseSlots(f *testing.F) {
	buf := make([]byte, 2*minSlot)
	fillSlot(buf[:minSlot], 7, []byte(`{"schema":1}`+"\n"))
	f.Add(buf)
	f.Add([]byte(stateMagic + "zz"))
	f.Add(bytes.Repeat([]byte(" "), 2*minSlot))
	f.Fuzz(func(t *testing.T, data []byte) {
		sf := parseSlots(data)
		for _, sl := range sf.slots {
			if sl.ok && len(sl.payload) > len(data) {
				t.Fatalf("payload of %d bytes from %d", len(sl.payload), len(data))
			}
		}
		// What a slot holds survives being written again.
		if cur, _, ok := sf.newest(); ok {
			out := make([]byte, sf.slotSize())
			fillSlot(out, cur.gen, cur.payload)
			again := parseSlot(out)
			if !again.ok || again.gen != cur.gen || !bytes.Equal(again.payload, cur.payload) {
				t.Fatalf("round trip: %+v vs %+v", again, cur)
			}
		}
	})
}
