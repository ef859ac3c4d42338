package bedrock

import (
	"encoding/base64"
	"encoding/json"
	"path"
	"strings"
	"unicode"

	"github.com/sluice-gw/sluice/internal/llm"
	"github.com/sluice-gw/sluice/internal/provider/translate"
	"github.com/sluice-gw/sluice/internal/schema/bedrock"
)

// Thinking budgets per reasoning_effort, as for Anthropic's own API: Claude on Bedrock takes
// the same thinking object, through additionalModelRequestFields.
const (
	minBudget    = 1024
	answerTokens = 8192 // room for the answer after the thinking, when the client set no limit
	emptySchema  = `{"type":"object","properties":{}}`
	cacheDefault = "default"
)

var budgets = map[string]int{"low": 1024, "medium": 4096, "high": 16384}

// encodeRequest writes the ConverseStream body of req, and counts the client's cache
// breakpoints it left out (points). cache places cache points after the system prompt and
// after the tools (Config.CachePoints) when the client marked nothing. What cannot be
// translated without changing the answer's meaning is an *llm.Error with status 400 (the
// package comment).
func encodeRequest(req *llm.Request, cache bool) ([]byte, int, error) {
	// What only a Gemini target can serve (a client's cachedContent: the prompt's cached
	// part is in the client's Gemini project) is refused, so the chain moves on. What only
	// Anthropic carries is translated as far as Converse goes, as before: Claude on Bedrock
	// reads most of it.
	if n := req.Native; n != nil && n.Wire != "anthropic" {
		if e := req.NativeOnly("bedrock"); e != nil {
			return nil, 0, e
		}
	}
	if req.N > 1 {
		return nil, 0, unsupported("n", "n=%d: Bedrock serves one choice per request", req.N)
	}
	if req.Logprobs {
		return nil, 0, unsupported("logprobs", "logprobs are not available from Bedrock Converse")
	}
	if translate.FormatType(req.ResponseFormat) == "json_schema" {
		return nil, 0, unsupported("response_format", "response_format json_schema is not supported for Bedrock targets")
	}
	w := bedrock.Request{}
	pts := newPoints(req)
	cache = cache && pts == nil // the client's own marks, when it sent any, say where
	var err error
	if w.System, w.Messages, err = translateMessages(req.Messages, pts); err != nil {
		return nil, 0, err
	}
	if cache && len(w.System) > 0 {
		w.System = append(w.System, bedrock.SystemBlock{CachePoint: &bedrock.CachePoint{Type: cacheDefault}})
	}
	var effort string
	var topK *int
	for _, f := range req.Extra {
		switch f.Name {
		case "reasoning_effort":
			json.Unmarshal(f.Value, &effort)
		case "top_k":
			var k int
			if json.Unmarshal(f.Value, &k) == nil && k > 0 {
				topK = &k
			}
		}
	}
	forced := false
	if len(req.Tools) > 0 {
		if w.ToolConfig, forced, err = toolConfig(req, hasToolBlocks(w.Messages), pts); err != nil {
			return nil, 0, err
		}
		if cache && w.ToolConfig != nil {
			w.ToolConfig.Tools = append(w.ToolConfig.Tools, bedrock.Tool{CachePoint: &bedrock.CachePoint{Type: cacheDefault}})
		}
	}
	ic := &bedrock.InferenceConfig{MaxTokens: req.MaxTokens, TopP: req.TopP}
	if ic.MaxTokens == nil {
		ic.MaxTokens = req.MaxCompletionTokens
	}
	if req.Temperature != nil {
		t := min(*req.Temperature, 1) // Converse's range is 0..1, OpenAI's 0..2
		ic.Temperature = &t
	}
	for _, s := range req.Stop {
		if strings.TrimSpace(s) != "" { // Claude refuses whitespace-only sequences
			ic.StopSequences = append(ic.StopSequences, s)
		}
	}
	extra := map[string]any{}
	if claude(req.Model) {
		if topK != nil {
			extra["top_k"] = *topK
		}
		b := budgets[effort]
		if tb := req.ThinkingBudget; tb != nil && *tb >= 0 {
			// The client's own budget (Anthropic's thinking.budget_tokens, Gemini's
			// thinkingBudget) over the effort's, as the Anthropic adapter takes it; 0 is
			// off, -1 (the model decides) keeps the effort's (issue 46).
			if b = *tb; b > 0 {
				b = max(b, minBudget)
			}
		}
		if b > 0 && !forced {
			thinking(ic, extra, b)
		}
	}
	if len(extra) > 0 {
		w.AdditionalModelRequestFields, _ = json.Marshal(extra)
	}
	if ic.MaxTokens != nil || ic.Temperature != nil || ic.TopP != nil || len(ic.StopSequences) > 0 {
		w.InferenceConfig = ic
	}
	b, err := json.Marshal(&w)
	if err != nil {
		return nil, 0, &llm.Error{Kind: llm.Internal, Message: "bedrock: cannot encode the request", Err: err}
	}
	return b, pts.left(), nil
}

// thinking turns on Claude's extended thinking with budget b, keeping the client's limit.
func thinking(ic *bedrock.InferenceConfig, extra map[string]any, b int) {
	if ic.MaxTokens != nil {
		// OpenAI's limit counts reasoning tokens too, as maxTokens does: the budget stays below.
		if b = min(b, *ic.MaxTokens-1); b < minBudget {
			return
		}
	} else {
		n := b + answerTokens
		ic.MaxTokens = &n
	}
	extra["thinking"] = map[string]any{"type": "enabled", "budget_tokens": b}
	delete(extra, "top_k")
	// With thinking on, Claude refuses temperature and top_k, and top_p below 0.95.
	ic.Temperature = nil
	if ic.TopP != nil && *ic.TopP < 0.95 {
		ic.TopP = nil
	}
}

// claude reports whether a model id (a foundation model, an inference profile, or an ARN of
// one) names an Anthropic model, which takes Anthropic's fields in additionalModelRequestFields.
func claude(model string) bool { return strings.Contains(model, "anthropic.claude") }

// toolConfig translates the tools and tool_choice; forced reports a tool the model must call.
// Converse has no "none": with tool_choice none the tools are left out, unless the history
// holds tool blocks, which Bedrock refuses without a toolConfig (the model may then call).
// A marked tool is followed by a cachePoint.
func toolConfig(req *llm.Request, history bool, pts *points) (*bedrock.ToolConfig, bool, error) {
	mode, name := translate.ToolChoice(req.ToolChoice)
	if mode == "none" && !history {
		return nil, false, nil
	}
	tc := &bedrock.ToolConfig{}
	for _, t := range req.Tools {
		tc.Tools = append(tc.Tools, bedrock.Tool{ToolSpec: &bedrock.ToolSpec{Name: t.Name, Description: t.Description,
			InputSchema: bedrock.InputSchema{JSON: translate.CompactOr(t.Parameters, emptySchema)}}})
		if cp := pts.point(t.Cache); cp != nil {
			tc.Tools = append(tc.Tools, bedrock.Tool{CachePoint: cp})
		}
	}
	switch mode {
	case "", "auto":
		return tc, false, nil
	case "required":
		tc.ToolChoice = &bedrock.ToolChoice{Any: &struct{}{}}
		return tc, true, nil
	case "none":
		return tc, false, nil
	case "function":
		tc.ToolChoice = &bedrock.ToolChoice{Tool: &bedrock.ToolChoiceOf{Name: name}}
		return tc, true, nil
	default:
		return nil, false, unsupported("tool_choice", "tool_choice %s has no Bedrock equivalent", mode)
	}
}

func hasToolBlocks(msgs []bedrock.Message) bool {
	for _, m := range msgs {
		for _, c := range m.Content {
			if c.ToolUse != nil || c.ToolResult != nil {
				return true
			}
		}
	}
	return false
}

// translateMessages turns Chat messages into the system prompt and the alternating turns
// Converse requires: system and developer messages become system blocks, tool results
// toolResult blocks of a user turn, and adjacent messages of one role one turn. A block the
// client marked (llm.Cache) is followed by a cachePoint, pts permitting.
func translateMessages(msgs []llm.Message, pts *points) ([]bedrock.SystemBlock, []bedrock.Message, error) {
	var system []bedrock.SystemBlock
	var turns []bedrock.Message
	add := func(role string, blocks []bedrock.ContentBlock) {
		if len(blocks) == 0 {
			return // Converse refuses a message without content
		}
		if n := len(turns); n > 0 && turns[n-1].Role == role {
			turns[n-1].Content = append(turns[n-1].Content, blocks...)
			return
		}
		turns = append(turns, bedrock.Message{Role: role, Content: blocks})
	}
	for i := range msgs {
		m := &msgs[i]
		switch m.Role {
		case llm.RoleSystem, llm.RoleDeveloper:
			for _, p := range m.Parts {
				if p.Type == llm.PartText && p.Text != "" {
					system = append(system, bedrock.SystemBlock{Text: p.Text})
					if cp := pts.point(p.Cache); cp != nil {
						system = append(system, bedrock.SystemBlock{CachePoint: cp})
					}
				}
			}
		case llm.RoleTool:
			// The result is one block: a mark on it or on any of its parts is after it.
			marks := []*llm.Cache{m.Cache}
			for j := range m.Parts {
				marks = append(marks, m.Parts[j].Cache)
			}
			add("user", withPoint([]bedrock.ContentBlock{{ToolResult: &bedrock.ToolResult{ToolUseID: toolID(m.ToolCallID),
				Content: []bedrock.ToolResultContent{{Text: ptr(translate.Text(m.Parts))}}}}}, pts.point(marks...)))
		case llm.RoleAssistant:
			blocks, err := assistantBlocks(i, m, pts)
			if err != nil {
				return nil, nil, err
			}
			add("assistant", blocks)
		default:
			blocks, err := userBlocks(i, m, pts)
			if err != nil {
				return nil, nil, err
			}
			add("user", blocks)
		}
	}
	return system, turns, nil
}

// withPoint appends cp, if any, to blocks.
func withPoint(blocks []bedrock.ContentBlock, cp *bedrock.CachePoint) []bedrock.ContentBlock {
	if cp == nil {
		return blocks
	}
	return append(blocks, bedrock.ContentBlock{CachePoint: cp})
}

func assistantBlocks(i int, m *llm.Message, pts *points) ([]bedrock.ContentBlock, error) {
	var out []bedrock.ContentBlock
	for _, r := range m.Reasoning {
		if r.Encrypted == "" || !r.ReadBy("bedrock") {
			continue // without a signature, or another provider's: it cannot be handed back
		}
		// Redacted is said by the client's wire, and by the stream (llm.Event.Redacted) for
		// the reasoning of an earlier round.
		if r.Redacted {
			if data, err := base64.StdEncoding.DecodeString(r.Encrypted); err == nil {
				out = append(out, bedrock.ContentBlock{ReasoningContent: &bedrock.ReasoningContent{RedactedContent: data}})
			}
			continue
		}
		out = append(out, bedrock.ContentBlock{ReasoningContent: &bedrock.ReasoningContent{
			ReasoningText: &bedrock.ReasoningText{Text: r.Text, Signature: r.Encrypted}}})
	}
	for _, p := range m.Parts {
		if p.Type == llm.PartText && p.Text != "" {
			out = withPoint(append(out, bedrock.ContentBlock{Text: ptr(p.Text)}), pts.point(p.Cache))
		}
	}
	if m.Refusal != "" {
		out = append(out, bedrock.ContentBlock{Text: ptr(m.Refusal)})
	}
	for _, tc := range m.ToolCalls {
		in, ok := translate.Object(tc.Arguments)
		if !ok {
			return nil, invalid("messages", "messages[%d]: the arguments of tool call %q are not a JSON object", i, tc.ID)
		}
		out = withPoint(append(out, bedrock.ContentBlock{ToolUse: &bedrock.ToolUse{ToolUseID: toolID(tc.ID), Name: tc.Name, Input: in}}),
			pts.point(tc.Cache))
	}
	return out, nil
}

func userBlocks(i int, m *llm.Message, pts *points) ([]bedrock.ContentBlock, error) {
	var out []bedrock.ContentBlock
	for _, p := range m.Parts {
		n := len(out)
		switch p.Type {
		case llm.PartImage:
			img, err := image(i, p.URL)
			if err != nil {
				return nil, err
			}
			out = append(out, bedrock.ContentBlock{Image: img})
		case llm.PartFile, llm.PartAudio:
			b, err := media(i, &p)
			if err != nil {
				return nil, err
			}
			out = append(out, b)
		default:
			if p.Text != "" {
				out = append(out, bedrock.ContentBlock{Text: ptr(p.Text)})
			}
		}
		if len(out) > n {
			out = withPoint(out, pts.point(p.Cache))
		}
	}
	return out, nil
}

// image is an image part as Converse takes it: the bytes of a base64 data: URL (RFC 2397),
// or an s3:// object. Converse fetches no http(s) URL.
func image(i int, u string) (*bedrock.Image, error) {
	if strings.HasPrefix(u, "s3://") {
		return &bedrock.Image{Format: format(u[strings.LastIndexByte(u, '.')+1:]), Source: bedrock.ImageSource{S3Location: &bedrock.S3Location{URI: u}}}, nil
	}
	mt, b, ok, err := translate.DataURL(u)
	if !ok {
		return nil, unsupported("messages", "messages[%d]: Bedrock takes images as data: URLs (or s3://), not http(s) URLs", i)
	}
	if err != nil {
		return nil, invalid("messages", "messages[%d]: %v", i, err)
	}
	f := format(strings.TrimPrefix(mt, "image/"))
	if f == "" {
		return nil, invalid("messages", "messages[%d]: Bedrock takes png, jpeg, gif or webp images, not %q", i, mt)
	}
	return &bedrock.Image{Format: f, Source: bedrock.ImageSource{Bytes: b}}, nil
}

// docFormats are Converse's document formats by media type.
var docFormats = map[string]string{
	"application/pdf": "pdf", "text/csv": "csv", "text/html": "html", "text/plain": "txt", "text/markdown": "md",
	"application/msword": "doc", "application/vnd.ms-excel": "xls",
	"application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
	"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet":       "xlsx",
}

// audioFormats are Converse's audio formats (llm.AudioFormat names them alike).
var audioFormats = map[string]bool{"mp3": true, "wav": true, "flac": true, "ogg": true, "aac": true, "x-aac": true,
	"opus": true, "webm": true, "mp4": true, "m4a": true, "mpeg": true, "mpga": true, "pcm": true, "mkv": true, "mka": true}

// media is a file part as a document block, an audio part as an audio block: bytes, or an
// s3:// file. Converse fetches no http(s) URL and reads no provider's stored file.
func media(i int, p *llm.Part) (bedrock.ContentBlock, error) {
	var src bedrock.ImageSource
	switch {
	case p.FileID != "":
		return bedrock.ContentBlock{}, llm.PartError("bedrock", i, p, "only "+p.FileOf+" targets can read it")
	case p.Data != "":
		b, err := base64.StdEncoding.DecodeString(p.Data)
		if err != nil {
			return bedrock.ContentBlock{}, invalid("messages", "messages[%d]: a %s part's data is not valid base64", i, p.Type)
		}
		src.Bytes = b
	case strings.HasPrefix(p.URL, "s3://"):
		src.S3Location = &bedrock.S3Location{URI: p.URL}
	default:
		return bedrock.ContentBlock{}, llm.PartError("bedrock", i, p, "Converse takes a file's bytes or an s3:// URI, not an http(s) URL")
	}
	if p.Type == llm.PartAudio {
		f := llm.AudioFormat(p.MediaType)
		if !audioFormats[f] {
			return bedrock.ContentBlock{}, llm.PartError("bedrock", i, p, "Converse takes mp3, wav, flac, ogg, aac, opus, webm, mp4 or m4a audio")
		}
		return bedrock.ContentBlock{Audio: &bedrock.Audio{Format: f, Source: src}}, nil
	}
	f, ok := docFormats[p.MediaType]
	if !ok {
		return bedrock.ContentBlock{}, llm.PartError("bedrock", i, p, "Converse reads pdf, csv, doc, docx, xls, xlsx, html, txt and md documents")
	}
	name := p.Name()
	if p.Filename == "" && p.URL != "" {
		name = path.Base(p.URL)
	}
	return bedrock.ContentBlock{Document: &bedrock.Document{Format: f, Name: docName(name), Source: src}}, nil
}

// docName is a file name as Converse takes a document's: its extension left out, then
// only alphanumerics, hyphens, parentheses, square brackets and single spaces.
func docName(name string) string {
	if ext := path.Ext(name); ext != "" && ext != name {
		name = strings.TrimSuffix(name, ext)
	}
	name = strings.Map(func(r rune) rune {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("-()[]", r):
			return r
		case unicode.IsSpace(r):
			return ' '
		}
		return '-'
	}, name)
	if name = strings.Join(strings.Fields(name), " "); name == "" {
		return "document"
	}
	return name
}

func format(s string) string {
	switch s = strings.ToLower(s); s {
	case "png", "gif", "webp", "jpeg":
		return s
	case "jpg":
		return "jpeg"
	}
	return ""
}

// toolID is a tool call id as Converse takes it, [a-zA-Z0-9_-]+: another provider's id may
// hold other characters, which become "_" in the call and its result alike.
func toolID(id string) string {
	return strings.Map(func(r rune) rune {
		if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_' || r == '-' {
			return r
		}
		return '_'
	}, id)
}

func ptr[T any](v T) *T { return &v }

func invalid(param, format string, args ...any) *llm.Error {
	return translate.Invalid("bedrock", param, format, args...)
}

func unsupported(param, format string, args ...any) *llm.Error {
	return translate.Unsupported("bedrock", param, format, args...)
}
