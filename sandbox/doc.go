// Package sandbox runs untrusted commands (the project's tests on code a
// model wrote) in a throwaway clone of the project with no network, an
// allow-listed read-only filesystem, writes confined to the clone and a
// private /tmp, an environment built from nothing, bounded resources and a
// wall-clock timeout that kills the whole process tree.
//
// The pieces, each usable alone:
//
//   - Detect probes the isolation backends in order and records why each
//     one fails; ErrNoIsolation names every failed probe and the fix.
//     bubblewrap: hardened arguments, the generated seccomp filter, rlimits
//     set on bwrap while it is stopped at exec (ptrace; the prlimit wrapper
//     where ptrace is refused). native: miam's own helper (Init) started
//     in new user, mount, network, pid, ipc, uts and cgroup namespaces,
//     which builds the same allow-listed root and runs the command under
//     the same filter. landlock (never as root): a Landlock ruleset, the
//     filter with socket() denied, and a subreaper helper that kills the
//     whole tree. bubblewrap and native run the command as uid 65534 when
//     miam runs as root.
//   - Parse turns a declared command line into argv without a shell,
//     refusing metacharacters and commands outside the allow-list, and
//     resolving argv[0] on a trusted PATH outside the clone.
//   - NewClone makes a clone that cannot touch the user's repository
//     (git clone --no-hardlinks, never a worktree), and reads artefacts back
//     through os.Root; its host-side git disables hooks, fsmonitor, pager and
//     external diff, and refuses a clone whose config defines a filter, diff
//     or merge driver, an include, or another command.
//   - Command builds the launcher's *exec.Cmd from a Spec (pure); Runner.Run
//     runs it with output caps and the timeout. Runner.Prepare (and
//     Runner.PrepareClone, while the clone is filled) starts a bubblewrap
//     sandbox ahead, blocked before the exec, so that its set-up is off
//     the run's path; Prepared.Run lets the command go.
//   - Init must be called first thing in main (and TestMain) of a program
//     that uses the native or Landlock backend: it is their helper.
//
// SANDBOX.md (shared notes) holds the measured facts, the escapes reproduced
// and the attack tests this package's suite carries.
package sandbox
