{{/*
Chart name, truncated to the 63 characters Kubernetes allows in names.
*/}}
{{- define "mergeguard.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Full name of the release's objects: fullnameOverride, or "<release>-<chart>"
unless the release name already contains the chart name.
*/}}
{{- define "mergeguard.fullname" -}}
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

{{/*
Chart name and version for the helm.sh/chart label.
*/}}
{{- define "mergeguard.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Labels on every object.
*/}}
{{- define "mergeguard.labels" -}}
helm.sh/chart: {{ include "mergeguard.chart" . }}
{{ include "mergeguard.selectorLabels" . }}
app.kubernetes.io/version: {{ include "mergeguard.imageTag" . | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/*
Labels that select the pods (Deployment, Service, PodDisruptionBudget).
Never change them on upgrade: a Deployment's selector is immutable.
*/}}
{{- define "mergeguard.selectorLabels" -}}
app.kubernetes.io/name: {{ include "mergeguard.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
Service account the pods run as.
*/}}
{{- define "mergeguard.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "mergeguard.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
Secret holding DATABASE_URL, the GitHub App secrets and the API keys.
*/}}
{{- define "mergeguard.secretName" -}}
{{- default (include "mergeguard.fullname" .) .Values.secrets.existingSecret }}
{{- end }}

{{/*
Image tag: image.tag, else the chart's appVersion.
*/}}
{{- define "mergeguard.imageTag" -}}
{{- default .Chart.AppVersion .Values.image.tag }}
{{- end }}

{{/*
Image reference; a digest pins it exactly.
*/}}
{{- define "mergeguard.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (include "mergeguard.imageTag" .) }}
{{- end }}
{{- end }}

{{/*
Replicas that run at the least: replicaCount, or autoscaling.minReplicas.
*/}}
{{- define "mergeguard.minReplicas" -}}
{{- if .Values.autoscaling.enabled }}
{{- .Values.autoscaling.minReplicas }}
{{- else }}
{{- .Values.replicaCount }}
{{- end }}
{{- end }}

{{/*
GOMEMLIMIT in bytes: goMemLimitPercent of resources.limits.memory (a
Kubernetes quantity such as 512Mi, 1Gi, 500M or 536870912). Empty when there is
no memory limit or goMemLimitPercent is 0.
*/}}
{{- define "mergeguard.goMemLimit" -}}
{{- $raw := dig "limits" "memory" "" .Values.resources }}
{{- /* A bare number in a values file arrives as float64 (1e+06 as a string). */}}
{{- $limit := ternary (int64 $raw | toString) (toString $raw) (kindIs "float64" $raw) }}
{{- $pct := int .Values.goMemLimitPercent }}
{{- if and $limit (gt $pct 0) }}
{{- $num := regexFind "^[0-9]+(\\.[0-9]+)?" $limit }}
{{- $suffix := trimPrefix $num $limit }}
{{- $units := dict "" 1 "k" 1000 "M" 1000000 "G" 1000000000 "T" 1000000000000 "Ki" 1024 "Mi" 1048576 "Gi" 1073741824 "Ti" 1099511627776 }}
{{- if or (not $num) (not (hasKey $units $suffix)) }}
{{- fail (printf "resources.limits.memory %q: cannot compute GOMEMLIMIT; write it as a number with an optional k, M, G, T, Ki, Mi, Gi or Ti suffix, or set goMemLimitPercent: 0" $limit) }}
{{- end }}
{{- divf (mulf (float64 $num) (get $units $suffix) $pct) 100 | floor | int64 }}
{{- end }}
{{- end }}
