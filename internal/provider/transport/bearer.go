package transport

import "strings"

// MaskBearer masks what follows "Bearer " in s, text an upstream (or a proxy before it)
// wrote quoting the request's Authorization header: for the tokens a call got at run time
// (OAuth, Entra ID), which the gateway's scrubber, built from the configuration, does not
// know.
func MaskBearer(s string) string {
	const p = "Bearer "
	var out strings.Builder
	for {
		i := strings.Index(s, p)
		if i < 0 {
			out.WriteString(s)
			return out.String()
		}
		out.WriteString(s[:i+len(p)] + "[MASKED]")
		s = s[i+len(p):]
		j := strings.IndexAny(s, " \t\r\n\"',")
		if j < 0 {
			return out.String()
		}
		s = s[j:]
	}
}
