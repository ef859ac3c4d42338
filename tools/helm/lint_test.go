package helm

import (
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	"helm.sh/helm/v3/pkg/strvals"
)

// TestLint runs `helm lint --strict`'s checks (Helm's lint package) on the chart with the
// default values and with each variant's: a warning fails as an error does.
func TestLint(t *testing.T) {
	cases := append([]variant{{name: "defaults"}}, variants...)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			vals, err := chartutil.ReadValues([]byte(tc.values))
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range tc.sets {
				if err := strvals.ParseInto(s, vals); err != nil {
					t.Fatal(err)
				}
			}
			// Deprecated APIs are judged as of the newest Kubernetes that k8s.io/api here knows.
			l := lint.AllWithKubeVersion(chartDir, vals, release.Namespace, &chartutil.KubeVersion{Version: "v1.37.0", Major: "1", Minor: "37"})
			for _, m := range l.Messages {
				if m.Severity > support.InfoSev {
					t.Errorf("lint: %s", m)
				} else {
					t.Logf("lint: %s", m)
				}
			}
		})
	}
}

// TestChartMetadata checks what `helm install` checks before rendering: the cluster's version
// against kubeVersion (1.30 brought the preStop sleep action), and that every dependency
// Chart.yaml declares is vendored in charts/ (Helm refuses a missing one even when its
// condition is false, which is why the Redis subchart is documented rather than declared).
func TestChartMetadata(t *testing.T) {
	chrt, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	var have []string
	for _, d := range chrt.Dependencies() {
		have = append(have, d.Name())
	}
	for _, d := range chrt.Metadata.Dependencies {
		name := d.Name
		if d.Alias != "" {
			name = d.Alias
		}
		if !slices.Contains(have, d.Name) {
			t.Errorf("dependency %s (%s) is declared but not in charts/: helm install would fail", name, d.Repository)
		}
	}
	for v, want := range map[string]bool{"v1.29.4": false, "v1.30.0": true, "v1.37.1": true, "v1.33.2-gke.1": true} {
		if got := chartutil.IsCompatibleRange(chrt.Metadata.KubeVersion, v); got != want {
			t.Errorf("Kubernetes %s accepted %v, want %v (kubeVersion %q)", v, got, want, chrt.Metadata.KubeVersion)
		}
	}
	if chrt.Metadata.APIVersion != "v2" || chrt.Metadata.Type != "application" {
		t.Errorf("Chart.yaml apiVersion %q type %q, want v2 application", chrt.Metadata.APIVersion, chrt.Metadata.Type)
	}
}

// TestReadmeDocumentsEveryValue checks the chart's README table against values.yaml: every
// value is documented (by its path or a parent's), and every documented path exists.
func TestReadmeDocumentsEveryValue(t *testing.T) {
	readme, err := os.ReadFile(chartDir + "/README.md")
	if err != nil {
		t.Fatal(err)
	}
	vals, err := chartutil.ReadValuesFile(chartDir + "/values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([^`]+)` \\|").FindAllStringSubmatch(string(readme), -1) {
		documented = append(documented, m[1])
	}
	if len(documented) == 0 {
		t.Fatal("the README has no values table (rows start with | `path` |)")
	}
	var leaves []string
	flatten("", vals, &leaves)
	sort.Strings(leaves)
	for _, leaf := range leaves {
		ok := false
		for _, d := range documented {
			if leaf == d || strings.HasPrefix(leaf, d+".") {
				ok = true
				break
			}
		}
		if !ok {
			t.Errorf("value %s is not in the README's table", leaf)
		}
	}
	for _, d := range documented {
		if _, err := vals.PathValue(d); err != nil {
			if _, err := vals.Table(d); err != nil {
				t.Errorf("the README documents %s, which values.yaml does not have", d)
			}
		}
	}
}

// flatten lists the dotted paths of the leaves of a values tree (a list or an empty map is a
// leaf).
func flatten(prefix string, m map[string]any, out *[]string) {
	for k, v := range m {
		p := k
		if prefix != "" {
			p = prefix + "." + k
		}
		if sub, ok := v.(map[string]any); ok && len(sub) > 0 {
			flatten(p, sub, out)
			continue
		}
		*out = append(*out, p)
	}
}
