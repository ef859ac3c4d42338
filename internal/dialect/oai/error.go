package oai

import (
	"strconv"

	"github.com/sluice-gw/sluice/internal/jsonstr"
	"github.com/sluice-gw/sluice/internal/llm"
)

// ErrorBody is the OpenAI error body: {"error":{"message","type","param","code"}}.
func ErrorBody(err error) []byte {
	e := llm.Public(err)
	b := append([]byte(nil), `{"error":{"message":`...)
	b = AppendString(b, e.Message)
	b = append(b, `,"type":`...)
	b = AppendString(b, e.Type)
	b = append(b, `,"param":`...)
	b = appendNullable(b, e.Param)
	b = append(b, `,"code":`...)
	b = appendNullable(b, e.Code)
	return append(b, `}}`...)
}

func appendNullable(b []byte, s string) []byte {
	if s == "" {
		return append(b, "null"...)
	}
	return AppendString(b, s)
}

// AppendString appends s as a JSON string (package jsonstr decides the escaping).
func AppendString(b []byte, s string) []byte { return jsonstr.Append(b, s) }

// AppendInt appends n as a JSON number.
func AppendInt(b []byte, n int) []byte { return strconv.AppendInt(b, int64(n), 10) }

// Error is the status and body of err in OpenAI's error format (dialect.API.Error): every
// wire but Anthropic's answers so.
func Error(err error, _ []llm.Attempt) (int, []byte) { return llm.HTTPStatus(err), ErrorBody(err) }
