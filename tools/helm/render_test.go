package helm

import (
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/strvals"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// chartDir is the chart under test, from this module's directory.
const chartDir = "../../deploy/helm/sluice"

// release is what `helm install sluice deploy/helm/sluice -n ai` renders with.
var release = chartutil.ReleaseOptions{Name: "sluice", Namespace: "ai", Revision: 1, IsInstall: true}

// rendered holds one rendering of the chart: each object decoded strictly into its type.
type rendered struct {
	files          map[string]string // template path -> rendered text
	kinds          []string          // "Kind/name" of every object, sorted
	all            []metav1.Object
	ConfigMap      *corev1.ConfigMap
	Deployment     *appsv1.Deployment
	Service        *corev1.Service
	HPA            *autoscalingv2.HorizontalPodAutoscaler
	PDB            *policyv1.PodDisruptionBudget
	ServiceMonitor *monitoringv1.ServiceMonitor
	Ingress        *networkingv1.Ingress
}

// render renders the chart as `helm template` does, offline (no cluster): values is a values
// file's text and each set is one --set flag, applied in order over it. Templates run in
// strict mode, so a reference to a value that does not exist fails.
func render(values string, sets ...string) (*rendered, error) {
	chrt, err := loader.Load(chartDir)
	if err != nil {
		return nil, err
	}
	vals, err := chartutil.ReadValues([]byte(values))
	if err != nil {
		return nil, fmt.Errorf("values: %w", err)
	}
	for _, s := range sets {
		if err := strvals.ParseInto(s, vals); err != nil {
			return nil, fmt.Errorf("--set %s: %w", s, err)
		}
	}
	top, err := chartutil.ToRenderValues(chrt, vals, release, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, err
	}
	files, err := engine.Engine{Strict: true}.Render(chrt, top)
	if err != nil {
		return nil, err
	}
	r := &rendered{files: files}
	return r, r.decode()
}

var docSep = regexp.MustCompile(`(?m)^---\s*$`)

// decode decodes every object of every rendered manifest into its k8s.io/api (or
// prometheus-operator) type, refusing unknown or misspelled fields and unknown kinds.
func (r *rendered) decode() error {
	paths := make([]string, 0, len(r.files))
	for p := range r.files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if !strings.HasSuffix(p, ".yaml") {
			continue // NOTES.txt, _helpers.tpl
		}
		for _, doc := range docSep.Split(r.files[p], -1) {
			if err := r.decodeDoc(p, []byte(doc)); err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
		}
	}
	sort.Strings(r.kinds)
	return nil
}

func (r *rendered) decodeDoc(path string, doc []byte) error {
	var probe map[string]any
	if err := yaml.Unmarshal(doc, &probe); err != nil {
		return err
	}
	if len(probe) == 0 {
		return nil // a template that rendered to comments or nothing
	}
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return err
	}
	// Each known kind fills its field of r: a pointer to that (pointer) field, set below.
	field, ok := map[string]any{
		"v1 ConfigMap":                            &r.ConfigMap,
		"apps/v1 Deployment":                      &r.Deployment,
		"v1 Service":                              &r.Service,
		"autoscaling/v2 HorizontalPodAutoscaler":  &r.HPA,
		"policy/v1 PodDisruptionBudget":           &r.PDB,
		"monitoring.coreos.com/v1 ServiceMonitor": &r.ServiceMonitor,
		"networking.k8s.io/v1 Ingress":            &r.Ingress,
	}[tm.APIVersion+" "+tm.Kind]
	if !ok {
		return fmt.Errorf("unexpected object %s %s", tm.APIVersion, tm.Kind)
	}
	f := reflect.ValueOf(field).Elem()
	f.Set(reflect.New(f.Type().Elem()))
	obj := f.Interface().(metav1.Object)
	if err := yaml.UnmarshalStrict(doc, obj); err != nil {
		return fmt.Errorf("%s: %w", tm.Kind, err)
	}
	name := tm.Kind + "/" + obj.GetName()
	for _, k := range r.kinds {
		if k == name {
			return fmt.Errorf("%s rendered twice", name)
		}
	}
	r.kinds = append(r.kinds, name)
	r.all = append(r.all, obj)
	return nil
}

// mustRender is render for a rendering that must succeed.
func mustRender(t *testing.T, values string, sets ...string) *rendered {
	t.Helper()
	r, err := render(values, sets...)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	return r
}

// env returns the gateway container's environment by name.
func (r *rendered) env(t *testing.T) map[string]corev1.EnvVar {
	t.Helper()
	if r.Deployment == nil {
		t.Fatal("no Deployment rendered")
	}
	m := map[string]corev1.EnvVar{}
	for _, e := range r.Deployment.Spec.Template.Spec.Containers[0].Env {
		if _, dup := m[e.Name]; dup {
			t.Errorf("env %s set twice", e.Name)
		}
		m[e.Name] = e
	}
	return m
}
