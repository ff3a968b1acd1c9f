{{/* Base name of the objects: the seed manifests' name unless overridden. */}}
{{- define "npu-dra.fullname" -}}
{{- default "ascend-npu-dra-kubeletplugin" .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Namespace of the namespaced objects: namespace.name, else the release namespace
(`helm install -n X`), else, where that is `default` (no -n), ascend-dra as in deploy/manifests. */}}
{{- define "npu-dra.namespace" -}}
{{- if .Values.namespace.name -}}
{{- .Values.namespace.name -}}
{{- else if ne .Release.Namespace "default" -}}
{{- .Release.Namespace -}}
{{- else -}}
ascend-dra
{{- end -}}
{{- end -}}

{{/* Whether the chart renders the Namespace: asked, and not the release namespace, which
Helm makes (--create-namespace) or finds before it installs anything. */}}
{{- define "npu-dra.createsNamespace" -}}
{{- if and .Values.namespace.create (ne (include "npu-dra.namespace" .) .Release.Namespace) -}}
true
{{- end -}}
{{- end -}}

{{- define "npu-dra.serviceAccountName" -}}
{{- include "npu-dra.fullname" . -}}
{{- end -}}

{{- define "npu-dra.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* Labels of every object: the manifests' labels plus Helm's bookkeeping. */}}
{{- define "npu-dra.labels" -}}
app.kubernetes.io/name: npu-dra
{{- if .component }}
app.kubernetes.io/component: {{ .component }}
{{- end }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
{{- end -}}

{{/* The LD_LIBRARY_PATH npu-smi needs, under an Ascend root. */}}
{{- define "npu-dra.ldLibraryPath" -}}
{{- $root := . -}}
{{- $dirs := list "driver/lib64" "driver/lib64/common" "driver/lib64/driver" "ascend-toolkit/latest/lib64" "ascend-toolkit/latest/runtime/lib64" -}}
{{- $paths := list -}}
{{- range $dirs }}{{ $paths = append $paths (printf "%s/%s" $root .) }}{{ end -}}
{{- join ":" $paths -}}
{{- end -}}

{{/* The DRA driver name: driverName, else the device profile's. */}}
{{- define "npu-dra.driverName" -}}
{{- default (eq .Values.deviceProfile "gpu" | ternary "gpu.npu-dra.io" "npu.huawei.com") .Values.driverName -}}
{{- end -}}

{{/* Where the kubelet plugin runs: the affinity value, else the profile's nodeAffinity. */}}
{{- define "npu-dra.affinity" -}}
{{- $affinity := deepCopy (default dict .Values.affinity) -}}
{{- $nodes := eq .Values.deviceProfile "gpu" | ternary .Values.gpu.nodeAffinity .Values.nodeAffinity -}}
{{- if and $nodes (not (hasKey $affinity "nodeAffinity")) -}}
{{- $_ := set $affinity "nodeAffinity" $nodes -}}
{{- end -}}
{{- with $affinity }}{{ toYaml . }}{{ end -}}
{{- end -}}
