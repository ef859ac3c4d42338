package telemetry

import (
	"context"
	"fmt"
	"runtime/debug"
	"strconv"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// MetricBuildInfo is 1, labelled with the running binary's Build (Prometheus:
// sluice_build_info{version,commit,modified,go}), so a dashboard can tell which build each
// replica runs.
const MetricBuildInfo = "sluice.build.info"

// Unknown stands for what a binary built without VCS information (go run, go test,
// -buildvcs=false) cannot tell.
const Unknown = "unknown"

// Build is where the running binary came from, as the Go toolchain stamped it
// (debug.ReadBuildInfo): `make release` builds with -buildvcs=true and takes the commit's
// time as the build's, so a binary names its source and two builds of one commit are the same.
type Build struct {
	// Version is the main module's: a tag, or a pseudo-version from the commit
	// (v0.0.0-20261206042600-abcdef123456, "+dirty" when modified); Unknown without one.
	Version string `json:"version"`
	// Commit is vcs.revision, the full commit hash; Unknown without VCS information.
	Commit string `json:"commit"`
	// Modified is vcs.modified: the tree had changes the commit does not hold.
	Modified bool `json:"modified"`
	// Time is vcs.time, the commit's time (RFC 3339, UTC): the release's build date.
	Time string `json:"time"`
	// Go is the toolchain that built the binary (go1.26.8).
	Go string `json:"go"`
}

// ReadBuild is the running binary's Build, read once.
var ReadBuild = sync.OnceValue(func() Build {
	bi, _ := debug.ReadBuildInfo()
	return BuildOf(bi)
})

// BuildOf reads bi (nil: nothing known).
func BuildOf(bi *debug.BuildInfo) Build {
	b := Build{Version: Unknown, Commit: Unknown, Time: Unknown, Go: Unknown}
	if bi == nil {
		return b
	}
	if bi.GoVersion != "" {
		b.Go = bi.GoVersion
	}
	// "(devel)" is what the toolchain says of a main module it has no version for.
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		b.Version = v
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Commit = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// String is the line of `sluice version`.
func (b Build) String() string {
	return fmt.Sprintf("sluice %s\ncommit:   %s\nmodified: %t\nbuilt:    %s\ngo:       %s\n",
		b.Version, b.Commit, b.Modified, b.Time, b.Go)
}

// recordBuild registers MetricBuildInfo on m: an observable gauge, always 1, whose labels
// are b's (bounded: one set per process).
func recordBuild(m metric.Meter, b Build) error {
	attrs := metric.WithAttributes(attribute.String("version", b.Version), attribute.String("commit", b.Commit),
		attribute.String("modified", strconv.FormatBool(b.Modified)), attribute.String("go", b.Go))
	_, err := m.Int64ObservableGauge(MetricBuildInfo,
		metric.WithDescription("1, labelled with the running binary's version, commit, whether its tree was modified and its Go version."),
		metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
			o.Observe(1, attrs)
			return nil
		}))
	return err
}
