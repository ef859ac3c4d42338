package config

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Duration is a time.Duration written as "500ms", "5s", "10m" or "24h" in YAML. Every
// duration in the file must be zero or positive.
type Duration time.Duration

func seconds(n int) Duration { return Duration(time.Duration(n) * time.Second) }
func millis(n int) Duration  { return Duration(time.Duration(n) * time.Millisecond) }

// Std returns d as a time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }

func (d Duration) String() string { return time.Duration(d).String() }

// MarshalText writes d the way it is read, so a Config can be dumped.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText reads "5s", or whole days as "30d"; it rejects negative durations like the
// YAML decoder.
func (d *Duration) UnmarshalText(b []byte) error {
	if n, ok := strings.CutSuffix(string(b), "d"); ok {
		days, err := strconv.Atoi(n)
		if err != nil || days > 100_000 {
			return errors.New("invalid number of days")
		}
		if days < 0 {
			return errNegative
		}
		*d = Duration(time.Duration(days) * 24 * time.Hour)
		return nil
	}
	x, err := time.ParseDuration(string(b))
	if err != nil {
		return err
	}
	if x < 0 {
		return errNegative
	}
	*d = Duration(x)
	return nil
}

func (d *Duration) decodeNode(dec *decoder, n *yaml.Node, path string) {
	if n.Kind != yaml.ScalarNode {
		dec.typeError(n, path, "a duration")
		return
	}
	// The value is shown: a duration is never a secret, and "5" (no unit) is the usual slip.
	if err := d.UnmarshalText([]byte(n.Value)); errors.Is(err, errNegative) {
		dec.errorf(n.Line, "%s: negative duration %q", path, n.Value)
	} else if err != nil {
		dec.errorf(n.Line, "%s: invalid duration %q (want a number with a unit: 500ms, 5s, 10m, 24h, 30d)", path, n.Value)
	}
}
