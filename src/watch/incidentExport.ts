import * as http from 'node:http';
import * as https from 'node:https';
import * as os from 'node:os';
import type { Incident } from '../core/incidents';
import { exportTargets, type Seen } from './otelConfig';

declare const __VERSION__: string | undefined;
const VERSION = typeof __VERSION__ === 'string' ? __VERSION__ : 'dev';

export { exportConfigured, type Seen } from './otelConfig';

/*
 * Loops published as OpenTelemetry, so that a team's backend (Grafana, Datadog, Elastic, through
 * their Collector) shows every machine's: each incident as a log record when it opens, grows (more
 * repeats, or a more severe action) and ends, and a gauge of the loops going on per agent. Sent as
 * OTLP/HTTP JSON to the standard variables' endpoints (`OTEL_EXPORTER_OTLP_ENDPOINT` with
 * `/v1/logs` and `/v1/metrics` added, or `OTEL_EXPORTER_OTLP_LOGS_ENDPOINT` /
 * `…_METRICS_ENDPOINT` as given; `…_HEADERS`, `…_TIMEOUT`). Nothing is sent unless one of the
 * endpoints is set, and `OTEL_SDK_DISABLED=true` turns it off.
 *
 * Nothing is lost to a broken network (issue 32): a record is queued (`pending`, kept by the caller
 * in the workspace's state) until the endpoint accepts it — a 2xx answer — and only then counted
 * as sent; the queue is bounded (the oldest dropped, and counted); a send waits at most the time
 * it is given (a one-shot command gives 2 s in all), and a later `flush` sends what is waiting.
 *
 * A record: event name `loop_guardian.incident` (the record's `eventName` and its `event.name`
 * attribute, for backends that read only attributes), severity WARN for a warning and ERROR for a
 * halt, the body the lead finding's message, and attributes: `loop_guardian.incident.id`,
 * `loop_guardian.incident.state` (`opened` | `grew` | `ended`), `loop_guardian.action`,
 * `loop_guardian.signal` (the lead's), `loop_guardian.signals`, `loop_guardian.count`,
 * `loop_guardian.recommendation`, `loop_guardian.workspace`, and the GenAI semantic conventions'
 * `gen_ai.conversation.id` (the session) and `gen_ai.agent.name` (the agent). The resource:
 * `service.name` `loop-guardian`, `service.version`, `host.name`, and `loop_guardian.source`
 * (`cli`, `extension`, `hook`). The gauge: `loop_guardian.loops.active`, per `gen_ai.agent.name`,
 * sent with each flush.
 */

export type IncidentState = 'opened' | 'grew' | 'ended';

/** A record waiting to be accepted: its state (for the count), and the record in the OTLP JSON encoding. */
export interface QueuedRecord {
  readonly state: IncidentState;
  readonly record: Record<string, unknown>;
}

/** The most records kept waiting; past it, the oldest go. */
export const MAX_QUEUED = 1000;

export interface ExporterOptions {
  readonly source: 'cli' | 'extension' | 'hook';
  readonly workspace: string;
  readonly env?: NodeJS.ProcessEnv;
  /** What an earlier run sent (a one-shot command's memory): those incidents are not new. */
  readonly seen?: Readonly<Record<string, Seen>>;
  /** Records an earlier run could not send: sent first. */
  readonly queued?: readonly QueuedRecord[];
}

/** The outcome of a flush: how many records the endpoint accepted, or why none was. */
export interface FlushResult {
  readonly accepted: number;
  readonly error?: string;
}

type AnyValue = { stringValue: string } | { intValue: number } | { arrayValue: { values: AnyValue[] } };

function anyValue(v: string | number | readonly string[]): AnyValue {
  if (typeof v === 'number') return { intValue: Math.trunc(v) };
  if (typeof v === 'string') return { stringValue: v };
  return { arrayValue: { values: v.map((x) => ({ stringValue: x })) } };
}

function attributes(o: Record<string, string | number | readonly string[]>): { key: string; value: AnyValue }[] {
  return Object.entries(o).map(([key, v]) => ({ key, value: anyValue(v) }));
}

const nanos = (ms: number) => `${BigInt(Math.trunc(ms)) * 1_000_000n}`;

/** `k=v,k2=v2` (values percent-encoded), as the OTLP exporters' `…_HEADERS` variables say them. */
function parseHeaders(text: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (text ?? '').split(',')) {
    const i = part.indexOf('=');
    if (i <= 0) continue;
    try {
      out[decodeURIComponent(part.slice(0, i).trim())] = decodeURIComponent(part.slice(i + 1).trim());
    } catch {
      // Not percent-encoded properly: left out.
    }
  }
  return out;
}

function signalUrl(env: NodeJS.ProcessEnv, signal: 'logs' | 'metrics'): string | undefined {
  const own = (signal === 'logs' ? env.OTEL_EXPORTER_OTLP_LOGS_ENDPOINT : env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT)?.trim();
  if (own) return own;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (!base) return undefined;
  let end = base.length;
  while (end > 0 && base[end - 1] === '/') end--;
  return `${base.slice(0, end)}/v1/${signal}`;
}

/** POSTs a JSON body; resolves with the status, or the reason there is none, within `timeoutMs`. */
function post(url: string, body: unknown, headers: Record<string, string>, timeoutMs: number): Promise<{ status?: number; error?: string }> {
  return new Promise((resolve) => {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return resolve({ error: `${url}: not a URL` });
    }
    const data = Buffer.from(JSON.stringify(body));
    const lib = u.protocol === 'https:' ? https : http;
    let settled = false;
    const done = (r: { status?: number; error?: string }) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      resolve(r);
    };
    // No connection is kept: nothing of a send outlives it (a one-shot command exits when it is done).
    const req = lib.request(u, { method: 'POST', agent: false, headers: { ...headers, 'Content-Type': 'application/json', 'Content-Length': data.byteLength, Connection: 'close' } }, (res) => {
      res.resume();
      res.on('end', () => done({ status: res.statusCode ?? 0 }));
      res.on('error', () => done({ status: res.statusCode ?? 0 }));
    });
    const timer = setTimeout(() => done({ error: `no answer within ${timeoutMs} ms` }), Math.max(1, timeoutMs));
    req.on('error', (err: NodeJS.ErrnoException) => done({ error: err.code ?? err.message }));
    req.end(data);
  });
}

export class IncidentExporter {
  private readonly seen = new Map<string, Seen>();
  private queue: QueuedRecord[] = [];
  private readonly env: NodeJS.ProcessEnv;
  private readonly resource: { key: string; value: AnyValue }[];
  /** Records the endpoint accepted, by state (for the caller's summary and the tests). */
  readonly sent: Record<IncidentState, number> = { opened: 0, grew: 0, ended: 0 };
  /** Records made by `update`, by state. */
  readonly made: Record<IncidentState, number> = { opened: 0, grew: 0, ended: 0 };
  /** Records dropped from a full queue. */
  dropped = 0;

  constructor(private readonly opts: ExporterOptions) {
    for (const [id, s] of Object.entries(opts.seen ?? {})) if (typeof s?.count === 'number' && typeof s.action === 'string' && typeof s.agent === 'string') this.seen.set(id, s);
    this.adopt(opts.queued ?? []);
    this.env = opts.env ?? process.env;
    this.resource = attributes({ 'service.name': 'loop-guardian', 'service.version': VERSION, 'host.name': os.hostname(), 'loop_guardian.source': opts.source });
  }

  /**
   * The incidents going on now (all of them: one missing since the last update has ended): each
   * new one, each that grew and each that ended is queued as a record, to be sent by `flush`.
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
      this.record('ended', { id, action: s.action, count: s.count, agent: s.agent }, `Loop ${id} is over`, 'INFO');
    }
  }

  private emit(i: Incident, state: IncidentState): void {
    this.record(state, { id: i.id, action: i.action, count: i.lead.count, ...(i.agent !== undefined ? { agent: i.agent } : {}) }, i.lead.message, i.action === 'halt' ? 'ERROR' : 'WARN', {
      'loop_guardian.signal': i.lead.signal,
      'loop_guardian.signals': [...new Set(i.findings.map((f) => f.signal))],
      'loop_guardian.recommendation': i.lead.recommendation,
      'gen_ai.conversation.id': i.session,
      ...(i.task !== undefined ? { 'loop_guardian.task': i.task } : {}),
    });
  }

  /** One record of an incident: what every state says of it, and what only a going one says (`more`). */
  private record(state: IncidentState, what: { id: string; action: string; count: number; agent?: string }, body: string, severity: 'INFO' | 'WARN' | 'ERROR', more: Record<string, string | string[]> = {}): void {
    if (!exportTargets(this.env).logs) return;
    this.made[state]++;
    const now = Date.now();
    this.enqueue({
      state,
      record: {
        timeUnixNano: nanos(now),
        observedTimeUnixNano: nanos(now),
        eventName: 'loop_guardian.incident',
        severityNumber: severity === 'INFO' ? 9 : severity === 'WARN' ? 13 : 17,
        severityText: severity,
        body: { stringValue: body },
        attributes: attributes({
          'event.name': 'loop_guardian.incident',
          'loop_guardian.incident.id': what.id,
          'loop_guardian.incident.state': state,
          'loop_guardian.action': what.action,
          'loop_guardian.count': what.count,
          'loop_guardian.workspace': this.opts.workspace,
          ...(what.agent !== undefined ? { 'gen_ai.agent.name': what.agent } : {}),
          ...more,
        }),
      },
    });
  }

  private enqueue(q: QueuedRecord): void {
    this.queue.push(q);
    if (this.queue.length > MAX_QUEUED) {
      this.dropped += this.queue.length - MAX_QUEUED;
      this.queue = this.queue.slice(-MAX_QUEUED);
    }
  }

  /** What has been sent of the incidents going on, for the next run of a one-shot command. */
  seenState(): Record<string, Seen> {
    return Object.fromEntries(this.seen);
  }

  /** Records kept waiting elsewhere (a workspace's queue), put before this one's. */
  adopt(records: readonly QueuedRecord[]): void {
    const own = this.queue;
    this.queue = [];
    for (const q of [...records, ...own]) if (q !== null && typeof q === 'object' && typeof q.state === 'string' && typeof q.record === 'object' && q.record !== null) this.enqueue(q);
  }

  /** The records not yet accepted, handed over (to be kept elsewhere): this one's queue is left empty. */
  takePending(): readonly QueuedRecord[] {
    const out = this.queue;
    this.queue = [];
    return out;
  }

  /** The records not yet accepted, oldest first (to be kept for the next run). */
  pending(): readonly QueuedRecord[] {
    return this.queue;
  }

  /**
   * Sends what is waiting (the records, and the gauge), waiting at most `timeoutMs`: the records
   * leave the queue only when the endpoint accepts them (2xx).
   */
  async flush(timeoutMs: number): Promise<FlushResult> {
    const to = exportTargets(this.env);
    const configured = Number(this.env.OTEL_EXPORTER_OTLP_TIMEOUT);
    const wait = Math.min(timeoutMs, Number.isFinite(configured) && configured > 0 ? configured : timeoutMs);
    const headers = (signal: 'LOGS' | 'METRICS') => ({ ...parseHeaders(this.env.OTEL_EXPORTER_OTLP_HEADERS), ...parseHeaders(this.env[`OTEL_EXPORTER_OTLP_${signal}_HEADERS`]) });
    const scope = { name: 'loop-guardian', version: VERSION };
    const batch = this.queue;
    const logsUrl = signalUrl(this.env, 'logs');
    const metricsUrl = signalUrl(this.env, 'metrics');
    const logs = to.logs && batch.length > 0 && logsUrl !== undefined
      ? post(logsUrl, { resourceLogs: [{ resource: { attributes: this.resource }, scopeLogs: [{ scope, logRecords: batch.map((q) => q.record) }] }] }, headers('LOGS'), wait)
      : undefined;
    const metrics = to.metrics && metricsUrl !== undefined ? post(metricsUrl, this.gauge(scope), headers('METRICS'), wait) : undefined;
    const [sent] = await Promise.all([logs, metrics]);
    if (sent === undefined) return { accepted: 0 };
    if (sent.status === undefined || sent.status < 200 || sent.status >= 300) return { accepted: 0, error: sent.error ?? `HTTP ${sent.status}` };
    // Accepted: what was sent leaves the queue (records queued meanwhile stay).
    this.queue = this.queue.filter((q) => !batch.includes(q));
    for (const q of batch) this.sent[q.state]++;
    return { accepted: batch.length };
  }

  /** The active-loops gauge now, in the OTLP JSON encoding of metrics. */
  private gauge(scope: { name: string; version: string }): unknown {
    const perAgent = new Map<string, number>();
    for (const s of this.seen.values()) perAgent.set(s.agent, (perAgent.get(s.agent) ?? 0) + 1);
    const time = nanos(Date.now());
    const dataPoints = [...perAgent].map(([agent, n]) => ({ asInt: String(n), timeUnixNano: time, attributes: attributes({ 'gen_ai.agent.name': agent }) }));
    return { resourceMetrics: [{ resource: { attributes: this.resource }, scopeMetrics: [{ scope, metrics: [{ name: 'loop_guardian.loops.active', description: 'Loops going on, per agent', unit: '{loop}', gauge: { dataPoints } }] }] }] };
  }
}
