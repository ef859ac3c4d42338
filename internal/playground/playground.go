// Package playground is the gateway's web page (GET /): a chat on the AI SDK UI message
// stream with its activity (steps, tool calls, progress, restarts), and the live statistics
// of /admin/stats, in plain JavaScript embedded in the binary, so that `make run` needs no
// npm and the page reaches no network but the gateway's own origin. It decides what the
// browser gets: the files, their types and caching, and the Content-Security-Policy that
// keeps model output from ever running as code (the page renders it as text only). The
// console (internal/console) is the same site: it serves its files through a Site, and
// shares this folder's style.css and dom.js.
package playground

import (
	"embed"
	"net/http"
)

// Prefix is the path of the page's files; the page itself is "/".
const Prefix = "/playground/"

//go:embed static
var static embed.FS

// site is the playground's files, read once.
var site = NewSite(static, "static", Prefix, "/")

// Handler serves the page at "/" and its files under Prefix (GET and HEAD).
func Handler() http.Handler { return site }
