// Package delegate runs delegation requests: it queues a deleguer request,
// routes it across the executors (local, API, Haiku), feeds control failures
// back and writes the output once it is valide. Built in its own issue.
package delegate
