// Package admin is the codec of the admin API (/admin/*): the key bodies it takes and
// shows, their validation, the key store's errors as answers, and the usage report's query
// and lines, and the audit log every change goes to (audit.go). The edge (internal/server)
// serves the routes.
package admin
