// Package hooks turns one host hook payload into one verdict: it decodes the
// host's event into a host-neutral Event, decides with the pure Decide from
// the event, the session's state and the config, and encodes the Verdict in
// the host's wire format.
package hooks
