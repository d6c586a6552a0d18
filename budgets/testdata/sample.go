// Package sample shows how comments are counted.
package sample

import "fmt"

// Greeter greets people.
// It has two lines of doc.
type Greeter struct {
	Name string // trailing comment
}

// a detached comment

/*
Greet returns a greeting,
in a block comment.
*/
func (g Greeter) Greet() string {
	// comment in a body
	msg := `multi
line`
	return fmt.Sprint(msg, g.Name)
}

func TestGreet(t *testing.T) {
}
