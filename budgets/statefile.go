package budgets

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// A session's state file is one JSON document, overwritten in place and
// padded with blanks to the file's length (JSON allows them): it stays
// what jq, an editor or the model's Write and Edit tools expect. Before
// each overwrite the same document is written, the same way, to the
// file's journal (NextSuffix): a crash that cuts the overwrite short
// leaves the whole new state there, and a reader takes it when the state
// file does not parse. The lock is taken on the state file itself.
//
// The state used to be replaced by rename on every call. On ext4 that cost
// the hook 0.3–0.5 ms a call: a rename over a file forces the new file's
// blocks out (auto_da_alloc) and frees the old file's, with a synchronous
// discard on `discard` mounts. An overwrite in place does neither. There
// is no fsync, as before: a crash may lose the last updates, never leave
// the state unreadable.
const (
	// NextSuffix names a state file's journal.
	NextSuffix = ".next"
	// maxStateLen bounds what is read: a state file beyond it is not ours.
	maxStateLen = 64 << 20
	// maxPadding is how much blank a shrunk state may leave in its file
	// before the file is truncated (which frees blocks: rarely).
	maxPadding = 64 << 10
)

// errNoState is an empty state file: created by a writer that has not
// written yet.
var errNoState = errors.New("empty state file")

// blank reports whether data holds nothing but JSON whitespace.
func blank(data []byte) bool {
	return len(bytes.TrimSpace(data)) == 0
}

// pickState returns the document a reader should decode: the state file's
// when it is a JSON document, else its journal's when that one is, else
// the state file's (which decodeState then reports as broken). An empty
// state file is errNoState, whatever the journal holds: a state file
// removed to start afresh stays so.
func pickState(main []byte, journal func() []byte) ([]byte, error) {
	switch {
	case blank(main):
		return nil, errNoState
	case json.Valid(main):
		return main, nil
	}
	if next := journal(); !blank(next) && json.Valid(next) {
		return next, nil
	}
	return main, nil
}

// ReadStateFile returns the state JSON a state file holds, read without
// the lock, with its padding trimmed: the journal's when the state file is
// being overwritten (or was cut short by a crash). A file that holds no
// JSON document is returned as it is, for the caller to report; an empty
// one is errNoState.
func ReadStateFile(path string) ([]byte, error) {
	main, err := readFile(path)
	if err != nil {
		return nil, err
	}
	doc, err := pickState(main, func() []byte {
		next, _ := readFile(path + NextSuffix)
		return next
	})
	if err != nil {
		return nil, err
	}
	return append(bytes.TrimRight(doc, " \t\r\n"), '\n'), nil
}

func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAll(f)
}

// readAll reads the whole of f from its start.
func readAll(f *os.File) ([]byte, error) {
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

// overwrite writes doc at the start of f, whose length is size, padded
// with blanks to that length; a file more than maxPadding longer than doc
// is cut to it.
func overwrite(f *os.File, size int64, doc []byte) error {
	buf := doc
	if pad := size - int64(len(doc)); pad > 0 && pad <= maxPadding {
		buf = make([]byte, size)
		copy(buf, doc)
		for i := len(doc); i < len(buf)-1; i++ {
			buf[i] = ' '
		}
		buf[len(buf)-1] = '\n'
	}
	if _, err := f.WriteAt(buf, 0); err != nil {
		return err
	}
	if int64(len(buf)) < size {
		return f.Truncate(int64(len(buf)))
	}
	return nil
}

// writeJournal writes doc to path's journal, in place like the state file
// (and, like it, never through a symlink).
func writeJournal(path string, doc []byte) error {
	f, err := os.OpenFile(path+NextSuffix, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err == nil {
		err = overwrite(f, fi.Size(), doc)
	}
	return errors.Join(err, f.Close())
}

// openLocked opens path (creating it empty) and takes its exclusive lock.
// A symlink is refused (O_NOFOLLOW): written in place, it would have the
// hook overwrite whatever file it points to.
// If the file was replaced while we waited (a Write tool, an older miam
// that renamed its state over it), the lock we got is the old inode's, so
// we open the new one.
func openLocked(path string) (*os.File, error) {
	for i := 0; ; i++ {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o644)
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

// readLocked reads the state document under the lock held on f (see
// pickState) and the file's length; stale is set when the document is the
// journal's, the state file having been cut short.
func readLocked(f *os.File, path string) (doc []byte, size int64, stale bool, err error) {
	main, err := readAll(f)
	if err != nil {
		return nil, 0, false, err
	}
	journal := false
	doc, err = pickState(main, func() []byte {
		journal = true
		next, _ := readFile(path + NextSuffix)
		return next
	})
	stale = journal && err == nil && !bytes.Equal(doc, main)
	return doc, int64(len(main)), stale, err
}
