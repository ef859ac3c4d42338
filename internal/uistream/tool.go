package uistream

// Server-side tools (DESIGN §8): calls the gateway runs itself are sent as dynamic tool parts
// with providerExecuted: true, so the AI SDK shows them and never runs them (nor asks the
// application to); their progress is a data part whose id is the call id, which the client
// updates in place; their outcome is tool-output-available or tool-output-error.

// ProgressType is the data part name of tool progress: chunks of type "data-tool-progress".
const ProgressType = "tool-progress"

var serverFields = []field{raw("providerExecuted", jsonTrue), raw("dynamic", jsonTrue)}

// ServerToolCall sends a whole call the gateway runs: as ToolCall, flagged as executed by the
// gateway. Arguments that are not JSON get their error at once (as ToolCall): the gateway
// does not run the call, and sends no output for it.
func (e *Encoder) ServerToolCall(id, name, args string) { e.toolCall(id, name, args, serverFields) }

// ToolOutput sends the result of a call the gateway ran (output is JSON).
func (e *Encoder) ToolOutput(id string, output []byte) {
	e.chunk("tool-output-available", append([]field{str("toolCallId", id), raw("output", output)}, serverFields...)...)
}

// ToolError sends the failure of a call the gateway ran.
func (e *Encoder) ToolError(id, text string) {
	e.chunk("tool-output-error", append([]field{str("toolCallId", id), str("errorText", text)}, serverFields...)...)
}

// Progress sends the progress of the call id (data is a small JSON object): a data part with
// the call's id, which replaces the previous one of that id in the client's message.
func (e *Encoder) Progress(id string, data []byte) { e.Data(ProgressType, id, data, false) }
