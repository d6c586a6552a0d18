package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"miam/delegate"
	"miam/delegate/wire"
)

// stateDir is $XDG_STATE_HOME/miam, else ~/.local/state/miam.
func stateDir() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "miam"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no XDG_STATE_HOME and no home directory: %w", err)
	}
	return filepath.Join(home, ".local", "state", "miam"), nil
}

// waiter is `miam attendre`: one long poll, reconnecting across daemon
// restarts, printing exactly one JSON line.
type waiter struct {
	dir      string
	client   *http.Client
	attempts int                       // consecutive failures before perdue
	backoff  func(n int) time.Duration // wait before retry n
}

func runAttendre(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fl := flag.NewFlagSet("attendre", flag.ContinueOnError)
	fl.SetOutput(stderr)
	attempts := fl.Int("tentatives", 30, "consecutive connection failures before answering perdue")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if fl.NArg() != 1 {
		return errors.New("usage: miam attendre DEMANDE_ID")
	}
	dir, err := stateDir()
	if err != nil {
		return err
	}
	w := waiter{dir: dir, client: &http.Client{}, attempts: *attempts,
		backoff: func(n int) time.Duration { return min(time.Duration(n)*time.Second, 10*time.Second) }}
	a := w.wait(ctx, fl.Arg(0))
	line, _ := json.Marshal(a)
	_, err = fmt.Fprintf(stdout, "%s\n", line)
	return err
}

// wait returns the request's terminal answer, or perdue once the daemon has
// been unreachable for w.attempts tries in a row.
func (w waiter) wait(ctx context.Context, id string) wire.Answer {
	var last error
	for n := 1; n <= w.attempts; n++ {
		a, retry, err := w.once(ctx, id)
		if err == nil {
			return a
		}
		last = err
		if !retry || ctx.Err() != nil {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(w.backoff(n)):
		}
	}
	ok := false
	msg := "The daemon could not be reached; send the request again or do it yourself."
	if last != nil {
		msg += " (" + last.Error() + ")"
	}
	return wire.Answer{OK: &ok, DemandeID: id, Etat: wire.Perdue, Fin: wire.Perdue, Raison: "daemon_injoignable", Message: msg}
}

// once makes one long poll. retry says whether a failure may heal (the
// daemon restarting) rather than be final.
func (w waiter) once(ctx context.Context, id string) (wire.Answer, bool, error) {
	addr, token, err := delegate.ReadDaemonFiles(w.dir)
	if err != nil {
		return wire.Answer{}, true, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, addr.URL()+"/attendre?demande_id="+url.QueryEscape(id), nil)
	if err != nil {
		return wire.Answer{}, false, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := w.client.Do(req)
	if err != nil {
		return wire.Answer{}, true, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return wire.Answer{}, true, err
	}
	var a wire.Answer
	switch {
	case resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusNotFound:
		if err := json.Unmarshal(body, &a); err != nil || a.Fin == "" {
			return wire.Answer{}, true, fmt.Errorf("daemon answered %d with %q", resp.StatusCode, strings.TrimSpace(string(body)))
		}
		return a, false, nil
	default:
		return wire.Answer{}, true, fmt.Errorf("daemon answered %d: %s", resp.StatusCode, strings.TrimSpace(string(body)))
	}
}
