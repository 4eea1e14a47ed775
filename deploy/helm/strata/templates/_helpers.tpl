{{/* The name of the members' StatefulSet and headless Service. */}}
{{- define "strata.meta" -}}{{ .Release.Name }}-meta{{- end -}}

{{/* The name of the workers' DaemonSet. */}}
{{- define "strata.worker" -}}{{ .Release.Name }}-worker{{- end -}}

{{/* The DNS domain of the members' pods. */}}
{{- define "strata.metaDomain" -}}{{ include "strata.meta" . }}.{{ .Release.Namespace }}.svc.cluster.local{{- end -}}

{{/* Every member's address, comma-separated: what clients and workers take. */}}
{{- define "strata.metaAddrs" -}}
{{- $addrs := list -}}
{{- range $i := until (int .Values.meta.replicas) -}}
{{- $addrs = append $addrs (printf "%s-%d.%s:%d" (include "strata.meta" $) $i (include "strata.metaDomain" $) (int $.Values.meta.port)) -}}
{{- end -}}
{{- join "," $addrs -}}
{{- end -}}

{{/* The group's members as --initial-cluster wants them: ID=HOST:PORT,... */}}
{{- define "strata.initialCluster" -}}
{{- $members := list -}}
{{- range $i := until (int .Values.meta.replicas) -}}
{{- $members = append $members (printf "%d=%s-%d.%s:%d" (add1 $i) (include "strata.meta" $) $i (include "strata.metaDomain" $) (int $.Values.meta.port)) -}}
{{- end -}}
{{- join "," $members -}}
{{- end -}}

{{/* Labels of every object. */}}
{{- define "strata.labels" -}}
app.kubernetes.io/name: strata
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end -}}

{{/* The TLS flags, or --plaintext. */}}
{{- define "strata.tlsArgs" -}}
{{- if .Values.tls.enabled -}}
--tls-ca /tls/ca.crt --tls-cert /tls/tls.crt --tls-key /tls/tls.key
{{- else -}}
--plaintext
{{- end -}}
{{- end -}}

{{/* The probes of a process's HTTP listener at port. */}}
{{- define "strata.probes" -}}
readinessProbe:
  httpGet: {path: /healthz, port: {{ .port }}, scheme: {{ if .tls }}HTTPS{{ else }}HTTP{{ end }}}
  periodSeconds: 5
  failureThreshold: 3
livenessProbe:
  httpGet: {path: /healthz, port: {{ .port }}, scheme: {{ if .tls }}HTTPS{{ else }}HTTP{{ end }}}
  initialDelaySeconds: 10
  periodSeconds: 10
  failureThreshold: 6
{{- end -}}
