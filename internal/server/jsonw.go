package server

import (
	"strconv"

	"github.com/sluice-gw/sluice/internal/jsonstr"
)

// appendString appends s as a JSON string (package jsonstr decides the escaping).
func appendString(b []byte, s string) []byte { return jsonstr.Append(b, s) }

func appendInt(b []byte, n int) []byte { return strconv.AppendInt(b, int64(n), 10) }
