package delegate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"miam/delegate/wire"
)

// Client talks to a running daemon over its loopback routes. It re-reads
// the daemon's address and token on every call, so it follows a restart.
type Client struct {
	Dir  string // the daemon's state directory
	HTTP *http.Client
}

// Ping reports whether a daemon answers at the published address.
func (c *Client) Ping(ctx context.Context) error {
	var p struct {
		OK bool `json:"ok"`
	}
	return c.do(ctx, http.MethodGet, "/v1/ping", nil, &p)
}

// Submit queues a request and waits up to the daemon's call_wait_s.
func (c *Client) Submit(ctx context.Context, session, project string, req wire.Request) (wire.Answer, error) {
	var a wire.Answer
	err := c.do(ctx, http.MethodPost, "/v1/deleguer", SubmitBody{Session: session, Project: project, Request: req}, &a)
	return a, err
}

// Follow returns the answer at the end, or pending after wait.
func (c *Client) Follow(ctx context.Context, id string, wait time.Duration) (wire.Answer, error) {
	var a wire.Answer
	q := url.Values{"demande_id": {id}, "attente_s": {strconv.Itoa(int(wait.Seconds()))}}
	err := c.do(ctx, http.MethodGet, "/v1/suivre?"+q.Encode(), nil, &a)
	return a, err
}

// Cancel cancels a request.
func (c *Client) Cancel(ctx context.Context, id string) (wire.Answer, error) {
	var a wire.Answer
	err := c.do(ctx, http.MethodPost, "/v1/annuler?"+url.Values{"demande_id": {id}}.Encode(), nil, &a)
	return a, err
}

// Etat reports engines, queue and spend.
func (c *Client) Etat(ctx context.Context, project string) (Etat, error) {
	var e Etat
	err := c.do(ctx, http.MethodGet, "/v1/etat?"+url.Values{"project": {project}}.Encode(), nil, &e)
	return e, err
}

func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	addr, token, err := ReadDaemonFiles(c.Dir)
	if err != nil {
		return fmt.Errorf("%w: not running: %w", wire.ErrUnreachable, err)
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, addr.URL()+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %w", wire.ErrUnreachable, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("daemon: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Erreur string `json:"erreur"`
		}
		if json.Unmarshal(data, &e) == nil && e.Erreur != "" {
			return fmt.Errorf("%s", e.Erreur)
		}
		return fmt.Errorf("daemon answered %d: %s", resp.StatusCode, strings.TrimSpace(string(data)))
	}
	return json.Unmarshal(data, out)
}
