// Package audio is the OpenAI audio client wires (issue 48): POST /v1/audio/transcriptions,
// a multipart upload whose file is spooled as it arrives (package upload), and POST
// /v1/audio/speech, a JSON body whose audio answer streams back as it comes. Both are plain
// calls of their own alias sections (transcriptions:, speech:) through the fallback chain,
// the answer passed through with its media type (dialect.Media). A transcription is billed
// per second of audio (llm.Usage.Units), from its answer's usage or duration, else from the
// file when it is a WAV; a speech per character of its input, or by the tokens a model
// reports.
package audio

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/sluice-gw/sluice/internal/dialect"
	"github.com/sluice-gw/sluice/internal/dialect/embeddings"
	"github.com/sluice-gw/sluice/internal/dialect/oai"
	"github.com/sluice-gw/sluice/internal/dialect/upload"
	"github.com/sluice-gw/sluice/internal/llm"
)

// Transcriptions is the transcription wire, served by a transcriptions alias or a direct
// target of a provider that serves transcriptions.
var Transcriptions = embeddings.Media("transcriptions", "/v1/audio/transcriptions", "audio/transcriptions", decodeTranscription, true)

// Speech is the text-to-speech wire, served by a speech alias or a direct target of a
// provider that serves speech.
var Speech = embeddings.Media("speech", "/v1/audio/speech", "audio/speech", decodeSpeech, false)

// Formats are the response_format values of a transcription.
var Formats = []string{"json", "text", "srt", "verbose_json", "vtt"}

var transcription = upload.Form{
	Files:    []string{"file"},
	Required: []string{"file"},
	Field: func(name, v string) error {
		switch name {
		case "response_format":
			if !slices.Contains(Formats, v) {
				return oai.Invalid(name, "Invalid value for 'response_format'. Supported values are: 'json', 'text', 'srt', 'verbose_json' and 'vtt'.")
			}
		case "temperature":
			if f, err := strconv.ParseFloat(v, 64); err != nil || f < 0 || f > 1 {
				return oai.Invalid(name, "Invalid 'temperature': expected a number between 0 and 1.")
			}
		case "stream":
			if v != "false" {
				return oai.Invalid(name, "Streamed transcription is not served by the gateway: leave out 'stream'.")
			}
		}
		return nil
	},
}

func decodeTranscription(_ []byte, in dialect.Input) (*dialect.Decoded, error) {
	model, req, err := upload.Read(in, transcription)
	if err != nil {
		return nil, err
	}
	file := req.Files[0]
	return &dialect.Decoded{Model: model, Req: req, Bill: func(answer []byte) (llm.Usage, bool) {
		if u, ok := TranscriptionUsage(answer); ok {
			return u, true
		}
		if s, ok := WAVSeconds(file.Open()); ok { // a text, srt or vtt answer says nothing of it
			return llm.Usage{Units: seconds(s)}, true
		}
		return llm.Usage{}, false
	}}, nil
}

// TranscriptionUsage reads what a transcription answer bills: its usage, in seconds
// (whisper-1: {"type":"duration","seconds":...}, rounded up) or in tokens (the gpt-4o
// transcribe models), else a verbose_json's duration; false: a text answer, or none.
func TranscriptionUsage(answer []byte) (llm.Usage, bool) {
	var a struct {
		Duration *float64 `json:"duration"`
		Usage    *struct {
			Type    string  `json:"type"`
			Seconds float64 `json:"seconds"`
			In      int     `json:"input_tokens"`
			Out     int     `json:"output_tokens"`
			Total   int     `json:"total_tokens"`
		} `json:"usage"`
	}
	if answer == nil || json.Unmarshal(answer, &a) != nil {
		return llm.Usage{}, false
	}
	switch u := a.Usage; {
	case u != nil && u.Type == "tokens":
		return llm.Usage{PromptTokens: u.In, CompletionTokens: u.Out, TotalTokens: u.Total}, true
	case u != nil && u.Type == "duration":
		return llm.Usage{Units: seconds(u.Seconds)}, true
	case a.Duration != nil:
		return llm.Usage{Units: seconds(*a.Duration)}, true
	}
	return llm.Usage{}, false
}

// seconds is s in whole seconds, rounded up: what a per-second price bills.
func seconds(s float64) int {
	if s <= 0 || math.IsNaN(s) || s > 1e7 {
		return 0
	}
	return int(math.Ceil(s))
}

// WAVSeconds is the duration of a RIFF/WAVE file read from r: its data chunk's size over
// the fmt chunk's byte rate; false when r holds no such file.
func WAVSeconds(r io.Reader) (float64, bool) {
	var head [12]byte
	if _, err := io.ReadFull(r, head[:]); err != nil || string(head[:4]) != "RIFF" || string(head[8:]) != "WAVE" {
		return 0, false
	}
	var rate uint32
	for range 64 { // chunks before data: fmt, LIST, fact, ...
		var ch [8]byte
		if _, err := io.ReadFull(r, ch[:]); err != nil {
			return 0, false
		}
		size := binary.LittleEndian.Uint32(ch[4:])
		switch string(ch[:4]) {
		case "fmt ":
			var f [16]byte
			if size < 16 {
				return 0, false
			}
			if _, err := io.ReadFull(r, f[:]); err != nil {
				return 0, false
			}
			rate = binary.LittleEndian.Uint32(f[8:])
			size -= 16
		case "data":
			if rate == 0 {
				return 0, false
			}
			return float64(size) / float64(rate), true
		}
		if _, err := io.CopyN(io.Discard, r, int64(size)+int64(size&1)); err != nil {
			return 0, false
		}
	}
	return 0, false
}

// decodeSpeech checks a speech body: input and voice required (a voice is a name, any: a
// compatible server has its own, or a custom voice object), and the members OpenAI types.
// Its bill is the input's characters.
func decodeSpeech(body []byte, _ dialect.Input) (*dialect.Decoded, error) {
	chars := 0
	model, req, err := embeddings.DecodePlain(body, "", func(key string, raw json.RawMessage) error {
		switch key {
		case "input":
			var s string
			if json.Unmarshal(raw, &s) != nil {
				return oai.TypeErr(key, "a string")
			}
			if s == "" || utf8.RuneCountInString(s) > 4096 {
				return oai.Invalid(key, "Invalid 'input': expected a string of 1 to 4096 characters.")
			}
			chars = utf8.RuneCountInString(s)
		case "voice":
			if bytes.HasPrefix(raw, []byte(`{`)) { // a custom voice: {"id": "voice_..."}
				return nil
			}
			var s string
			if json.Unmarshal(raw, &s) != nil || s == "" {
				return oai.TypeErr(key, "a voice name or a voice object")
			}
		case "response_format":
			var f string
			if json.Unmarshal(raw, &f) != nil || !slices.Contains(SpeechFormats, f) {
				return oai.Invalid(key, "Invalid value for 'response_format'. Supported values are: 'mp3', 'opus', 'aac', 'flac', 'wav' and 'pcm'.")
			}
		case "speed":
			var f float64
			if json.Unmarshal(raw, &f) != nil || f < 0.25 || f > 4 {
				return oai.Invalid(key, "Invalid 'speed': expected a number between 0.25 and 4.")
			}
		case "stream_format":
			var f string
			if json.Unmarshal(raw, &f) != nil || f != "audio" {
				return oai.Invalid(key, "Invalid 'stream_format': the gateway passes the audio through as it comes; only 'audio' is served.")
			}
		case "instructions":
			return embeddings.String(key, raw)
		}
		return nil
	}, "input", "voice")
	if err != nil {
		return nil, err
	}
	return &dialect.Decoded{Model: model, Req: req, Bill: func([]byte) (llm.Usage, bool) {
		return llm.Usage{Units: chars}, true
	}}, nil
}

// SpeechFormats are the response_format values of a speech.
var SpeechFormats = []string{"mp3", "opus", "aac", "flac", "wav", "pcm"}
