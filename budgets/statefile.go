package budgets

import (
	"bytes"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"strconv"
	"syscall"
)

// A session's state file holds two slots of equal size, one after the
// other. Each slot is a 96-byte header line, then the state's JSON, then
// blanks; so the file is a stream of JSON values that jq reads as it is:
//
//	{"miam_state":1,"gen":"0000000000000007","len":"0000028a","fnv1a":"1a2b3c4d"}
//	{"schema":1,"session_id":…}
//
// A write overwrites, in place, the slot that does not hold the newest
// state, with the next generation: a crash in the middle leaves the newest
// state whole in the other slot, and a reader that catches a slot half
// written sees its checksum fail and takes the other one. The lock is taken
// on the file itself.
//
// The state used to be one JSON file replaced by rename on every call. On
// ext4 that cost the hook 0.3–0.5 ms a call: a rename over a file forces
// the new file's blocks out (auto_da_alloc) and frees the old file's, with
// a synchronous discard on `discard` mounts. An overwrite in place does
// neither; only a state outgrowing its slots is laid out anew, by rename.
const (
	slotHeader  = 96
	minSlot     = 4 << 10
	stateMagic  = `{"miam_state":1,"gen":"`
	maxStateLen = 64 << 20 // a state file beyond this is not ours
)

// errNoState is an empty state file: created by a writer that has not
// written yet, or whose first write was cut short.
var errNoState = errors.New("empty state file")

// slot is one slot's header, checked.
type slot struct {
	gen     uint64
	payload []byte
	ok      bool
}

// parseSlot reads the slot at the start of b; ok is false unless its
// header and checksum hold.
func parseSlot(b []byte) slot {
	if len(b) < slotHeader || string(b[:len(stateMagic)]) != stateMagic || b[slotHeader-1] != '\n' {
		return slot{}
	}
	h := string(b[:slotHeader])
	gen, err1 := strconv.ParseUint(h[23:39], 16, 64)
	n, err2 := strconv.ParseUint(h[48:56], 16, 32)
	sum, err3 := strconv.ParseUint(h[67:75], 16, 32)
	if err1 != nil || err2 != nil || err3 != nil || h[39:48] != `","len":"` || h[56:67] != `","fnv1a":"` ||
		h[75:77] != `"}` || int(n) > len(b)-slotHeader {
		return slot{}
	}
	payload := b[slotHeader : slotHeader+int(n)]
	if checksum(payload) != uint32(sum) {
		return slot{}
	}
	return slot{gen: gen, payload: payload, ok: true}
}

// checksum tells a slot cut short from a whole one; FNV-1a, since
// hash/crc32's tables cost every hook process ~20 µs at start-up.
func checksum(b []byte) uint32 {
	h := fnv.New32a()
	h.Write(b)
	return h.Sum32()
}

// fillSlot lays a slot out in buf (its whole size).
func fillSlot(buf []byte, gen uint64, payload []byte) {
	h := fmt.Appendf(buf[:0], `%s%016x","len":"%08x","fnv1a":"%08x"}`, stateMagic, gen, len(payload), checksum(payload))
	for i := len(h); i < slotHeader-1; i++ {
		buf[i] = ' '
	}
	buf[slotHeader-1] = '\n'
	n := copy(buf[slotHeader:], payload)
	for i := slotHeader + n; i < len(buf)-1; i++ {
		buf[i] = ' '
	}
	buf[len(buf)-1] = '\n'
}

// slotFile is a state file as read.
type slotFile struct {
	size    int64
	slotted bool // laid out in two slots
	slots   [2]slot
	legacy  []byte // the file, when it is not slotted
}

// slotSize is the size of each slot, 0 when the file is not laid out in
// two slots of at least minSlot bytes.
func (sf slotFile) slotSize() int64 {
	if !sf.slotted {
		return 0
	}
	return sf.size / 2
}

// parseSlots reads a state file. One that is not laid out in slots is
// returned as legacy: the one JSON document the state was before.
func parseSlots(data []byte) slotFile {
	sf := slotFile{size: int64(len(data))}
	sf.slotted = sf.size >= 2*minSlot && sf.size%2 == 0 && bytes.HasPrefix(data, []byte(stateMagic[:2]))
	if !sf.slotted {
		sf.legacy = data
		return sf
	}
	n := sf.size / 2
	sf.slots[0], sf.slots[1] = parseSlot(data[:n]), parseSlot(data[n:])
	return sf
}

// newest returns the slot of the highest generation that holds, and its
// index.
func (sf slotFile) newest() (slot, int, bool) {
	a, b := sf.slots[0], sf.slots[1]
	switch {
	case a.ok && (!b.ok || a.gen > b.gen):
		return a, 0, true
	case b.ok:
		return b, 1, true
	}
	return slot{}, 0, false
}

// broken says why a slotted file holds no state.
func (sf slotFile) broken(path string) error {
	return fmt.Errorf("%s: no slot holds a state (both headers or checksums are bad)", path)
}

// write saves payload as the next generation: in place, into the slot that
// does not hold the newest state; or, when the file is empty, too small
// for payload or not laid out in slots, as a new file (renamed over the
// old one when it had content).
func (sf slotFile) write(f *os.File, path string, payload []byte) error {
	cur, idx, ok := sf.newest()
	gen := cur.gen + 1
	if n := sf.slotSize(); n >= int64(slotHeader+len(payload)) {
		other := int64(0)
		if ok && idx == 0 {
			other = 1
		}
		buf := make([]byte, n)
		fillSlot(buf, gen, payload)
		_, err := f.WriteAt(buf, other*n)
		return err
	}
	n := minSlot
	for n < 2*(slotHeader+len(payload)) { // room to grow before the next layout
		n *= 2
	}
	buf := make([]byte, 2*n)
	fillSlot(buf[:n], gen, payload)
	spare := buf[n:] // blank: it never passes for a state
	for i := range spare {
		spare[i] = ' '
	}
	spare[len(spare)-1] = '\n'
	if sf.size == 0 {
		_, err := f.WriteAt(buf, 0) // nothing to lose if cut short
		return err
	}
	// Waiting writers hold the old inode's lock, see it replaced and open
	// the new one (openLocked).
	return WriteFileAtomic(path, buf, 0o644)
}

// openLocked opens path (creating it empty) and takes its exclusive lock.
// A writer that laid the file out anew replaced it while we waited: the
// lock we got is the old inode's, so we open the new one.
func openLocked(path string) (*os.File, error) {
	for i := 0; ; i++ {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, fmt.Errorf("state %w", err)
		}
		if err := flock(f); err != nil {
			f.Close()
			return nil, fmt.Errorf("state lock %s: %w", path, err)
		}
		var held, now syscall.Stat_t
		if syscall.Fstat(int(f.Fd()), &held) == nil && syscall.Stat(path, &now) == nil &&
			held.Ino == now.Ino && held.Dev == now.Dev {
			return f, nil
		}
		f.Close()
		if i == 100 {
			return nil, fmt.Errorf("state %s: replaced 100 times while waiting for its lock", path)
		}
	}
}

// readSlots reads a whole state file from f.
func readSlots(f *os.File) (slotFile, error) {
	data, err := readAt(f)
	if err != nil {
		return slotFile{}, err
	}
	return parseSlots(data), nil
}

func readAt(f *os.File) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() > maxStateLen {
		return nil, fmt.Errorf("%s: %d bytes, not a state file", f.Name(), fi.Size())
	}
	data := make([]byte, fi.Size())
	n, err := f.ReadAt(data, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return data[:n], nil
}

// ReadStateFile returns the newest state JSON held by a state file, read
// without the lock: a slot being written is skipped for the other one. A
// file not laid out in slots is returned whole (the state's layout
// before). An empty file is errNoState; a slotted file that holds no state,
// an error that says why.
func ReadStateFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var sf slotFile
	// Both slots fail only if two writes overlapped this read: read again.
	for range 3 {
		data, err := readAt(f)
		if err != nil {
			return nil, err
		}
		if len(data) == 0 {
			return nil, errNoState
		}
		sf = parseSlots(data)
		if !sf.slotted {
			return sf.legacy, nil
		}
		if cur, _, ok := sf.newest(); ok {
			return cur.payload, nil
		}
	}
	return nil, sf.broken(path)
}
