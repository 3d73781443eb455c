import * as os from 'node:os';
import { SeverityNumber } from '@opentelemetry/api-logs';
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchLogRecordProcessor, LoggerProvider } from '@opentelemetry/sdk-logs';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import type { Incident } from '../core/incidents';
import { exportTargets, type Seen } from './otelConfig';

declare const __VERSION__: string | undefined;
const VERSION = typeof __VERSION__ === 'string' ? __VERSION__ : 'dev';

export { exportConfigured, type Seen } from './otelConfig';

/*
 * Loops published as OpenTelemetry, so that a team's backend (Grafana, Datadog, Elastic, through
 * their Collector) shows every machine's: each incident as a log record when it opens, grows (more
 * repeats, or a more severe action) and ends, and a gauge of the loops going on per agent. With the
 * OpenTelemetry JS SDK and its OTLP/HTTP exporters, which take their endpoint, headers, timeout and
 * compression from the standard variables themselves (`OTEL_EXPORTER_OTLP_ENDPOINT` with
 * `/v1/logs` and `/v1/metrics` added, or `OTEL_EXPORTER_OTLP_LOGS_ENDPOINT` /
 * `…_METRICS_ENDPOINT` as given; `…_HEADERS`, `…_TIMEOUT`, `…_COMPRESSION`). Nothing is sent unless
 * one of the endpoints is set, and `OTEL_SDK_DISABLED=true` turns it off.
 *
 * A record: event name `loop_guardian.incident` (the record's `eventName` and its `event.name`
 * attribute, for backends that read only attributes), severity WARN for a warning and ERROR for a
 * halt, the body the lead finding's message, and attributes: `loop_guardian.incident.id`,
 * `loop_guardian.incident.state` (`opened` | `grew` | `ended`), `loop_guardian.action`,
 * `loop_guardian.signal` (the lead's), `loop_guardian.signals`, `loop_guardian.count`,
 * `loop_guardian.recommendation`, `loop_guardian.workspace`, and the GenAI semantic conventions'
 * `gen_ai.conversation.id` (the session) and `gen_ai.agent.name` (the agent). The resource:
 * `service.name` `loop-guardian`, `service.version`, `host.name`, and `loop_guardian.source`
 * (`cli`, `extension`, `hook`). The gauge: `loop_guardian.loops.active`, per `gen_ai.agent.name`.
 */

export type IncidentState = 'opened' | 'grew' | 'ended';


export interface ExporterOptions {
  readonly source: 'cli' | 'extension' | 'hook';
  readonly workspace: string;
  readonly env?: NodeJS.ProcessEnv;
  /** What an earlier run sent (a one-shot command's memory): those incidents are not new. */
  readonly seen?: Readonly<Record<string, Seen>>;
}

export class IncidentExporter {
  private readonly logs: LoggerProvider;
  private readonly meters: MeterProvider;
  private readonly logger;
  private readonly seen = new Map<string, Seen>();
  /** Records sent, by state (for the caller's summary and the tests). */
  readonly sent: Record<IncidentState, number> = { opened: 0, grew: 0, ended: 0 };

  constructor(private readonly opts: ExporterOptions) {
    for (const [id, s] of Object.entries(opts.seen ?? {})) if (typeof s?.count === 'number' && typeof s.action === 'string' && typeof s.agent === 'string') this.seen.set(id, s);
    const resource = resourceFromAttributes({ 'service.name': 'loop-guardian', 'service.version': VERSION, 'host.name': os.hostname(), 'loop_guardian.source': opts.source });
    const to = exportTargets(opts.env ?? process.env);
    this.logs = new LoggerProvider({ resource, processors: to.logs ? [new BatchLogRecordProcessor({ exporter: new OTLPLogExporter(), scheduledDelayMillis: 1000 })] : [] });
    this.logger = this.logs.getLogger('loop-guardian', VERSION);
    this.meters = new MeterProvider({ resource, readers: to.metrics ? [new PeriodicExportingMetricReader({ exporter: new OTLPMetricExporter(), exportIntervalMillis: 10_000 })] : [] });
    const gauge = this.meters.getMeter('loop-guardian', VERSION).createObservableGauge('loop_guardian.loops.active', { description: 'Loops going on, per agent', unit: '{loop}' });
    gauge.addCallback((result) => {
      const perAgent = new Map<string, number>();
      for (const s of this.seen.values()) perAgent.set(s.agent, (perAgent.get(s.agent) ?? 0) + 1);
      for (const [agent, n] of perAgent) result.observe(n, { 'gen_ai.agent.name': agent });
    });
  }

  /**
   * The incidents going on now (all of them: one missing since the last update has ended): each
   * new one, each that grew and each that ended is sent as a record.
   */
  update(incidents: readonly Incident[]): void {
    const now = new Set<string>();
    for (const i of incidents) {
      now.add(i.id);
      const before = this.seen.get(i.id);
      const count = i.lead.count;
      const state: IncidentState | undefined = before === undefined ? 'opened' : count > before.count || (before.action === 'warn' && i.action === 'halt') ? 'grew' : undefined;
      this.seen.set(i.id, { action: i.action, count, agent: i.agent ?? 'unknown' });
      if (state !== undefined) this.emit(i, state);
    }
    for (const [id, s] of [...this.seen]) {
      if (now.has(id)) continue;
      this.seen.delete(id);
      this.send('ended', { id, action: s.action, count: s.count, agent: s.agent }, `Loop ${id} is over`, 'INFO');
    }
  }

  private emit(i: Incident, state: IncidentState): void {
    this.send(state, { id: i.id, action: i.action, count: i.lead.count, ...(i.agent !== undefined ? { agent: i.agent } : {}) }, i.lead.message, i.action === 'halt' ? 'ERROR' : 'WARN', {
      'loop_guardian.signal': i.lead.signal,
      'loop_guardian.signals': [...new Set(i.findings.map((f) => f.signal))],
      'loop_guardian.recommendation': i.lead.recommendation,
      'gen_ai.conversation.id': i.session,
      ...(i.task !== undefined ? { 'loop_guardian.task': i.task } : {}),
    });
  }

  /** One record of an incident: what every state says of it, and what only a going one says (`more`). */
  private send(state: IncidentState, what: { id: string; action: string; count: number; agent?: string }, body: string, severity: 'INFO' | 'WARN' | 'ERROR', more: Record<string, string | string[]> = {}): void {
    this.sent[state]++;
    this.logger.emit({
      eventName: 'loop_guardian.incident',
      severityNumber: SeverityNumber[severity],
      severityText: severity,
      body,
      attributes: {
        'event.name': 'loop_guardian.incident',
        'loop_guardian.incident.id': what.id,
        'loop_guardian.incident.state': state,
        'loop_guardian.action': what.action,
        'loop_guardian.count': what.count,
        'loop_guardian.workspace': this.opts.workspace,
        ...(what.agent !== undefined ? { 'gen_ai.agent.name': what.agent } : {}),
        ...more,
      },
    });
  }

  /** What has been sent of the incidents going on, for the next run of a one-shot command. */
  seenState(): Record<string, Seen> {
    return Object.fromEntries(this.seen);
  }

  /** Sends what is waiting, and ends (the end of a one-shot command, or of the editor). */
  async shutdown(): Promise<void> {
    await Promise.allSettled([this.logs.shutdown(), this.meters.shutdown()]);
  }
}
