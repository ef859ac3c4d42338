package telemetry

import (
	"context"
	"net/http/httptest"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

func TestBuildOf(t *testing.T) {
	vcs := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i+1 < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	tests := []struct {
		name string
		bi   *debug.BuildInfo
		want Build
	}{
		{"no build information", nil, Build{Version: Unknown, Commit: Unknown, Time: Unknown, Go: Unknown}},
		{"built without VCS (go run, -buildvcs=false)",
			&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/sluice-gw/sluice", Version: "(devel)"},
				Settings: vcs("GOOS", "linux", "CGO_ENABLED", "0")},
			Build{Version: Unknown, Commit: Unknown, Time: Unknown, Go: "go1.26.8"}},
		{"a release from a clean tree",
			&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261206042600-db55e89a1b2c"},
				Settings: vcs("vcs", "git", "vcs.revision", "db55e89a1b2c3d4e", "vcs.time", "2026-12-06T04:26:00Z", "vcs.modified", "false")},
			Build{Version: "v0.0.0-20261206042600-db55e89a1b2c", Commit: "db55e89a1b2c3d4e", Time: "2026-12-06T04:26:00Z", Go: "go1.26.8"}},
		{"a dirty tree",
			&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.0+dirty"},
				Settings: vcs("vcs.revision", "abc", "vcs.time", "2026-12-06T04:26:00Z", "vcs.modified", "true")},
			Build{Version: "v1.2.0+dirty", Commit: "abc", Modified: true, Time: "2026-12-06T04:26:00Z", Go: "go1.26.8"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := BuildOf(tt.bi); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestBuildString(t *testing.T) {
	got := Build{Version: "v1.2.0", Commit: "db55e89", Time: "2026-12-06T04:26:00Z", Go: "go1.26.8"}.String()
	for _, want := range []string{"sluice v1.2.0\n", "commit:   db55e89\n", "modified: false\n", "built:    2026-12-06T04:26:00Z\n", "go:       go1.26.8\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("got %q, want it to hold %q", got, want)
		}
	}
}

// /metrics has sluice_build_info = 1 with the running binary's labels (a test binary has no
// VCS information: "unknown", its Go version).
func TestBuildInfoMetric(t *testing.T) {
	s, err := NewSDK(context.Background(), Config{Prometheus: true, Getenv: env()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(context.Background())
	rec := httptest.NewRecorder()
	s.Metrics.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	f := fams["sluice_build_info"]
	if f == nil || len(f.Metric) != 1 || f.Metric[0].GetGauge().GetValue() != 1 {
		t.Fatalf("got %v, want one sluice_build_info gauge at 1", f)
	}
	b := ReadBuild()
	want := map[string]string{"version": b.Version, "commit": b.Commit, "modified": "false", "go": b.Go}
	got := map[string]string{}
	for _, l := range f.Metric[0].Label {
		got[l.GetName()] = l.GetValue()
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("label %s: got %q, want %q (labels %v)", k, got[k], v, got)
		}
	}
	if !strings.HasPrefix(got["go"], "go1.") {
		t.Errorf("got go=%q, want the toolchain's version", got["go"])
	}
}
