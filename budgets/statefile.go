package budgets

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// A session's state file is one JSON document, overwritten in place and
// padded with blanks to the file's length (JSON allows them): it stays
// what jq, an editor or the model's Write and Edit tools expect. Before
// each overwrite the same document is written, the same way, to the
// file's journal (NextSuffix); the overwrite then puts a cut mark first
// and writes the document's first byte last, so a process killed in the
// middle leaves a file that cannot parse — never a mix of two states that
// does — and readers take the journal, which is whole. The lock is taken
// on the state file itself (shared by readers, exclusive by Update).
//
// The state used to be replaced by rename on every call. On ext4 that cost
// the hook 0.3–0.5 ms a call: a rename over a file forces the new file's
// blocks out (auto_da_alloc) and frees the old file's, with a synchronous
// discard on `discard` mounts. An overwrite in place does neither. There
// is no fsync, as before. What holds: a process killed at any point leaves
// the last state or the new one. A power loss or kernel crash may lose the
// last updates, and since nothing orders the two files' writeback, may
// leave both cut: the session then starts afresh, and says so.
const (
	// NextSuffix names a state file's journal.
	NextSuffix = ".next"
	// cutMark opens a state file while it is overwritten.
	cutMark = '~'
	// maxStateLen bounds what is read: a state file beyond it is not ours.
	maxStateLen = 64 << 20
	// maxPadding is how much blank a shrunk state may leave in its file
	// before the file is truncated (which frees blocks: rarely).
	maxPadding = 64 << 10
)

var (
	// errNoState is an empty state file: created by a writer that has not
	// written yet.
	errNoState = errors.New("empty state file")
	// errTooLarge is a state file longer than maxStateLen.
	errTooLarge = errors.New("larger than any state: not a state file")
	// errNotOurs is a state file or journal that is not a regular file of
	// one name.
	errNotOurs = errors.New("not a regular file of one name")
)

// blank reports whether data holds nothing but JSON whitespace.
func blank(data []byte) bool {
	return len(bytes.TrimSpace(data)) == 0
}

// pickState returns the document a reader should decode: the state file's
// when it is a JSON document; the journal's when the state file was cut
// in the middle of its overwrite (it starts with the cut mark); else the
// state file's, which decodeState then reports as broken (a file broken
// by hand is said so, not silently replaced by an older state). An empty
// state file is errNoState, whatever the journal holds: a state file
// emptied or removed to start afresh stays so.
func pickState(main []byte, journal func() []byte) (doc []byte, fromJournal bool, err error) {
	switch {
	case blank(main):
		return nil, false, errNoState
	case json.Valid(main):
		return main, false, nil
	case main[0] == cutMark:
		if next := journal(); !blank(next) && json.Valid(next) {
			return next, true, nil
		}
	}
	return main, false, nil
}

// ReadStateFile returns the state JSON a state file holds, with its
// padding trimmed, under a shared lock so that no write is half done: the
// journal's when the state file was cut short by a crash. A file that
// holds no JSON document is returned as it is, for the caller to report;
// an empty one is errNoState.
func ReadStateFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, ok := regular(f); !ok {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	if err := lock(f, syscall.LOCK_SH); err != nil {
		return nil, fmt.Errorf("state lock %s: %w", path, err)
	}
	main, err := readAll(f) // its length once locked
	if err != nil {
		return nil, err
	}
	doc, _, err := pickState(main, func() []byte { return readJournal(path) })
	if err != nil {
		return nil, err
	}
	return append(bytes.TrimRight(doc, " \t\r\n"), '\n'), nil
}

// readJournal reads path's journal; nil when it cannot be read or is not a
// regular file.
func readJournal(path string) []byte {
	f, err := os.OpenFile(path+NextSuffix, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil
	}
	defer f.Close()
	st, ok := regular(f)
	if !ok {
		return nil
	}
	data, _ := readSized(f, st.Size)
	return data
}

// readAll reads the whole of f from its start.
func readAll(f *os.File) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	return readSized(f, fi.Size())
}

// readSized reads f's size bytes from its start.
func readSized(f *os.File, size int64) ([]byte, error) {
	if size > maxStateLen {
		return nil, fmt.Errorf("%s: %d bytes: %w", f.Name(), size, errTooLarge)
	}
	data := make([]byte, size)
	n, err := f.ReadAt(data, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return data[:n], nil
}

// padded is doc padded with blanks to size, when that leaves at most
// maxPadding of blank; else doc.
func padded(doc []byte, size int64) []byte {
	pad := size - int64(len(doc))
	if pad <= 0 || pad > maxPadding {
		return doc
	}
	buf := make([]byte, size)
	copy(buf, doc)
	for i := len(doc); i < len(buf)-1; i++ {
		buf[i] = ' '
	}
	buf[len(buf)-1] = '\n'
	return buf
}

// overwrite writes doc (non-empty) over f, whose length is size: the cut
// mark first, then all but doc's first byte, then that byte, so that the
// file parses only once the whole of doc is in. A file left more than
// maxPadding longer than doc is cut to it. It returns f's new length.
func overwrite(f *os.File, size int64, doc []byte) (int64, error) {
	buf := padded(doc, size)
	if _, err := f.WriteAt([]byte{cutMark}, 0); err != nil {
		return size, err
	}
	if _, err := f.WriteAt(buf[1:], 1); err != nil {
		return size, err
	}
	if int64(len(buf)) < size {
		if err := f.Truncate(int64(len(buf))); err != nil {
			return size, err
		}
	}
	_, err := f.WriteAt(buf[:1], 0)
	return max(size, int64(len(buf))), err
}

// writeJournal writes doc to path's journal, in place and padded like the
// state file, with the state file's permissions. Something that is not a
// regular file of one name (a symlink, a hard link, a FIFO, a directory
// planted there) is moved aside and the journal made anew: never written
// through. The caller
// holds the state file's lock, which guards the journal too.
func writeJournal(path string, doc []byte, perm fs.FileMode) error {
	name := path + NextSuffix
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, perm)
	var st syscall.Stat_t
	if err == nil {
		var ok bool
		if st, ok = ours(f); !ok {
			f.Close()
			err = fmt.Errorf("%s: %w", name, errNotOurs)
		}
	}
	if err != nil {
		if rerr := moveAside(name); rerr != nil {
			return errors.Join(err, rerr)
		}
		if f, err = os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, perm); err != nil {
			return err
		}
		st = syscall.Stat_t{Mode: uint32(perm)} // new and empty
	}
	if fs.FileMode(st.Mode).Perm() != perm {
		err = f.Chmod(perm)
	}
	if err == nil {
		buf := padded(doc, st.Size)
		if _, err = f.WriteAt(buf, 0); err == nil && int64(len(buf)) < st.Size {
			err = f.Truncate(int64(len(buf)))
		}
	}
	return errors.Join(err, f.Close())
}

// regular reports whether f is a regular file, with its stat.
func regular(f *os.File) (syscall.Stat_t, bool) {
	var st syscall.Stat_t
	return st, syscall.Fstat(int(f.Fd()), &st) == nil && st.Mode&syscall.S_IFMT == syscall.S_IFREG
}

// ours reports whether f is a regular file with one name: one the hook
// may write in place without writing anything else.
func ours(f *os.File) (syscall.Stat_t, bool) {
	st, ok := regular(f)
	return st, ok && st.Nlink == 1
}

// moveAside renames what is at path out of the way, to path.broken-*,
// whatever it is (a symlink, a hard link, a FIFO, a socket, a directory, a
// file we may not write): never written through nor removed, it is left
// for whoever planted it.
func moveAside(path string) error {
	for i := 0; i < 100; i++ {
		aside := fmt.Sprintf("%s.broken-%d-%d", path, os.Getpid(), i)
		err := os.Rename(path, aside)
		if err == nil || errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		var st syscall.Stat_t
		if syscall.Lstat(aside, &st) != nil { // not a clash with an earlier one
			return err
		}
	}
	return fmt.Errorf("%s: could not be moved aside", path)
}

// openLocked opens path (creating it empty) and takes its exclusive lock.
// What cannot be written in place without writing something else — a
// symlink, a hard link, a FIFO, a socket, a directory, a file we may not
// write — is moved aside first and the session starts afresh (moved says
// what was there), so that a planted link neither makes the hook write its
// target nor stops the session's counts. If the file was replaced while we
// waited for the lock (the Write tool, an older miam that renamed its
// state over the file), the lock is the old inode's: we open the new one.
// held is what the file was once locked: its length and mode are the
// caller's, with no second fstat.
func openLocked(path string) (f *os.File, held syscall.Stat_t, moved string, err error) {
	for i := 0; i < 100; i++ {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o644)
		if err == nil {
			if _, ok := ours(f); !ok {
				f.Close()
				err = errNotOurs
			}
		}
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, held, "", fmt.Errorf("state %w", err)
			}
			if rerr := moveAside(path); rerr != nil {
				return nil, held, "", fmt.Errorf("state %s: %w (and it could not be moved aside: %w)", path, err, rerr)
			}
			moved = fmt.Sprintf("%s could not be written in place (%v): moved aside, the session's counts start afresh", path, err)
			continue
		}
		if err := lock(f, syscall.LOCK_EX); err != nil {
			f.Close()
			return nil, held, "", fmt.Errorf("state lock %s: %w", path, err)
		}
		var now syscall.Stat_t
		if syscall.Fstat(int(f.Fd()), &held) == nil && syscall.Lstat(path, &now) == nil &&
			held.Ino == now.Ino && held.Dev == now.Dev && held.Nlink == 1 {
			return f, held, moved, nil
		}
		f.Close()
	}
	return nil, held, "", fmt.Errorf("state %s: replaced 100 times while waiting for its lock", path)
}

func lock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// readLocked reads the state document of f, size bytes long, under the
// lock held on it (see pickState). stale is set when the document is the
// journal's, the state file having been cut short. A file too large to be
// a state is errTooLarge.
func readLocked(f *os.File, path string, size int64) (doc []byte, stale bool, err error) {
	main, err := readSized(f, size)
	if err != nil {
		return nil, false, err
	}
	return pickState(main, func() []byte { return readJournal(path) })
}
