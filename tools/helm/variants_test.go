package helm

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// TestVariants renders the chart for the settings a platform team changes first, each from a
// values file and --set flags as `helm install -f ... --set ...` would, and checks what each
// setting promises.
func TestVariants(t *testing.T) {
	def := mustRender(t, "")
	for _, tc := range variants {
		t.Run(tc.name, func(t *testing.T) {
			r := mustRender(t, tc.values, tc.sets...)
			tc.check(t, r)
			checkInvariants(t, r)
			changed := strings.Contains(tc.values, "config:")
			if same := r.Deployment.Spec.Template.Annotations["checksum/config"] == def.Deployment.Spec.Template.Annotations["checksum/config"]; same == changed {
				t.Errorf("config changed %v, checksum changed %v: a config change must roll the pods, nothing else", changed, !same)
			}
		})
	}
}

// variant is one values file and its --set flags, with what its rendering must show.
type variant struct {
	name   string
	values string
	sets   []string
	check  func(t *testing.T, r *rendered)
}

var variants = []variant{{
	name:   "redis URL, HPA and PDB off",
	values: "redis:\n  url: redis://redis-master.data.svc:6379/0\n",
	sets:   []string{"autoscaling.enabled=false", "podDisruptionBudget.enabled=false"},
	check: func(t *testing.T, r *rendered) {
		if r.HPA != nil || r.PDB != nil {
			t.Errorf("objects %v, want no HPA and no PDB", r.kinds)
		}
		if n := r.Deployment.Spec.Replicas; n == nil || *n != 3 {
			t.Errorf("replicas %v, want replicaCount's 3 without the HPA", n)
		}
		if e := r.env(t)["SLUICE_REDIS_URL"]; e.Value != "redis://redis-master.data.svc:6379/0" || e.ValueFrom != nil {
			t.Errorf("SLUICE_REDIS_URL %+v, want redis.url", e)
		}
	},
}, {
	name: "ServiceMonitor and Ingress on",
	values: `ingress:
  enabled: true
  className: nginx
  annotations:
    nginx.ingress.kubernetes.io/proxy-buffering: "off"
    nginx.ingress.kubernetes.io/proxy-read-timeout: "3600"
  hosts:
    - host: llm.example.com
      paths: [{path: /v1}]
`,
	sets: []string{"metrics.serviceMonitor.enabled=true", "metrics.serviceMonitor.labels.release=prom",
		"metrics.serviceMonitor.interval=15s", "ingress.tls[0].secretName=llm-tls", "ingress.tls[0].hosts[0]=llm.example.com"},
	check: func(t *testing.T, r *rendered) {
		sm := r.ServiceMonitor
		if sm == nil || r.Ingress == nil {
			t.Fatalf("objects %v, want a ServiceMonitor and an Ingress", r.kinds)
		}
		if sm.Labels["release"] != "prom" {
			t.Errorf("ServiceMonitor labels %v, want release=prom for the Prometheus that selects it", sm.Labels)
		}
		for k, v := range sm.Spec.Selector.MatchLabels {
			if r.Service.Labels[k] != v {
				t.Errorf("the ServiceMonitor does not select the Service (%s=%s)", k, v)
			}
		}
		if ns := sm.Spec.NamespaceSelector.MatchNames; len(ns) != 1 || ns[0] != release.Namespace {
			t.Errorf("ServiceMonitor namespaces %v, want the release's", ns)
		}
		if ep := sm.Spec.Endpoints; len(ep) != 1 || ep[0].Port != "http" || ep[0].Path != "/metrics" || ep[0].Interval != "15s" {
			t.Errorf("ServiceMonitor endpoints %+v, want /metrics on the Service's http port every 15s", ep)
		}
		in := r.Ingress.Spec
		if in.IngressClassName == nil || *in.IngressClassName != "nginx" || len(in.TLS) != 1 || in.TLS[0].SecretName != "llm-tls" ||
			len(in.TLS[0].Hosts) != 1 || in.TLS[0].Hosts[0] != "llm.example.com" {
			t.Errorf("ingress class %v, TLS %+v, want nginx with llm-tls for llm.example.com", in.IngressClassName, in.TLS)
		}
		if len(in.Rules) != 1 || in.Rules[0].Host != "llm.example.com" || len(in.Rules[0].HTTP.Paths) != 1 {
			t.Fatalf("ingress rules %+v, want llm.example.com with one path", in.Rules)
		}
		p := in.Rules[0].HTTP.Paths[0]
		if p.Path != "/v1" || p.PathType == nil || *p.PathType != "Prefix" || p.Backend.Service.Name != r.Service.Name ||
			p.Backend.Service.Port.Name != "http" {
			t.Errorf("ingress path %+v, want /v1 (Prefix) to the Service's http port", p)
		}
		if r.Ingress.Annotations["nginx.ingress.kubernetes.io/proxy-buffering"] != "off" {
			t.Errorf("ingress annotations %v, want the values' annotations", r.Ingress.Annotations)
		}
	},
}, {
	name: "existing secrets, custom resources, 5 replicas",
	values: `config: |
  listen: "0.0.0.0:8080"
  auth: {admin_token: "${SLUICE_ADMIN_TOKEN}"}
  redis: {url: "${SLUICE_REDIS_URL}", on_failure: closed}
  providers:
    openai: {kind: openai, api_key: "${OPENAI_API_KEY}"}
  models:
    default: [openai/gpt-4.1-mini]
secrets:
  env:
    SLUICE_ADMIN_TOKEN: {secret: gw-admin, key: token}
    OPENAI_API_KEY: {secret: provider-keys, key: openai}
    ANTHROPIC_API_KEY: null
  envFrom: [extra-env]
redis:
  existingSecret: {name: redis-conn, key: url}
resources:
  requests: {cpu: "2", memory: 1Gi}
  limits: {cpu: "4", memory: 2Gi}
env:
  OTEL_SERVICE_NAME: sluice-eu
`,
	sets: []string{"replicaCount=5", "autoscaling.enabled=false", "image.tag=v1.2.3"},
	check: func(t *testing.T, r *rendered) {
		if n := r.Deployment.Spec.Replicas; n == nil || *n != 5 {
			t.Errorf("replicas %v, want 5", n)
		}
		env := r.env(t)
		checkSecretRef(t, env, "SLUICE_ADMIN_TOKEN", corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "gw-admin"}, Key: "token"})
		// Helm merges maps: the default's optional: true stays unless the values say false.
		checkSecretRef(t, env, "OPENAI_API_KEY", corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "provider-keys"}, Key: "openai", Optional: ptr(true)})
		checkSecretRef(t, env, "SLUICE_REDIS_URL", corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "redis-conn"}, Key: "url"})
		if _, ok := env["ANTHROPIC_API_KEY"]; ok {
			t.Error("ANTHROPIC_API_KEY set to null is still in the environment")
		}
		if env["OTEL_SERVICE_NAME"].Value != "sluice-eu" {
			t.Errorf("OTEL_SERVICE_NAME %+v, want the plain env value", env["OTEL_SERVICE_NAME"])
		}
		c := r.Deployment.Spec.Template.Spec.Containers[0]
		if len(c.EnvFrom) != 1 || c.EnvFrom[0].SecretRef == nil || c.EnvFrom[0].SecretRef.Name != "extra-env" {
			t.Errorf("envFrom %+v, want the Secret extra-env", c.EnvFrom)
		}
		if got := c.Resources.Requests[corev1.ResourceCPU]; got.Cmp(resource.MustParse("2")) != 0 {
			t.Errorf("cpu request %s, want 2", got.String())
		}
		if got := c.Resources.Limits[corev1.ResourceMemory]; got.Cmp(resource.MustParse("2Gi")) != 0 {
			t.Errorf("memory limit %s, want 2Gi", got.String())
		}
		if c.Image != "ghcr.io/sluice-gw/sluice:v1.2.3" || r.Deployment.Labels["app.kubernetes.io/version"] != "v1.2.3" {
			t.Errorf("image %s, version label %q, want v1.2.3", c.Image, r.Deployment.Labels["app.kubernetes.io/version"])
		}
		if !strings.Contains(r.ConfigMap.Data["gateway.yaml"], "on_failure: closed") {
			t.Error("the ConfigMap does not hold the values' config")
		}
	},
}, {
	name:   "the Redis subchart's service and password",
	values: "redis: {enabled: true}\n",
	sets:   []string{"image.digest=sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"},
	check: func(t *testing.T, r *rendered) {
		env := r.env(t)
		checkSecretRef(t, env, "SLUICE_REDIS_PASSWORD", corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "sluice-redis"}, Key: "redis-password"})
		if e := env["SLUICE_REDIS_URL"]; e.Value != "redis://:$(SLUICE_REDIS_PASSWORD)@sluice-redis-master:6379/0" {
			t.Errorf("SLUICE_REDIS_URL %+v, want the subchart's master with the password by reference", e)
		}
		// Kubernetes expands $(VAR) only from variables defined before it.
		c := r.Deployment.Spec.Template.Spec.Containers[0]
		pw, url := -1, -1
		for i, e := range c.Env {
			switch e.Name {
			case "SLUICE_REDIS_PASSWORD":
				pw = i
			case "SLUICE_REDIS_URL":
				url = i
			}
		}
		if pw < 0 || pw > url {
			t.Errorf("SLUICE_REDIS_PASSWORD at %d, after SLUICE_REDIS_URL at %d", pw, url)
		}
		if !strings.HasSuffix(c.Image, "@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef") {
			t.Errorf("image %s, want pinned by digest", c.Image)
		}
	},
}}

// TestRefusedValues checks that values which would break the gateway fail at render time
// (helm install fails), naming what to fix.
func TestRefusedValues(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values string
		sets   []string
		want   string
	}{
		{"streams cut by the kubelet", "", []string{"drainSeconds=35"}, "terminationGracePeriodSeconds"},
		{"a password in redis.url", "", []string{"redis.url=redis://:hunter2@redis:6379"}, "redis.existingSecret"},
		{"HPA min above max", "", []string{"autoscaling.minReplicas=30"}, "autoscaling.minReplicas"},
		{"a secret reference without its Secret", "secrets: {env: {EXTRA_KEY: {key: k}}}\n", nil, "secrets.env.EXTRA_KEY.secret"},
		{"no config", "config: \"\"\n", nil, "the gateway's configuration must not be empty"},
		{"a value removed (strict templates)", "", []string{"autoscaling.enabled=false", "replicaCount=null"}, "replicaCount"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := render(tc.values, tc.sets...)
			t.Logf("render: %v", err)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("render: %v, want an error naming %s", err, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), "hunter2") {
				t.Errorf("the error repeats the password: %v", err)
			}
		})
	}
}
