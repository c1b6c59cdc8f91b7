{{/* Name of the release's objects. */}}
{{- define "keelson.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "keelson.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "keelson.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "keelson.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{- define "keelson.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "keelson.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The DatabaseCluster CRD's name. */}}
{{- define "keelson.crdName" -}}databaseclusters.keelson.io{{- end -}}

{{/*
"true" when the CRD exists in the cluster but not as part of this release (so the chart must not
template it), "" otherwise. Empty under `helm template`, where lookup sees no cluster.
*/}}
{{- define "keelson.crdOwnedElsewhere" -}}
{{- $existing := lookup "apiextensions.k8s.io/v1" "CustomResourceDefinition" "" (include "keelson.crdName" .) -}}
{{- if $existing -}}
{{- $annotations := default (dict) $existing.metadata.annotations -}}
{{- if not (and (eq (index $annotations "meta.helm.sh/release-name" | default "") .Release.Name) (eq (index $annotations "meta.helm.sh/release-namespace" | default "") .Release.Namespace)) -}}
true
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Removes every x-kubernetes-validations from a CRD (a map from fromYaml), in place. Prints nothing. */}}
{{- define "keelson.withoutCel" -}}
{{- if kindIs "map" . -}}
{{- $_ := unset . "x-kubernetes-validations" -}}
{{- range $key, $value := . }}{{ include "keelson.withoutCel" $value }}{{ end -}}
{{- else if kindIs "slice" . -}}
{{- range . }}{{ include "keelson.withoutCel" . }}{{ end -}}
{{- end -}}
{{- end -}}
