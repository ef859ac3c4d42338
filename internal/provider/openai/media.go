package openai

import (
	"bytes"
	"strings"

	"github.com/sluice-gw/sluice/internal/llm"
)

// checkParts refuses, before anything is sent, a file or audio part that api ("Chat
// Completions" or "the Responses API") cannot carry: another provider's stored file, a file
// by URL to Chat (whose file part takes bytes or a file_id), audio to Responses (which
// takes none) or audio that is neither wav nor mp3. The error is Unsupported, so the chain
// moves on to a target that can take the part.
func checkParts(api string, req *llm.Request) error {
	for i := range req.Messages {
		for j := range req.Messages[i].Parts {
			p := &req.Messages[i].Parts[j]
			var why string
			switch p.Type {
			case llm.PartFile:
				switch {
				case p.FileID != "" && p.FileOf != "openai":
					why = "only " + p.FileOf + " targets can read it"
				case p.FileID == "" && p.Data == "" && api == chatAPI:
					why = chatAPI + " takes a file's bytes or file_id, not its URL"
				case p.FileID == "" && p.Data == "" && !strings.HasPrefix(p.URL, "https://") && !strings.HasPrefix(p.URL, "http://"):
					why = responsesAPI + " fetches http(s) URLs only"
				}
			case llm.PartAudio:
				if api == responsesAPI {
					why = responsesAPI + " takes no audio input"
				} else if f := llm.AudioFormat(p.MediaType); f != "wav" && f != "mp3" {
					why = chatAPI + " takes wav and mp3 audio only"
				}
			}
			if why != "" {
				return llm.PartError("openai", i, p, why)
			}
		}
	}
	return nil
}

const (
	chatAPI      = "Chat Completions"
	responsesAPI = "the Responses API"
)

// writeChatMedia writes a file part as Chat's file part (file_id, or filename and
// file_data as a data: URL) and an audio part as input_audio (checkParts let only wav and
// mp3 through). It reports whether p was one of them.
func writeChatMedia(b *bytes.Buffer, p *llm.Part) bool {
	switch p.Type {
	case llm.PartFile:
		b.WriteString(`{"type":"file","file":{`)
		if p.FileID != "" {
			b.WriteString(`"file_id":`)
			writeString(b, p.FileID)
		} else {
			b.WriteString(`"filename":`)
			writeString(b, p.Name())
			b.WriteString(`,"file_data":`)
			writeString(b, p.DataURL())
		}
		b.WriteString(`}}`)
	case llm.PartAudio:
		b.WriteString(`{"type":"input_audio","input_audio":{"data":`)
		writeString(b, p.Data)
		b.WriteString(`,"format":`)
		writeString(b, llm.AudioFormat(p.MediaType))
		b.WriteString(`}}`)
	default:
		return false
	}
	return true
}

// writeInputFile writes a file part as a Responses input_file: file_id, file_url, or
// filename and file_data as a data: URL.
func writeInputFile(b *bytes.Buffer, p *llm.Part) {
	b.WriteString(`{"type":"input_file",`)
	switch {
	case p.FileID != "":
		b.WriteString(`"file_id":`)
		writeString(b, p.FileID)
	case p.Data == "":
		b.WriteString(`"file_url":`)
		writeString(b, p.URL)
	default:
		b.WriteString(`"filename":`)
		writeString(b, p.Name())
		b.WriteString(`,"file_data":`)
		writeString(b, p.DataURL())
	}
	b.WriteByte('}')
}
