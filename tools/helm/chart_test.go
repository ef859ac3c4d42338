package helm

import (
	"crypto/sha256"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/sluice-gw/sluice/internal/config"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/yaml"
)

// k8sManifest decodes one of today's plain manifests (deploy/k8s), the shape the chart's
// defaults must keep.
func k8sManifest(t *testing.T, name string, obj any) {
	t.Helper()
	b, err := os.ReadFile("../../deploy/k8s/" + name)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(b, obj); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// TestDefaultsRenderTheManifests renders the default values and checks that they are the
// production shape of deploy/k8s: the same pod (probes, preStop and grace, resources,
// security contexts), the same HPA, PDB, Service and gateway configuration.
func TestDefaultsRenderTheManifests(t *testing.T) {
	r := mustRender(t, "")
	want := []string{"ConfigMap/sluice", "Deployment/sluice", "HorizontalPodAutoscaler/sluice",
		"PodDisruptionBudget/sluice", "Service/sluice"}
	if !reflect.DeepEqual(r.kinds, want) {
		t.Fatalf("objects %v, want %v", r.kinds, want)
	}
	var dep appsv1.Deployment
	var svc corev1.Service
	var cm corev1.ConfigMap
	var hpa autoscalingv2.HorizontalPodAutoscaler
	var pdb policyv1.PodDisruptionBudget
	k8sManifest(t, "deployment.yaml", &dep)
	k8sManifest(t, "service.yaml", &svc)
	k8sManifest(t, "configmap.yaml", &cm)
	k8sManifest(t, "hpa.yaml", &hpa)
	k8sManifest(t, "pdb.yaml", &pdb)

	got, wantC := r.Deployment.Spec.Template.Spec.Containers[0], dep.Spec.Template.Spec.Containers[0]
	for _, f := range []struct {
		name      string
		got, want any
	}{
		{"args", got.Args, wantC.Args},
		{"ports", got.Ports, wantC.Ports},
		{"readinessProbe", got.ReadinessProbe, wantC.ReadinessProbe},
		{"livenessProbe", got.LivenessProbe, wantC.LivenessProbe},
		{"lifecycle", got.Lifecycle, wantC.Lifecycle},
		{"resources", got.Resources, wantC.Resources},
		{"securityContext", got.SecurityContext, wantC.SecurityContext},
		{"volumeMounts", got.VolumeMounts, wantC.VolumeMounts},
		{"pod securityContext", r.Deployment.Spec.Template.Spec.SecurityContext, dep.Spec.Template.Spec.SecurityContext},
		{"terminationGracePeriodSeconds", r.Deployment.Spec.Template.Spec.TerminationGracePeriodSeconds,
			dep.Spec.Template.Spec.TerminationGracePeriodSeconds},
		{"volumes", r.Deployment.Spec.Template.Spec.Volumes, dep.Spec.Template.Spec.Volumes},
		{"strategy", r.Deployment.Spec.Strategy, dep.Spec.Strategy},
		{"revisionHistoryLimit", r.Deployment.Spec.RevisionHistoryLimit, dep.Spec.RevisionHistoryLimit},
		{"HPA minReplicas", r.HPA.Spec.MinReplicas, hpa.Spec.MinReplicas},
		{"HPA maxReplicas", r.HPA.Spec.MaxReplicas, hpa.Spec.MaxReplicas},
		{"HPA metrics", r.HPA.Spec.Metrics, hpa.Spec.Metrics},
		{"HPA behavior", r.HPA.Spec.Behavior, hpa.Spec.Behavior},
		{"HPA target", r.HPA.Spec.ScaleTargetRef, hpa.Spec.ScaleTargetRef},
		{"PDB maxUnavailable", r.PDB.Spec.MaxUnavailable, pdb.Spec.MaxUnavailable},
		{"Service ports", r.Service.Spec.Ports, svc.Spec.Ports},
	} {
		if !equality.Semantic.DeepEqual(f.got, f.want) {
			t.Errorf("%s: got %+v, want %+v (deploy/k8s)", f.name, f.got, f.want)
		}
	}
	if got.Image != "ghcr.io/sluice-gw/sluice:latest" {
		t.Errorf("image %q, want the chart's appVersion tag", got.Image)
	}
	// With the HPA on, the Deployment leaves the count to it (an upgrade must not reset it).
	if r.Deployment.Spec.Replicas != nil {
		t.Errorf("replicas %d with the HPA on, want none", *r.Deployment.Spec.Replicas)
	}
	var gotCfg, wantCfg any
	if err := yaml.Unmarshal([]byte(r.ConfigMap.Data["gateway.yaml"]), &gotCfg); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal([]byte(cm.Data["gateway.yaml"]), &wantCfg); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gotCfg, wantCfg) {
		t.Errorf("config %v, want deploy/k8s/configmap.yaml's %v", gotCfg, wantCfg)
	}

	env := r.env(t)
	for name, want := range map[string]corev1.SecretKeySelector{
		"SLUICE_ADMIN_TOKEN": {LocalObjectReference: corev1.LocalObjectReference{Name: "sluice-secrets"}, Key: "SLUICE_ADMIN_TOKEN"},
		"SLUICE_REDIS_URL":   {LocalObjectReference: corev1.LocalObjectReference{Name: "sluice-secrets"}, Key: "SLUICE_REDIS_URL"},
		"OPENAI_API_KEY":     {LocalObjectReference: corev1.LocalObjectReference{Name: "sluice-secrets"}, Key: "OPENAI_API_KEY", Optional: ptr(true)},
		"ANTHROPIC_API_KEY":  {LocalObjectReference: corev1.LocalObjectReference{Name: "sluice-secrets"}, Key: "ANTHROPIC_API_KEY", Optional: ptr(true)},
	} {
		checkSecretRef(t, env, name, want)
	}
	if e := env["SLUICE_REPLICA"]; e.ValueFrom == nil || e.ValueFrom.FieldRef == nil || e.ValueFrom.FieldRef.FieldPath != "metadata.name" {
		t.Errorf("SLUICE_REPLICA %+v, want the pod's name", e)
	}
	checkInvariants(t, r)
}

// checkSecretRef checks that env var name is read from the given Secret key, never a value.
func checkSecretRef(t *testing.T, env map[string]corev1.EnvVar, name string, want corev1.SecretKeySelector) {
	t.Helper()
	e, ok := env[name]
	if !ok || e.Value != "" || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
		t.Errorf("env %s: got %+v, want a secretKeyRef", name, e)
		return
	}
	if !reflect.DeepEqual(*e.ValueFrom.SecretKeyRef, want) {
		t.Errorf("env %s: got %+v, want %+v", name, *e.ValueFrom.SecretKeyRef, want)
	}
}

// checkInvariants checks what every rendering must hold: the standard labels, selectors that
// select the pods, the config parsed by the gateway's own parser with every ${VAR} it reads
// in the pod's environment, the config's checksum on the pod template, and no Secret.
func checkInvariants(t *testing.T, r *rendered) {
	t.Helper()
	for _, o := range r.all {
		l := o.GetLabels()
		for _, k := range []string{"app.kubernetes.io/name", "app.kubernetes.io/instance", "app.kubernetes.io/version",
			"app.kubernetes.io/managed-by", "helm.sh/chart"} {
			if l[k] == "" {
				t.Errorf("%s/%s has no label %s", reflect.TypeOf(o).Elem().Name(), o.GetName(), k)
			}
		}
		if o.GetNamespace() != "" {
			t.Errorf("%s sets a namespace: helm install -n decides it", o.GetName())
		}
	}
	pod := r.Deployment.Spec.Template
	sel := r.Deployment.Spec.Selector.MatchLabels
	if sel["app.kubernetes.io/name"] != "sluice" || sel["app.kubernetes.io/instance"] != release.Name || len(sel) != 2 {
		t.Errorf("selector %v, want the name and the instance only (selectors are immutable)", sel)
	}
	selects := map[string]map[string]string{"pod template": pod.Labels, "service": r.Service.Spec.Selector}
	if r.PDB != nil {
		selects["pdb"] = r.PDB.Spec.Selector.MatchLabels
	}
	for name, got := range selects {
		for k, v := range sel {
			if got[k] != v {
				t.Errorf("%s does not select the deployment's pods (%s=%s)", name, k, v)
			}
		}
	}
	if r.HPA != nil && (r.HPA.Spec.ScaleTargetRef.Name != r.Deployment.Name || r.HPA.Spec.ScaleTargetRef.Kind != "Deployment") {
		t.Errorf("the HPA scales %+v, want the deployment", r.HPA.Spec.ScaleTargetRef)
	}
	if r.HPA == nil && r.Deployment.Spec.Replicas == nil {
		t.Error("no HPA and no replica count")
	}
	if v := pod.Spec.Volumes; len(v) != 1 || v[0].ConfigMap == nil || v[0].ConfigMap.Name != r.ConfigMap.Name {
		t.Errorf("volumes %+v, want the ConfigMap %s", v, r.ConfigMap.Name)
	}
	sum := fmt.Sprintf("%x", sha256.Sum256([]byte(r.files["sluice/templates/configmap.yaml"])))
	if got := pod.Annotations["checksum/config"]; got != sum {
		t.Errorf("checksum/config %q, want the ConfigMap's sha256 %s", got, sum)
	}

	// The gateway reads its config the way the pod would: each ${VAR} from the environment
	// the Deployment gives it (a secret's value stands in as "value-of-VAR").
	env := r.env(t)
	cfgText := r.ConfigMap.Data["gateway.yaml"]
	for _, m := range regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)`).FindAllStringSubmatch(cfgText, -1) {
		if _, ok := env[m[1]]; !ok && !fromEnvFrom(pod.Spec.Containers[0]) {
			t.Errorf("the config reads ${%s}, which the pod's environment does not set", m[1])
		}
	}
	lookup := func(name string) (string, bool) {
		e, ok := env[name]
		switch {
		case !ok:
			return "", false
		case name == "SLUICE_REDIS_URL" && (e.ValueFrom != nil || strings.Contains(e.Value, "$(")):
			return "redis://127.0.0.1:6379/0", true
		case e.ValueFrom != nil:
			return "value-of-" + name, true
		}
		return e.Value, true
	}
	cfg, err := config.ParseWith([]byte(cfgText), "gateway.yaml", lookup)
	if err != nil {
		t.Fatalf("the gateway refuses the ConfigMap's config: %v", err)
	}
	if cfg.Listen != "0.0.0.0:8080" {
		t.Errorf("listen %q, want 0.0.0.0:8080: the container port and the probes use it", cfg.Listen)
	}
	if cfg.Redis.URL == "" {
		t.Error("no Redis in the config: replicas share state through it")
	}
	if cfg.Auth.AdminToken != "value-of-SLUICE_ADMIN_TOKEN" {
		t.Error("the admin token does not come from the SLUICE_ADMIN_TOKEN secret reference")
	}
}

func fromEnvFrom(c corev1.Container) bool { return len(c.EnvFrom) > 0 }

func ptr[T any](v T) *T { return &v }
