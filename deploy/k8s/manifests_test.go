package k8s

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"
)

// TestManifestsDecodeStrictly decodes every manifest into its k8s.io/api type, refusing
// unknown or misspelled fields, and checks what the README promises of each.
func TestManifestsDecodeStrictly(t *testing.T) {
	var dep appsv1.Deployment
	var svc corev1.Service
	var cm corev1.ConfigMap
	var hpa autoscalingv2.HorizontalPodAutoscaler
	var pdb policyv1.PodDisruptionBudget
	objs := map[string]any{"deployment.yaml": &dep, "service.yaml": &svc, "configmap.yaml": &cm,
		"hpa.yaml": &hpa, "pdb.yaml": &pdb}
	files, _ := filepath.Glob("*.yaml")
	if len(files) != len(objs) {
		t.Errorf("manifests %v, want exactly %d: one test case each", files, len(objs))
	}
	for name, obj := range objs {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.UnmarshalStrict(b, obj); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	c := dep.Spec.Template.Spec.Containers[0]
	if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" ||
		c.LivenessProbe == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" {
		t.Error("the gateway needs a readiness probe on /readyz and a liveness probe on /healthz")
	}
	if c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Sleep == nil {
		t.Fatal("the gateway needs a preStop sleep: the endpoint leaves the load balancers before SIGTERM")
	}
	pre := c.Lifecycle.PreStop.Sleep.Seconds
	grace := *dep.Spec.Template.Spec.TerminationGracePeriodSeconds
	if !strings.Contains(strings.Join(c.Args, " "), "--grace 25s") || pre+25 >= grace {
		t.Errorf("preStop %ds + --grace 25s must fit in terminationGracePeriodSeconds %d", pre, grace)
	}
	sel := dep.Spec.Selector.MatchLabels
	for name, got := range map[string]map[string]string{"service": svc.Spec.Selector, "pdb": pdb.Spec.Selector.MatchLabels,
		"pod template": dep.Spec.Template.Labels} {
		for k, v := range sel {
			if got[k] != v {
				t.Errorf("%s does not select the deployment's pods (%s=%s)", name, k, v)
			}
		}
	}
	if hpa.Spec.ScaleTargetRef.Name != dep.Name || hpa.Spec.ScaleTargetRef.Kind != "Deployment" {
		t.Errorf("the HPA scales %+v, want the deployment", hpa.Spec.ScaleTargetRef)
	}
	if !strings.Contains(cm.Data["gateway.yaml"], "redis:") {
		t.Error("the ConfigMap's gateway.yaml must configure Redis: replicas share state through it")
	}
}
