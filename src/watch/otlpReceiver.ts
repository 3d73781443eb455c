import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import * as zlib from 'node:zlib';
import { AGENTS, type Agent } from '../agents';
import type { TelemetryMapping } from '../agents/agent';
import type { GuardianConfig } from '../core/config';
import { Engine } from '../core/engine';
import type { GuardianEvent, LocatedEvent } from '../core/events';
import type { Finding } from '../core/finding';
import type { Workspace } from '../state/workspace';
import { attrText, decodeLogsJson, NotAnExportRequest, type TelemetryRecord } from '../agents/otlpLogs';
import { isoTime } from '../agents/transcript';
import { decodeLogsProtobuf, encodeAnswer } from './otlpProtobuf';

/*
 * An OTLP/HTTP logs receiver (the OTLP specification, "OTLP/HTTP": `POST /v1/logs`, a request
 * body in the binary protobuf or the JSON encoding, gzip allowed): the agents' OpenTelemetry
 * events, mapped by each agent's `telemetry` (src/agents/<agent>/telemetry.ts) to the guardian's
 * events per session, run through every signal. Its answers are the specification's:
 * - 200 with an empty `ExportLogsServiceResponse` (`{}`), or `partialSuccess` with the number of
 *   records rejected and why (records that are not records; records of no agent it knows, or of
 *   events the signals do not read, are accepted and passed over);
 * - 400 with a `google.rpc.Status` (`{"code": 3, "message": …}`, INVALID_ARGUMENT) for a body that
 *   is not an export request (not JSON, not gzip, not an object); not retryable;
 * - 413 for a body over the limit (default 20 MiB, the specification's suggestion), 415 for a
 *   media type or encoding it does not read, 404 for another path, 405 for another method;
 * each in the request's encoding (JSON, or protobuf: ./otlpProtobuf.ts).
 * Nothing a client sends stops it: every request is answered, and a failure inside is a 500.
 * Memory is bounded: the engine keeps a bounded number of sessions (the oldest goes), a request
 * is read up to the limit, and inflated up to it.
 */

export const DEFAULT_MAX_BODY = 20 * 1024 * 1024;

/** The most origins (service and host) whose events are numbered apart; past it, the oldest starts over. */
const MAX_ORIGINS = 10_000;

const gunzip = promisify(zlib.gunzip);

/** The URL a receiver listening at this address takes logs at. */
export function logsUrl(address: AddressInfo): string {
  return `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}/v1/logs`;
}

/** A name as a file-name part: letters, digits, `.`, `_` and `-`. */
function fileSafe(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 80) || '_';
}

/**
 * Where a receiver keeps what it maps, for a workspace's guardian to read like any event log:
 * `.tmp/otlp/logs/otlp-<service>-<host>.jsonl`, each session's batch appended in one write, rotated
 * past `rotateOver` bytes. `onError` is told what could not be written.
 */
export function workspaceEvents(ws: Workspace, rotateOver: number, onError: (rel: string, err: Error) => void): NonNullable<ReceiverOptions['onEvents']> {
  return (origin, events) => {
    const rel = `.tmp/otlp/logs/otlp-${fileSafe(origin.service)}-${fileSafe(origin.host || 'local')}.jsonl`;
    try {
      ws.appendSync(rel, events.map((e) => `${JSON.stringify(e)}\n`).join(''), { rotateOver });
    } catch (err) {
      onError(rel, err as Error);
    }
  };
}

export interface ReceiverOptions {
  /**
   * The signals run here, with this configuration, each finding told as it is raised (new, or more
   * severe). Without it none runs: the events go to `onEvents` only (the editor's receiver, whose
   * folder guardian reads them and judges them).
   */
  readonly judge?: { readonly config: GuardianConfig; readonly onFinding: (f: Finding) => void };
  /** Each batch of events of one session, as mapped (to be written where the editor reads them). */
  readonly onEvents?: (origin: Origin, events: readonly GuardianEvent[]) => void;
  readonly maxBodyBytes?: number;
}

/** Where a session's events come from: the agent, and the resource's service and host. */
export interface Origin {
  readonly agent: Agent;
  readonly service: string;
  readonly host: string;
  readonly session: string;
}

export interface ReceiverStats {
  requests: number;
  records: number;
  events: number;
  rejected: number;
  refused: number;
}

type Answer = { status: number; body: unknown };

function status(code: number, grpc: number, message: string): Answer {
  return { status: code, body: { code: grpc, message } };
}

const TELEMETRY_AGENTS = AGENTS.filter((a): a is Agent & { telemetry: TelemetryMapping } => a.telemetry !== undefined);

export class OtlpReceiver {
  readonly stats: ReceiverStats = { requests: 0, records: 0, events: 0, rejected: 0, refused: 0 };
  private readonly engine: Engine | undefined;
  private readonly maxBody: number;
  private server: http.Server | undefined;
  /** Events numbered per origin file, for the findings' evidence. */
  private readonly counters = new Map<string, number>();

  constructor(private readonly opts: ReceiverOptions) {
    if (opts.judge !== undefined) this.engine = new Engine(opts.judge.config);
    this.maxBody = opts.maxBodyBytes ?? DEFAULT_MAX_BODY;
  }

  /** Listens; resolves with the address (port 0: one the system picked). */
  listen(host: string, port: number): Promise<AddressInfo> {
    const server = http.createServer((req, res) => void this.handle(req, res));
    // A client that sends nothing for long is let go; headers within 10 s.
    server.requestTimeout = 60_000;
    server.headersTimeout = 10_000;
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve(server.address() as AddressInfo);
      });
    });
  }

  close(): Promise<void> {
    const server = this.server;
    if (server === undefined) return Promise.resolve();
    return new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    this.stats.requests++;
    const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    // Answered in the request's encoding (the specification: the response's Content-Type is the request's).
    const protobuf = type === 'application/x-protobuf';
    let answer: Answer;
    try {
      answer = await this.answer(req, type);
    } catch (err) {
      answer = status(500, 13, `internal error: ${(err as Error).message}`);
    }
    if (answer.status >= 400) this.stats.refused++;
    const body = protobuf ? Buffer.from(encodeAnswer(answer.body, answer.status >= 400)) : Buffer.from(JSON.stringify(answer.body));
    if (!res.headersSent) res.writeHead(answer.status, { 'Content-Type': protobuf ? 'application/x-protobuf' : 'application/json', 'Content-Length': body.byteLength, ...(answer.status === 413 || answer.status >= 500 ? { Connection: 'close' } : {}) });
    res.end(body);
    // What was not read of a refused body is dropped, not left to stall the connection.
    if (!req.complete) req.resume();
  }

  /** `type`: the request's media type. */
  private async answer(req: http.IncomingMessage, type: string): Promise<Answer> {
    const url = (req.url ?? '/').split('?')[0];
    if (url !== '/v1/logs') return status(404, 5, `${url}: not found (this receiver takes logs: POST /v1/logs)`);
    if (req.method !== 'POST') return status(405, 12, `${req.method ?? '?'}: only POST is accepted`);
    const protobuf = type === 'application/x-protobuf';
    if (!protobuf && type !== 'application/json') return status(415, 3, `${type || 'no content type'}: not read (application/json or application/x-protobuf)`);
    const encoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase();
    if (encoding !== 'identity' && encoding !== 'gzip') return status(415, 3, `content encoding ${encoding}: not read (gzip or none)`);
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > this.maxBody) return status(413, 8, `${declared} bytes: more than the ${this.maxBody} bytes a request may have`);
    const raw = await readBody(req, this.maxBody);
    if (raw === undefined) return status(413, 8, `more than the ${this.maxBody} bytes a request may have`);
    let body: Buffer;
    try {
      // Inflated off the event loop: a large body does not hold up the other requests.
      body = encoding === 'gzip' ? await gunzip(raw, { maxOutputLength: this.maxBody }) : raw;
    } catch (err) {
      const tooLarge = (err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' || /maxOutputLength|buffer/i.test((err as Error).message);
      return tooLarge ? status(413, 8, `inflated, more than the ${this.maxBody} bytes a request may have`) : status(400, 3, `not gzip: ${(err as Error).message}`);
    }
    let value: unknown;
    try {
      value = protobuf ? decodeLogsProtobuf(body) : JSON.parse(body.toString('utf8'));
    } catch (err) {
      return status(400, 3, `${protobuf ? 'not an export request in protobuf' : 'not JSON'}: ${(err as Error).message}`);
    }
    let decoded;
    try {
      decoded = decodeLogsJson(value);
    } catch (err) {
      if (err instanceof NotAnExportRequest) return status(400, 3, `not a logs export request: ${err.message}`);
      throw err;
    }
    this.stats.records += decoded.records.length;
    this.stats.rejected += decoded.rejected;
    this.take(decoded.records);
    return decoded.rejected > 0 ? { status: 200, body: { partialSuccess: { rejectedLogRecords: String(decoded.rejected), errorMessage: decoded.reason ?? 'records rejected' } } } : { status: 200, body: {} };
  }

  /** A batch's records: grouped by session, in each agent's order, through the engine. */
  private take(records: readonly TelemetryRecord[]): void {
    const bySession = new Map<string, { origin: Origin; mapping: TelemetryMapping; records: TelemetryRecord[] }>();
    for (const r of records) {
      const agent = TELEMETRY_AGENTS.find((a) => a.telemetry.owns(r));
      if (agent === undefined) continue;
      const session = agent.telemetry.session(r);
      if (session === undefined) continue;
      const service = typeof r.resource['service.name'] === 'string' ? r.resource['service.name'] : agent.id;
      const host = typeof r.resource['host.name'] === 'string' ? r.resource['host.name'] : '';
      const key = `${service}\u0000${host}\u0000${session}`;
      let group = bySession.get(key);
      if (group === undefined) {
        group = { origin: { agent, service, host, session }, mapping: agent.telemetry, records: [] };
        bySession.set(key, group);
      }
      group.records.push(r);
    }
    for (const { origin, mapping, records: list } of bySession.values()) {
      const seq = mapping.sequence;
      if (seq !== undefined) list.sort((a, b) => (seq(a) ?? 0) - (seq(b) ?? 0));
      const file = `otlp:${origin.service}${origin.host !== '' ? `@${origin.host}` : ''}`;
      const events: GuardianEvent[] = [];
      for (const r of list) {
        const line = seq?.(r) ?? 0;
        // The record's time: the agents' `event.timestamp` (all three send one), else the record's own.
        const ts = isoTime(attrText(r.attributes['event.timestamp']) ?? r.timeMs);
        for (const event of mapping.events(r, { session: origin.session, agent: origin.agent.eventAgent, ...(ts !== undefined ? { ts } : {}) })) {
          events.push(event);
          this.stats.events++;
          if (this.engine === undefined) continue;
          const n = (this.counters.get(file) ?? 0) + 1;
          // One counter per origin (service and host): bounded like the sessions, however many hosts come and go.
          if (!this.counters.has(file) && this.counters.size >= MAX_ORIGINS) this.counters.delete(this.counters.keys().next().value as string);
          this.counters.set(file, n);
          const located: LocatedEvent = { event, ref: { file, line, event: n } };
          for (const f of this.engine.push(located)) this.opts.judge?.onFinding(f);
        }
      }
      if (events.length > 0) this.opts.onEvents?.(origin, events);
    }
  }
}

/** A request's body, or undefined when it is longer than `max`. */
function readBody(req: http.IncomingMessage, max: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (chunk: Buffer) => {
      if (over) return;
      size += chunk.length;
      if (size > max) {
        over = true;
        chunks.length = 0;
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!over) resolve(Buffer.concat(chunks));
    });
    req.on('error', reject);
  });
}
