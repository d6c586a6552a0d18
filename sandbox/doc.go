// Package sandbox runs untrusted commands in a throwaway clone with no
// network, confined writes and a scrubbed environment. Built in its own issue.
package sandbox
