package config

import "time"

// Realtime is the rules of the Realtime sessions (GET /v1/realtime over a WebSocket;
// docs/realtime.md, issue 48).
type Realtime struct {
	// MaxMessage bounds one client event (default 16MiB: OpenAI takes up to 15 MiB of audio
	// in an input_audio_buffer.append, base64 in a JSON event); a larger one closes the
	// session with 1009 (message too big).
	MaxMessage Bytes `yaml:"max_message"`
	// PingInterval is how often the client is pinged (default 30s); one that does not answer
	// within the same time is gone.
	PingInterval Duration `yaml:"ping_interval"`
	// DrainTimeout is how long a shutdown lets a session finish the response under way
	// (default 30s, the shutdown's grace) before it closes it with 1001 (going away); a
	// session between responses is closed at once.
	DrainTimeout Duration `yaml:"drain_timeout"`
}

// Bounds of Realtime: past them a value is a mistake (a unit left out), not a choice.
const (
	maxRealtimeMessage = 1 << 30 // 1 GiB
	minRealtimePing    = time.Second
	maxRealtimeWait    = time.Hour // the ping interval's and the drain's
)

func (r *Realtime) setDefaults() {
	*r = Realtime{MaxMessage: 16 << 20, PingInterval: seconds(30), DrainTimeout: seconds(30)}
}

func (v *validator) realtime(r Realtime) {
	if r.MaxMessage <= 0 || r.MaxMessage > maxRealtimeMessage {
		v.errorf("realtime.max_message", "want a size from 1B to 1GiB, got %d bytes", int64(r.MaxMessage))
	}
	if p := r.PingInterval.Std(); p < minRealtimePing || p > maxRealtimeWait {
		v.errorf("realtime.ping_interval", "want a duration from 1s to 1h, got %s", p)
	}
	if d := r.DrainTimeout.Std(); d <= 0 || d > maxRealtimeWait {
		v.errorf("realtime.drain_timeout", "want a duration above 0 and at most 1h, got %s", d)
	}
}
