package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/uistream"
)

// Offer is the tools one run may call, fixed at its start: the model is given Tools, and the
// round loop (runs.Tools) asks Owns of each call and Run of the round's owned calls. Owns and
// Tools are safe for concurrent use; Run runs on the run's goroutine.
type Offer struct {
	set         *Set
	tools       map[string]*entry // by the name the model sees
	defs        []llm.Tool        // in the alias's order
	servers     []string          // the MCP servers offered: server__* names are theirs
	redactModel bool
}

// Tools are the definitions the model is sent.
func (o *Offer) Tools() []llm.Tool { return o.defs }

// Menu is the configured server-side tools and which aliases offer which (DESIGN §8). The
// zero value offers none. Read-only once built.
type Menu struct {
	// Set runs the tools; nil: none configured.
	Set *Set
	// Offers lists, per alias, the tools (names in the config's tools:) it offers the model.
	Offers map[string][]string
}

// For is what alias offers a run's request req, added to its tools (Offer.Add); nil when it
// offers none (or an MCP server that is down offers nothing meanwhile): every call goes to
// the client. redactModel is the alias's redact_input.
func (m *Menu) For(ctx context.Context, alias string, redactModel bool, req *llm.Request) (*Offer, error) {
	if m.Set == nil || len(m.Offers[alias]) == 0 {
		return nil, nil
	}
	o := m.Set.Offer(ctx, m.Offers[alias], redactModel)
	if len(o.Tools()) == 0 {
		return nil, nil
	}
	if err := o.Add(req, alias); err != nil {
		return nil, err
	}
	return o, nil
}

// Add gives req, a run's request on alias, the offered tools besides its own. A client that
// declares a tool of the same name is refused (an invalid request): its calls could not be
// told apart. The tool rounds hand the round's reasoning back (DESIGN §8).
func (o *Offer) Add(req *llm.Request, alias string) error {
	for i, t := range req.Tools {
		if o.Owns(t.Name) {
			return &llm.Error{Kind: llm.Invalid, Type: "invalid_request_error", Param: "tools",
				Message: fmt.Sprintf("Invalid 'tools[%d]': '%s' is a server-side tool of model '%s'; the client cannot declare it.", i, t.Name, alias)}
		}
	}
	req.Tools = append(slices.Clip(req.Tools), o.defs...)
	req.KeepReasoning = true
	return nil
}

// Owns reports whether the gateway answers calls of the tool name: the tools it offers, and
// any other server__tool name of an MCP server it offers (a tool the filter left out, or
// one the server does not have), which Run refuses without calling the server: such a call
// must neither reach the server nor go to the client, which cannot run it.
func (o *Offer) Owns(name string) bool {
	_, ok := o.tools[name]
	return ok || o.serverOf(name) != ""
}

// serverOf is the offered MCP server whose namespace (server__) name is in, "" for none.
func (o *Offer) serverOf(name string) string {
	for _, s := range o.servers {
		if strings.HasPrefix(name, s+"__") {
			return s
		}
	}
	return ""
}

// Run runs calls (all owned) one after the other, in call order, and returns the tool
// messages the next round sends back, one per call. A tool that fails (an error, its
// timeout, its liveness) gives tool-output-error and an error result for the model, and the
// next call runs. Run fails only when ctx ends (the run was stopped): the call in flight is
// canceled (its HTTP request; an MCP server is sent notifications/cancelled), its part gets
// tool-output-error, and the calls after it do not run.
func (o *Offer) Run(ctx context.Context, calls []llm.ToolCall, enc *uistream.Encoder) ([]llm.Message, error) {
	out := make([]llm.Message, 0, len(calls))
	for _, tc := range calls {
		if ctx.Err() != nil {
			return out, context.Cause(ctx)
		}
		args := tc.Arguments
		if args == "" {
			args = "{}"
		}
		e := o.tools[tc.Name]
		switch {
		case e == nil && o.serverOf(tc.Name) != "":
			// Not offered (filtered out, or unknown): refused, the server never sees it.
			msg := "The tool " + tc.Name + " is not offered: MCP server " + o.serverOf(tc.Name) + " has no such tool, or the gateway's filter leaves it out."
			enc.ToolError(tc.ID, msg)
			o.set.o.Log.Warn("tool call refused: not offered", "tool", tc.Name, "call", tc.ID)
			out = append(out, toolMessage(tc.ID, "Error: "+msg))
			continue
		case e == nil: // not owned: the caller's mistake, answered rather than run
			out = append(out, toolMessage(tc.ID, "Error: "+tc.Name+" is not a tool of this gateway."))
			continue
		case !json.Valid([]byte(args)):
			// The encoder already told the client (ServerToolCall): the call does not run.
			out = append(out, toolMessage(tc.ID, "Error: the tool's arguments are not valid JSON."))
			continue
		}
		r := o.invoke(ctx, e, tc, json.RawMessage(args), enc)
		out = append(out, toolMessage(tc.ID, r.model))
		if ctx.Err() != nil {
			return out, context.Cause(ctx)
		}
	}
	return out, nil
}

// toolMessage is a tool's result for the model: plain text, sent as a string (servers that
// speak Chat Completions do not all take content parts in a tool message).
func toolMessage(id, text string) llm.Message {
	return llm.Message{Role: llm.RoleTool, ToolCallID: id, Parts: []llm.Part{{Type: llm.PartText, Text: text}}, Plain: true}
}

func (o *Offer) redactJSON(s string) string {
	if f := o.set.o.RedactJSON; f != nil {
		return f(s)
	}
	return s
}

func (o *Offer) redactText(s string) string {
	if f := o.set.o.RedactText; f != nil {
		return f(s)
	}
	return s
}
