/*
 * Whether loops are to be published as OpenTelemetry (./incidentExport.ts), told without loading
 * the OpenTelemetry SDK: the callers load it only when this says so.
 */

/** Whether exporting is configured in this environment. */
export function exportConfigured(env: NodeJS.ProcessEnv): boolean {
  if ((env.OTEL_SDK_DISABLED ?? '').toLowerCase() === 'true') return false;
  return [env.OTEL_EXPORTER_OTLP_ENDPOINT, env.OTEL_EXPORTER_OTLP_LOGS_ENDPOINT, env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT].some((v) => v !== undefined && v.trim() !== '');
}

/** What was last sent of an incident (kept by a one-shot command between its runs: `seenState`). */
export interface Seen {
  readonly action: string;
  readonly count: number;
  readonly agent: string;
}
