/*
 * Whether loops are to be published as OpenTelemetry (./incidentExport.ts), and where a receiver
 * is to listen (./otlpReceiver.ts), told without loading the OpenTelemetry SDK or the receiver: the
 * callers load them only when these say so.
 */

/** Where there is somewhere to send: logs and metrics each (the shared endpoint, or their own). */
export function exportTargets(env: NodeJS.ProcessEnv): { readonly logs: boolean; readonly metrics: boolean } {
  const set = (v: string | undefined) => v !== undefined && v.trim() !== '';
  if ((env.OTEL_SDK_DISABLED ?? '').toLowerCase() === 'true') return { logs: false, metrics: false };
  return { logs: set(env.OTEL_EXPORTER_OTLP_ENDPOINT) || set(env.OTEL_EXPORTER_OTLP_LOGS_ENDPOINT), metrics: set(env.OTEL_EXPORTER_OTLP_ENDPOINT) || set(env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT) };
}

/** Whether exporting is configured in this environment. */
export function exportConfigured(env: NodeJS.ProcessEnv): boolean {
  const to = exportTargets(env);
  return to.logs || to.metrics;
}

/** What was last sent of an incident (kept by a one-shot command between its runs: `seenState`). */
export interface Seen {
  readonly action: string;
  readonly count: number;
  readonly agent: string;
}

/** `HOST:PORT`, `[v6]:PORT`, or `PORT` (on 127.0.0.1); undefined when it is none of them. */
export function parseHostPort(text: string): { host: string; port: number } | undefined {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(text.trim()) ?? /^()()(\d{1,5})$/.exec(text.trim());
  const port = m ? Number(m[3]) : NaN;
  return m && port >= 0 && port <= 65535 ? { host: m[1] || m[2] || '127.0.0.1', port } : undefined;
}
