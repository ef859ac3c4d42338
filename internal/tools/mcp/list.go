package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// Tool is a tool a server offers (tools/list).
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	// Raw is the tool as the server listed it (title, annotations, outputSchema, _meta...),
	// for a gateway that lists it on unchanged.
	Raw json.RawMessage `json:"-"`
}

// maxPages bounds a paged tool list: a server that never stops paging is an error.
const maxPages = 100

// Tools reads the server's tool list (all pages), starting a session if needed; a session
// the server forgot is started again once. Changed reports false after it, until the server
// notifies a change.
func (c *Client) Tools(ctx context.Context) ([]Tool, error) {
	for attempt := 0; ; attempt++ {
		s, err := c.session(ctx)
		if err != nil {
			return nil, err
		}
		c.mu.Lock()
		c.changed = false // a change notified while the list is read marks it again
		c.mu.Unlock()
		tools, err := c.list(ctx, s)
		if errors.Is(err, ErrSessionExpired) && attempt == 0 {
			continue // tools/list has no effect: asking again is safe
		}
		if err != nil {
			c.markChanged()
		}
		return tools, err
	}
}

func (c *Client) list(ctx context.Context, s session) ([]Tool, error) {
	var out []Tool
	cursor := ""
	for range maxPages {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		id := c.ids.Add(1)
		r, err := c.tr.post(ctx, outgoing{body: request(id, "tools/list", params), id: id}, s)
		if err != nil {
			return nil, err
		}
		raw, err := c.result(r, id, s)
		if err != nil {
			return nil, fmt.Errorf("mcp tools/list: %w", err)
		}
		var page struct {
			Tools      []json.RawMessage `json:"tools"`
			NextCursor string            `json:"nextCursor"`
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			return nil, fmt.Errorf("mcp tools/list: %w", err)
		}
		for _, r := range page.Tools {
			t := Tool{Raw: r}
			if err := json.Unmarshal(r, &t); err != nil {
				return nil, fmt.Errorf("mcp tools/list: %w", err)
			}
			out = append(out, t)
		}
		if page.NextCursor == "" {
			return out, nil
		}
		cursor = page.NextCursor
	}
	return nil, errors.New("mcp tools/list: too many pages")
}
