{{/* The chart's name, or nameOverride. */}}
{{- define "sluice.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The objects' name: fullnameOverride, else the release's name when it holds the chart's
(helm install sluice ... gives "sluice", the names of deploy/k8s), else release-chart. */}}
{{- define "sluice.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* The labels that select the pods: never change them on upgrade (selectors are immutable). */}}
{{- define "sluice.selectorLabels" -}}
app.kubernetes.io/name: {{ include "sluice.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* The labels every object carries. */}}
{{- define "sluice.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "sluice.selectorLabels" . }}
app.kubernetes.io/version: {{ (.Values.image.tag | default .Chart.AppVersion) | trunc 63 | quote }}
app.kubernetes.io/component: gateway
app.kubernetes.io/part-of: sluice
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* The image: repository@digest when a digest is set, else repository:tag. */}}
{{- define "sluice.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}
{{- end }}

{{/* SLUICE_REDIS_URL (and the subchart's password it is built from): the first of
redis.enabled, redis.url, redis.existingSecret that is set. */}}
{{- define "sluice.redisEnv" -}}
{{- if .Values.redis.enabled }}
- name: SLUICE_REDIS_PASSWORD
  valueFrom:
    secretKeyRef: {name: {{ printf "%s-redis" .Release.Name | quote }}, key: redis-password}
- name: SLUICE_REDIS_URL
  value: {{ printf "redis://:$(SLUICE_REDIS_PASSWORD)@%s-redis-master:6379/0" .Release.Name | quote }}
{{- else if .Values.redis.url }}
- name: SLUICE_REDIS_URL
  value: {{ .Values.redis.url | quote }}
{{- else if .Values.redis.existingSecret.name }}
- name: SLUICE_REDIS_URL
  valueFrom:
    secretKeyRef:
      name: {{ .Values.redis.existingSecret.name | quote }}
      key: {{ .Values.redis.existingSecret.key | default "SLUICE_REDIS_URL" | quote }}
{{- end }}
{{- end }}
