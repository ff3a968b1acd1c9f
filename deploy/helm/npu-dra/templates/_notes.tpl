{{/* What `helm install` and `helm upgrade` print (NOTES.txt); a named template so that the
chart tests can render it (helm template leaves NOTES.txt out). */}}
{{- define "npu-dra.notes" -}}
{{- $ns := include "npu-dra.namespace" . -}}
{{- $name := include "npu-dra.fullname" . -}}
npu-dra {{ .Chart.AppVersion }}: the {{ if .Values.devicePlugin.enabled }}classic device plugin{{ else }}DRA kubelet plugin{{ end }} runs as DaemonSet {{ $name }} in namespace {{ $ns }}, on the nodes its nodeAffinity selects (by default labelled accelerator=huawei-Ascend910, -Ascend310P, -Ascend310 or huawei-npu, or by Node Feature Discovery).
{{- if not (include "npu-dra.createsNamespace" .) }}

The plugin's pods are privileged and the chart did not make namespace {{ $ns }}: where Pod Security is enforced, label it, or the DaemonSet's pods are refused ("violates PodSecurity"):
  kubectl label namespace {{ $ns }} pod-security.kubernetes.io/enforce=privileged
{{- end }}

Wait for the plugin on every NPU node, then see what the nodes publish:
  kubectl -n {{ $ns }} rollout status daemonset/{{ $name }} --timeout=5m
{{- if not .Values.devicePlugin.enabled }}
  kubectl get resourceslices
  kubectl get deviceclasses
{{- else }}
  kubectl get nodes -o custom-columns=NAME:.metadata.name,NPUS:.status.allocatable
{{- end }}

Upgrade from a newer checkout: helm upgrade {{ .Release.Name }} deploy/helm/npu-dra --reset-then-reuse-values{{ if ne .Release.Namespace "default" }} -n {{ .Release.Namespace }}{{ end }}
Something wrong: docs/troubleshooting.md; every value: docs/reference/chart-values.md.
{{- end -}}
