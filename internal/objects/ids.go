package objects

import (
	"encoding/base64"
	"strings"
)

// The prefixes of the ids clients see, as the upstream APIs write theirs, so that an SDK
// that checks an id's shape takes them.
const (
	FilePrefix     = "file-"
	BatchPrefix    = "batch_"
	MsgBatchPrefix = "msgbatch_"
)

// maxID bounds an id the gateway decodes: a host's name and an upstream's id are short.
const maxID = 512

// Encode is the id a client sees for the upstream's id up held by host name: prefix and
// base64url (no padding) of "name\nup". It names the host, never a credential, so any
// replica finds the target from the id alone.
func Encode(prefix, name, up string) string {
	return prefix + base64.RawURLEncoding.EncodeToString([]byte(name+"\n"+up))
}

// Decode is the host's name and the upstream's id that id encodes with prefix; false when
// id is not one the gateway made (a wrong prefix, not base64url, no host, too long).
func Decode(prefix, id string) (name, up string, ok bool) {
	rest, found := strings.CutPrefix(id, prefix)
	if !found || len(id) > maxID {
		return "", "", false
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(rest)
	if err != nil {
		return "", "", false
	}
	name, up, ok = strings.Cut(string(b), "\n")
	if !ok || name == "" || up == "" || strings.ContainsAny(up, "\n/?#") || strings.Contains(up, "..") {
		return "", "", false
	}
	return name, up, true
}
