// Package plans reads and validates the plan of the current task
// (.claude/miam-plan.json) and tracks its bouts' statuses. Built in its own
// issue.
package plans
