package providertest

import "fmt"

// CacheSites lists where a decoded Anthropic Messages body (an Anthropic or Vertex Claude
// upstream's) has cache_control, in prompt order: tools, system, messages, a tool_result's
// content before the tool_result. Each is "path=ttl", ttl "-" for none: "tools.0=1h",
// "system.1=-", "messages.2.content.0.content.1=5m".
func CacheSites(body map[string]any) []string {
	var out []string
	var walk func(v any, path string)
	walk = func(v any, path string) {
		list, _ := v.([]any)
		for i, b := range list {
			o, _ := b.(map[string]any)
			at := fmt.Sprintf("%s.%d", path, i)
			walk(o["content"], at+".content")
			if c, ok := o["cache_control"].(map[string]any); ok {
				ttl, _ := c["ttl"].(string)
				if ttl == "" {
					ttl = "-"
				}
				out = append(out, at+"="+ttl)
			}
		}
	}
	walk(body["tools"], "tools")
	walk(body["system"], "system")
	msgs, _ := body["messages"].([]any)
	for i, m := range msgs {
		o, _ := m.(map[string]any)
		walk(o["content"], fmt.Sprintf("messages.%d.content", i))
	}
	return out
}
