package delegate

import (
	"fmt"
	"os"
	"strings"

	"miam/delegate/wire"
)

// systemPrompt frames every executor the same way: output only what was
// asked, so that the controls judge the artefact and not a chat.
const systemPrompt = "You are a careful software engineer working on one small, well-specified piece of a larger task. " +
	"Answer with the requested artefact only: for code, one complete file in a single fenced code block, no explanations, " +
	"no placeholders, every requested name defined. Follow the style of the example when one is given."

// buildPrompt turns a request into the first chat of a try, reading joined
// files and the example range inside the project.
func buildPrompt(project string, req wire.Request) ([]Message, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "Task (%s): %s\n", req.TypeOr(), req.Consigne)
	if req.Langue != "" {
		fmt.Fprintf(&b, "Write the output in %s.\n", req.Langue)
	}
	if req.Sortie != "" {
		fmt.Fprintf(&b, "The output is the whole content of the file %s.\n", req.Sortie)
	}
	if len(req.Attendus) > 0 {
		fmt.Fprintf(&b, "It must define: %s.\n", strings.Join(req.Attendus, ", "))
	}
	if req.NTests > 0 {
		fmt.Fprintf(&b, "It must contain at least %d test functions.\n", req.NTests)
	}
	if req.Format == "json" {
		b.WriteString("Answer with JSON only.\n")
		if len(req.Schema) > 0 {
			fmt.Fprintf(&b, "The JSON must match this schema: %s\n", req.Schema)
		}
	}
	if len(req.Fichiers) > 0 || req.Modele != "" {
		root, err := os.OpenRoot(project)
		if err != nil {
			return nil, fmt.Errorf("open project: %w", err)
		}
		defer root.Close()
		for _, f := range req.Fichiers {
			name, text, err := readRange(root, f)
			if err != nil {
				return nil, fmt.Errorf("fichiers: %w", err)
			}
			fmt.Fprintf(&b, "\n--- file %s ---\n%s", name, text)
			if !strings.HasSuffix(text, "\n") {
				b.WriteByte('\n')
			}
		}
		if req.Modele != "" {
			name, text, err := readRange(root, req.Modele)
			if err != nil {
				return nil, fmt.Errorf("modele: %w", err)
			}
			fmt.Fprintf(&b, "\n--- example to imitate (%s) ---\n%s", name, text)
		}
	}
	return []Message{{Role: "system", Content: systemPrompt}, {Role: "user", Content: b.String()}}, nil
}

// retryMessages appends a failed answer and the exact control failures, so
// the next try repairs rather than starts over.
func retryMessages(msgs []Message, answer string, failures []wire.Control) []Message {
	var b strings.Builder
	b.WriteString("Your answer failed these checks:\n")
	for _, c := range failures {
		if !c.OK {
			fmt.Fprintf(&b, "- %s: %s\n", c.Nom, c.Message)
		}
	}
	b.WriteString("Fix them and answer again with the complete artefact.")
	out := append([]Message(nil), msgs...)
	return append(out, Message{Role: "assistant", Content: answer}, Message{Role: "user", Content: b.String()})
}

// subagentCall is the bout handed back to Claude when no executor may take
// it: a ready Agent tool call on the cheapest model Claude has.
func subagentCall(project string, req wire.Request, msgs []Message) *wire.SubagentCall {
	var prompt strings.Builder
	for _, m := range msgs {
		if m.Role == "user" {
			prompt.WriteString(m.Content)
		}
	}
	if req.Sortie != "" {
		fmt.Fprintf(&prompt, "\nWrite the result to %s with the Write tool, then answer with one line saying what you wrote.", req.Sortie)
	}
	desc := req.Consigne
	if len(desc) > 60 {
		desc = desc[:60]
	}
	return &wire.SubagentCall{Tool: "Agent", Input: map[string]any{
		"description":       "miam bout: " + desc,
		"prompt":            prompt.String(),
		"subagent_type":     "general-purpose",
		"model":             "haiku",
		"run_in_background": false,
	}}
}
