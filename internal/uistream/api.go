package uistream

import (
	"net/http"

	"github.com/sluice-gw/sluice/internal/dialect"
	"github.com/sluice-gw/sluice/internal/dialect/oai"
)

// API is the frontend runs' wire (DESIGN §8): POST /v1/ui/chat starts a run over the AI SDK
// UI message stream, GET /v1/ui/chat/{chatId}/stream resumes it, POST
// /v1/ui/chat/{chatId}/stop stops it. A run's Decoded.Native is its *Start.
var API = dialect.API{
	Name: "ui",
	Routes: []dialect.Route{
		{Method: http.MethodPost, Path: "/v1/ui/chat", Op: dialect.Run},
		{Method: http.MethodGet, Path: "/v1/ui/chat/:chatId/stream", Op: dialect.Resume},
		{Method: http.MethodPost, Path: "/v1/ui/chat/:chatId/stop", Op: dialect.Stop},
	},
	Credential: dialect.Bearer | dialect.XAPIKey,
	Decode: func(body []byte, in dialect.Input) (*dialect.Decoded, error) {
		v, err := ParseVersion(in.Header(Header))
		if err != nil {
			return nil, oai.Invalid("x-sluice-ui-protocol", "Invalid x-sluice-ui-protocol header: want v5, v6 or v7.")
		}
		r, err := Decode(body)
		if err != nil {
			return nil, err
		}
		return &dialect.Decoded{Model: r.Model, Req: &r.Req, Native: &Start{Request: r, Version: v}}, nil
	},
	Error: oai.Error,
}

// Start is a decoded request that starts a run: the frontend's request and the schema its
// client parses.
type Start struct {
	*Request
	Version Version
}

// ChatID is the chat id of a run's route, checked (ValidChatID).
func ChatID(in dialect.Input) (string, error) {
	chat := in.Param("chatId")
	if !ValidChatID(chat) {
		return "", oai.Invalid("chatId", "Invalid chat id: 1 to 128 letters, digits, '_', '-', '.' or ':'.")
	}
	return chat, nil
}

// Stopping is the body of POST /v1/ui/chat/{id}/stop that stopped run, the active run of
// chat: 202, it ends with abort.
func Stopping(run, chat string) []byte {
	b := append([]byte(`{"object":"ui.run","id":`), oai.AppendString(nil, run)...)
	b = append(b, `,"chat_id":`...)
	b = oai.AppendString(b, chat)
	return append(b, `,"status":"stopping"}`...)
}
