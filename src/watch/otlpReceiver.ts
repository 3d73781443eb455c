import * as crypto from 'node:crypto';
import * as http from 'node:http';
import * as net from 'node:net';
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
import { type EventFileBounds, ReceivedEventFiles } from '../state/receivedEventFiles';
import { boundedText } from '../core/redact';
import { attrText, type DecodedLogs, LogsRead, NotAnExportRequest, readLogsJson, type TelemetryRecord, type TextBound } from '../agents/otlpLogs';
import { type Linked, LinkedOrder } from '../core/linkedOrder';
import { jsonLength } from '../core/json';
import { isoTime } from '../agents/transcript';
import type { RecordScope } from '../agents/eventBuilders';
import { decodeLogsProtobufRecords, encodeAnswer, TooManyEntries, warmUp } from './otlpProtobuf';

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
 * - 200 for `POST /v1/metrics` and `/v1/traces`, whose bodies are dropped unread: an exporter that
 *   sends every signal to one endpoint is not made to fail (and lose its logs) on the two it ignores;
 * each in the request's encoding (JSON, or protobuf: ./otlpProtobuf.ts).
 * Nothing a client sends stops it: every request is answered, and a failure inside is a 500.
 * Memory is bounded: the engine keeps a bounded number of sessions (the oldest goes), a request
 * is read up to the limit, and inflated up to it.
 */

/**
 * What one receiver may take, and hold: every bound a hostile client meets (issue 32). Memory: at
 * most `maxInFlightBytes` of bodies read or inflated at once (a request past it is answered 503, to
 * be retried), each value of a record at most a bounded text (src/core/redact.ts) as soon as it is
 * decoded, and the sessions' state at most `maxSessionBytes`; with the code and the engine, the
 * process stays under MEMORY_BUDGET_BYTES. Time: a request is decoded entry by entry, yielding to
 * the others every SLICE_MS. Connections: at most `maxConnections`, headers within
 * `headersTimeoutMs`, a whole request within `requestTimeoutMs`, an idle connection closed after
 * `idleTimeoutMs`.
 */
export interface ReceiverLimits {
  /** A request's body as sent (413 past it). */
  readonly maxBodyBytes: number;
  /** A request's body once inflated (413 past it). */
  readonly maxInflatedBytes: number;
  /** Log records in one request (413 past it). */
  readonly maxRecords: number;
  /** Entries of any kind (resources, scopes, records, attributes, nested values) in one request (413 past it). */
  readonly maxEntries: number;
  /** Bodies held at once, read and inflated, over every request (503 past it). */
  readonly maxInFlightBytes: number;
  /** What the sessions' state may take, counted by the bytes of their events; past it, the oldest session goes. */
  readonly maxSessionBytes: number;
  readonly maxConnections: number;
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly idleTimeoutMs: number;
}

/** The memory the receiver's process is meant to stay under, whatever it is sent (the reliability tests hold it). */
export const MEMORY_BUDGET_BYTES = 256 * 1024 * 1024;

export const DEFAULT_LIMITS: ReceiverLimits = {
  maxBodyBytes: 4 * 1024 * 1024,
  maxInflatedBytes: 4 * 1024 * 1024,
  maxRecords: 10_000,
  maxEntries: 250_000,
  maxInFlightBytes: 40 * 1024 * 1024,
  // Counted as the events' JSON; the engine keeps about three times that (measured: 8,000 sessions of 3.4 KB events, 81 MB live).
  maxSessionBytes: 40 * 1024 * 1024,
  maxConnections: 256,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  idleTimeoutMs: 15_000,
};

/** A request this small (its body, or 16 times it inflated) may use SMALL_RESERVE, which larger ones leave free. */
const SMALL_REQUEST = 64 * 1024;
const SMALL_RESERVE = 8 * 1024 * 1024;

/** The most a session's events count for: the engine keeps windows of them, not all. */
const SESSION_WINDOW_BYTES = 16 * 1024;

/** The longest a request's decoding runs before it lets the others in. */
const SLICE_MS = 5;
/** The OTLP/HTTP paths of the signals this receiver does not read (the specification's defaults). */
const OTHER_SIGNALS = new Set(['/v1/metrics', '/v1/traces']);

/** How often sessions forgotten are said, at most. */
const DROPPED_SAID_EVERY_MS = 60_000;

/** The most origins (service and host) whose events are numbered apart; past it, the oldest starts over. */
const MAX_ORIGINS = 10_000;

const gunzip = promisify(zlib.gunzip);

/** A gzipped body this short is inflated at once, up to INFLATED_AT_ONCE (about a millisecond's work). */
const GZIPPED_AT_ONCE = 64 * 1024;
const INFLATED_AT_ONCE = 1024 * 1024;

/**
 * A gzipped body inflated, at most `room` bytes (past it: ERR_BUFFER_TOO_LARGE). An exporter's
 * usual batch at once: off the event loop, its inflating cost more in the callbacks that carried
 * it a chunk at a time than the work itself. A large one, or a small one that inflates past
 * INFLATED_AT_ONCE, off the event loop: it does not hold up the other requests.
 */
async function inflated(raw: Buffer, room: number): Promise<Buffer> {
  if (raw.length <= GZIPPED_AT_ONCE) {
    try {
      return zlib.gunzipSync(raw, { maxOutputLength: Math.min(room, INFLATED_AT_ONCE) });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ERR_BUFFER_TOO_LARGE' || room <= INFLATED_AT_ONCE) throw err;
    }
  }
  return gunzip(raw, { maxOutputLength: room });
}

/** The URL a receiver listening at this address takes logs at. */
export function logsUrl(address: AddressInfo): string {
  return `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}/v1/logs`;
}

/** Whether an address is the machine's own (127.0.0.0/8, ::1, localhost). */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || (net.isIPv4(host) && host.startsWith('127.')) || host === '::1';
}

/**
 * The session id a received session is known by: the agent's id under its origin's name
 * (`otlp/<service>@<host>/<id>`), so that events a client sends can never join a session the
 * guardian reads from this machine's hooks and transcripts, whatever id it claims.
 */
export function receivedSession(service: string, host: string, session: string): string {
  return `otlp/${service}@${host || 'local'}/${session}`;
}

/**
 * Where a receiver keeps what it maps, for a workspace's guardian to read like any event log:
 * `.tmp/otlp/logs/otlp-<service>-<host>.jsonl`, each session's batch appended in one write, bounded
 * per origin and in total, a bounded number of files (src/state/receivedEventFiles.ts). `onError`
 * is told what could not be written, `onDrop` what was dropped to stay within the bounds.
 */
export function workspaceEvents(ws: Workspace, onError: (rel: string, err: Error) => void, onDrop: (what: string) => void = () => undefined, bounds: Partial<EventFileBounds> = {}): NonNullable<ReceiverOptions['onEvents']> {
  const files = new ReceivedEventFiles(ws, bounds, onDrop);
  return (origin, _events, lines) => {
    try {
      files.append(origin.service, origin.host, lines);
    } catch (err) {
      onError(files.dir, err as Error);
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
  /**
   * Each batch of events of one session, as mapped (to be written where the editor reads them), and
   * the same as JSON lines (each event's `JSON.stringify` and a newline: written once, here).
   */
  readonly onEvents?: (origin: Origin, events: readonly GuardianEvent[], lines: string) => void;
  /** A shared secret: each request must carry `Authorization: Bearer <token>` (401 otherwise). */
  readonly token?: string;
  /** Browser origins (`Origin` header) let in; by default a request from a web page is refused (403). */
  readonly allowedOrigins?: readonly string[];
  /** Told what the receiver dropped to stay within its bounds: the first session forgotten, then at most once a minute how many since. */
  readonly onDrop?: (what: string) => void;
  readonly limits?: Partial<ReceiverLimits>;
}

/** Where a session's events come from: the agent, and the resource's service and host. */
export interface Origin {
  readonly agent: Agent;
  readonly service: string;
  readonly host: string;
  /** The session as the guardian knows it (receivedSession: namespaced by origin). */
  readonly session: string;
}

export interface ReceiverStats {
  requests: number;
  records: number;
  events: number;
  rejected: number;
  refused: number;
  /** Sessions forgotten to keep their state within the bytes allowed. */
  droppedSessions: number;
  /** Metrics and traces requests, accepted and dropped unread. */
  dropped: number;
}

type Answer = { status: number; body: unknown; headers?: Record<string, string> };

function status(code: number, grpc: number, message: string, headers?: Record<string, string>): Answer {
  return { status: code, body: { code: grpc, message }, ...(headers !== undefined ? { headers } : {}) };
}

/** Whether the request carries the token (compared in constant time, whatever its length). */
function authorized(header: string | undefined, token: string): boolean {
  const h = header ?? '';
  if (h.slice(0, 7).toLowerCase() !== 'bearer ') return false;
  const digest = (t: string) => crypto.createHash('sha256').update(t).digest();
  return crypto.timingSafeEqual(digest(h.slice(7).trim()), digest(token));
}

/** The objects and lists a JSON text can hold at most (its `{` and `[`), counted without parsing it, a slice at a time. */
async function jsonEntries(body: Buffer, pause: () => Promise<void> | undefined): Promise<number> {
  let n = 0;
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c === 0x7b || c === 0x5b) n++;
    if ((i & 0xffff) === 0) await pause();
  }
  return n;
}

const TELEMETRY_AGENTS = AGENTS.filter((a): a is Agent & { telemetry: TelemetryMapping } => a.telemetry !== undefined);

/** The agent whose telemetry a record is. */
function telemetryAgent(r: TelemetryRecord): (typeof TELEMETRY_AGENTS)[number] | undefined {
  for (const a of TELEMETRY_AGENTS) if (a.telemetry.owns(r)) return a;
  return undefined;
}

export class OtlpReceiver {
  readonly stats: ReceiverStats = { requests: 0, records: 0, events: 0, rejected: 0, refused: 0, droppedSessions: 0, dropped: 0 };
  readonly limits: ReceiverLimits;
  private readonly engine: Engine | undefined;
  private server: http.Server | undefined;
  private port = 0;
  private loopbackOnly = false;
  /** Open connections, oldest first, and those with a request under way. */
  private readonly sockets = new Set<net.Socket>();
  private readonly busy = new Set<net.Socket>();
  /** Connections that sent a request's headers (the header deadline no longer applies to them). */
  private readonly answered = new WeakSet<net.Socket>();
  /** Bytes of bodies held now (read or inflated), over every request. */
  private inFlight = 0;
  /** Events numbered per origin file, for the findings' evidence. */
  private readonly counters = new Map<string, number>();
  /** The sessions received, by name, and in the order they were last sent to (least recently first). */
  private readonly received = new Map<string, ReceivedSession>();
  private readonly receivedOrder = new LinkedOrder<ReceivedSession>();
  private sessionTotal = 0;
  /** Sessions forgotten and not yet said, and when that was last said (`sayDropped`). */
  private droppedUnsaid = 0;
  private droppedSaidAt: number | undefined;
  /** Settled when the large request being decoded is done. */
  private largeTurn = Promise.resolve();

  constructor(private readonly opts: ReceiverOptions) {
    if (opts.judge !== undefined) this.engine = new Engine(opts.judge.config);
    this.limits = { ...DEFAULT_LIMITS, ...opts.limits };
    // protobufjs builds its decoders on first use (about 100 ms): built now, not in the first request.
    warmUp();
  }

  /** Listens; resolves with the address (port 0: one the system picked). */
  listen(host: string, port: number): Promise<AddressInfo> {
    const { idleTimeoutMs, headersTimeoutMs, requestTimeoutMs } = this.limits;
    const server = http.createServer({ keepAliveTimeout: idleTimeoutMs, headersTimeout: headersTimeoutMs, requestTimeout: requestTimeoutMs, connectionsCheckingInterval: Math.min(1000, headersTimeoutMs) }, (req, res) => void this.handle(req, res));
    // A client that connects and stays silent, or stops halfway, is let go.
    server.setTimeout(idleTimeoutMs, (socket) => socket.destroy());
    server.on('connection', (socket) => {
      this.admitConnection(socket);
      this.armHeaderDeadline(socket);
    });
    this.server = server;
    this.loopbackOnly = isLoopback(host);
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        const address = server.address() as AddressInfo;
        this.port = address.port;
        resolve(address);
      });
    });
  }

  /**
   * At most `maxConnections` open: past it, the connection idle longest is closed to let the new
   * one in (idle sockets held open by one client do not lock the real exporters out), or the new
   * one when every connection is busy with a request.
   */
  private admitConnection(socket: net.Socket): void {
    this.sockets.add(socket);
    socket.once('close', () => {
      this.sockets.delete(socket);
      this.busy.delete(socket);
    });
    if (this.sockets.size <= this.limits.maxConnections) return;
    for (const s of this.sockets) {
      if (s === socket || this.busy.has(s)) continue;
      this.sockets.delete(s);
      s.destroy();
      return;
    }
    this.sockets.delete(socket);
    socket.destroy();
  }

  /**
   * The header and request time-outs, on a timer of each connection's own: Node checks its
   * `headersTimeout` and `requestTimeout` only every `connectionsCheckingInterval`, over every
   * connection at once, and under load a silent connection was seen open 5 s past a 300 ms limit
   * (issue 32). Its first request's headers must have come within `headersTimeoutMs`, or the
   * connection is closed; later requests on a kept-alive connection keep Node's checks and the idle
   * time-out.
   */
  private armHeaderDeadline(socket: net.Socket): void {
    const timer = setTimeout(() => {
      if (!this.busy.has(socket) && !this.answered.has(socket)) socket.destroy();
    }, this.limits.headersTimeoutMs);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  }

  /** A request must have been read whole within `requestTimeoutMs` of its start, or its connection is closed. */
  private armRequestDeadline(req: http.IncomingMessage, res: http.ServerResponse): void {
    const timer = setTimeout(() => {
      if (!req.complete) req.socket.destroy();
    }, this.limits.requestTimeoutMs);
    timer.unref();
    res.once('close', () => clearTimeout(timer));
    req.once('end', () => clearTimeout(timer));
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
    const socket = req.socket;
    this.busy.add(socket);
    this.answered.add(socket);
    res.once('close', () => this.busy.delete(socket));
    this.armRequestDeadline(req, res);
    const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    // Answered in the request's encoding (the specification: the response's Content-Type is the request's).
    const protobuf = type === 'application/x-protobuf';
    let answer: Answer;
    try {
      answer = this.admit(req) ?? (await this.answer(req, type));
    } catch (err) {
      answer = status(500, 13, `internal error: ${(err as Error).message}`);
    }
    if (answer.status >= 400) this.stats.refused++;
    if (res.destroyed) return;
    const body = protobuf ? Buffer.from(encodeAnswer(answer.body, answer.status >= 400)) : Buffer.from(JSON.stringify(answer.body));
    const close = answer.status === 413 || answer.status === 401 || answer.status === 403 || answer.status >= 500;
    if (!res.headersSent) res.writeHead(answer.status, { 'Content-Type': protobuf ? 'application/x-protobuf' : 'application/json', 'Content-Length': body.byteLength, ...(close ? { Connection: 'close' } : {}), ...answer.headers });
    res.end(body);
    // What was not read of a refused body is dropped, not left to stall the connection.
    if (!req.complete) req.resume();
  }

  /** Who may post: the token, the Host a loopback receiver is reached by (no DNS rebinding), no web page. */
  private admit(req: http.IncomingMessage): Answer | undefined {
    if (this.loopbackOnly) {
      const host = (req.headers.host ?? '').toLowerCase();
      const ok = [`127.0.0.1:${this.port}`, `localhost:${this.port}`, `[::1]:${this.port}`];
      if (!ok.includes(host)) return status(403, 7, `Host ${JSON.stringify(req.headers.host ?? '')}: a loopback receiver is reached as 127.0.0.1, localhost or [::1] with its port`);
    }
    const origin = req.headers.origin;
    if (origin !== undefined && !(this.opts.allowedOrigins ?? []).includes(origin)) return status(403, 7, `Origin ${JSON.stringify(origin)}: requests from web pages are refused`);
    if (this.opts.token !== undefined && this.opts.token !== '' && !authorized(req.headers.authorization, this.opts.token)) {
      return status(401, 16, 'Authorization: Bearer <token> missing or wrong', { 'WWW-Authenticate': 'Bearer' });
    }
    return undefined;
  }

  /** `type`: the request's media type. */
  private async answer(req: http.IncomingMessage, type: string): Promise<Answer> {
    const url = (req.url ?? '/').split('?')[0];
    if (url !== undefined && OTHER_SIGNALS.has(url)) {
      if (req.method !== 'POST') return status(405, 12, `${req.method ?? '?'}: only POST is accepted`);
      // Accepted and dropped, unread (what is not read is drained after the answer): an exporter
      // that sends its metrics and traces to the same endpoint must shut down cleanly: an agent
      // that shuts its three exporters down together and exits on the first rejection loses its
      // last logs to a 404 for its metrics (seen live with an agent's exporter: its telemetry
      // reader in src/agents/ says which).
      this.stats.dropped++;
      return { status: 200, body: {} };
    }
    if (url !== '/v1/logs') return status(404, 5, `${url}: not found (this receiver takes logs: POST /v1/logs)`);
    if (req.method !== 'POST') return status(405, 12, `${req.method ?? '?'}: only POST is accepted`);
    const protobuf = type === 'application/x-protobuf';
    if (!protobuf && type !== 'application/json') return status(415, 3, `${type || 'no content type'}: not read (application/json or application/x-protobuf)`);
    const encoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase();
    if (encoding !== 'identity' && encoding !== 'gzip') return status(415, 3, `content encoding ${encoding}: not read (gzip or none)`);
    const { maxBodyBytes } = this.limits;
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > maxBodyBytes) return status(413, 8, `${declared} bytes: more than the ${maxBodyBytes} bytes a request may have`);
    // Memory held by requests read at once is bounded: past it, the client is asked to retry (503 is retryable in OTLP).
    let held = 0;
    // A small request may take the last SMALL_RESERVE of what all may hold, a large one not: large
    // bodies held at once never keep a small one (an exporter's usual batch) waiting.
    const hold = (bytes: number, small = bytes <= SMALL_REQUEST): boolean => {
      if (this.inFlight + bytes > this.limits.maxInFlightBytes - (small ? 0 : SMALL_RESERVE)) return false;
      this.inFlight += bytes;
      held += bytes;
      return true;
    };
    if (!hold(Number.isFinite(declared) ? declared : maxBodyBytes)) return busy();
    try {
      return await this.read(req, protobuf, encoding === 'gzip', hold);
    } finally {
      this.inFlight -= held;
    }
  }

  /** `hold`: takes bytes from what every request together may hold (false: there is not that much left). */
  private async read(req: http.IncomingMessage, protobuf: boolean, gzipped: boolean, hold: (bytes: number, small?: boolean) => boolean): Promise<Answer> {
    const { maxBodyBytes, maxInflatedBytes } = this.limits;
    const raw = await readBody(req, maxBodyBytes);
    if (raw === 'closed') return status(400, 3, 'the connection closed before the body was read');
    if (raw === undefined) return status(413, 8, `more than the ${maxBodyBytes} bytes a request may have`);
    let body: Buffer;
    // Inflated into what is left of the bytes every request may hold, at most the request's own limit.
    const large = Math.min(maxInflatedBytes, this.limits.maxInFlightBytes - SMALL_RESERVE - this.inFlight);
    const small = large < SMALL_REQUEST * 16 && raw.length <= SMALL_REQUEST;
    const room = small ? Math.min(maxInflatedBytes, SMALL_REQUEST * 16, this.limits.maxInFlightBytes - this.inFlight) : large;
    if (gzipped && (room < Math.min(SMALL_REQUEST, maxInflatedBytes) || !hold(room, small))) return busy();
    try {
      body = gzipped ? await inflated(raw, room) : raw;
    } catch (err) {
      const tooLarge = (err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' || /maxOutputLength|buffer/i.test((err as Error).message);
      if (tooLarge && room < maxInflatedBytes) return busy();
      return tooLarge ? status(413, 8, `inflated, more than the ${maxInflatedBytes} bytes a request may have`) : status(400, 3, `not gzip: ${(err as Error).message}`);
    }
    if (body.length > maxInflatedBytes) return status(413, 8, `more than the ${maxInflatedBytes} bytes a request may have`);
    if (body.length <= SMALL_REQUEST) return this.decodeAndTake(body, protobuf);
    // Large requests are decoded one at a time: a small one waits at most one slice of one of them.
    const turn = this.largeTurn;
    let release = () => undefined as void;
    this.largeTurn = new Promise<void>((resolve) => (release = resolve));
    await turn;
    try {
      return await this.decodeAndTake(body, protobuf);
    } finally {
      // The next one begins on a turn of the event loop of its own: released at once, it ran among
      // this one's microtasks, before this one was answered, and a line of queued requests ran as
      // one stretch (each a fresh slice) that no other request and no timer could enter.
      setImmediate(release);
    }
  }

  private async decodeAndTake(body: Buffer, protobuf: boolean): Promise<Answer> {
    const { maxEntries, maxRecords } = this.limits;
    const pause = slicer();
    let decoded: DecodedLogs;
    if (protobuf) {
      try {
        // Read from the wire as it is counted, each value bounded as it is read.
        decoded = await decodeLogsProtobufRecords(body, { maxEntries, maxRecords, pause }, boundedText);
      } catch (err) {
        if (err instanceof TooManyEntries) return status(413, 8, `${err.message}: more than a request may have`);
        return status(400, 3, `not an export request in protobuf: ${(err as Error).message}`);
      }
    } else {
      let value: unknown;
      try {
        // Each entry takes a byte at least: a body no longer than the limit cannot hold more.
        if (body.length > maxEntries && (await jsonEntries(body, pause)) > maxEntries) throw new TooManyEntries(`more than ${maxEntries} entries`);
        value = JSON.parse(body.toString('utf8'));
      } catch (err) {
        if (err instanceof TooManyEntries) return status(413, 8, `${err.message}: more than a request may have`);
        return status(400, 3, `not JSON: ${(err as Error).message}`);
      }
      try {
        // Bounded as they are read from the parsed tree.
        decoded = await decodeInSlices(value, pause, boundedText);
        // The request as parsed is let go before its records are judged: a collection then does not copy it.
        value = undefined;
      } catch (err) {
        if (err instanceof NotAnExportRequest) return status(400, 3, `not a logs export request: ${err.message}`);
        throw err;
      }
    }
    if (decoded.records.length > maxRecords) return status(413, 8, `more than ${maxRecords} log records: more than a request may have`);
    this.stats.records += decoded.records.length;
    this.stats.rejected += decoded.rejected;
    await this.take(decoded.records, pause);
    return decoded.rejected > 0 ? { status: 200, body: { partialSuccess: { rejectedLogRecords: String(decoded.rejected), errorMessage: decoded.reason ?? 'records rejected' } } } : { status: 200, body: {} };
  }

  /** A batch's records: grouped by session, in each agent's order, through the engine, a slice at a time. */
  private async take(records: readonly TelemetryRecord[], pause: () => Promise<void> | undefined): Promise<void> {
    const bySession = new Map<string, { origin: Origin; mapping: TelemetryMapping; records: TelemetryRecord[]; known: ReceivedSession | undefined }>();
    // The name of the events' file of the resource last seen (a request's records mostly share one).
    let lastResource: { service: string; host: string; file: string } | undefined;
    for (const r of records) {
      const agent = telemetryAgent(r);
      if (agent === undefined) continue;
      const claimed = agent.telemetry.session(r);
      if (claimed === undefined) continue;
      const service = typeof r.resource['service.name'] === 'string' ? r.resource['service.name'].slice(0, 256) : agent.id;
      const host = typeof r.resource['host.name'] === 'string' ? r.resource['host.name'].slice(0, 256) : '';
      const session = receivedSession(service, host, claimed.slice(0, 256));
      const group = bySession.get(session);
      if (group !== undefined) group.records.push(r);
      else {
        // A session received before is named by the string the engine already keys it by.
        const known = this.received.get(session);
        // A collector's batch mixes sessions: most groups hold one record, in a list of one.
        bySession.set(session, { origin: { agent, service, host, session: known?.name ?? session }, mapping: agent.telemetry, records: [r], known });
      }
    }
    // What one session's records make, to be judged once written: a list for the request, each
    // session's from its start (a list per session, of one or two events, grew to 17 each time).
    const judged: LocatedEvent[] = [];
    for (const { origin, mapping, records: list, known } of bySession.values()) {
      // Awaited only when it yields: an await of nothing still costs a promise and a turn of the microtasks.
      const yielding = pause();
      if (yielding !== undefined) await yielding;
      const seq = mapping.sequence;
      if (seq !== undefined && list.length > 1) list.sort((a, b) => (seq(a) ?? 0) - (seq(b) ?? 0));
      if (lastResource?.service !== origin.service || lastResource.host !== origin.host) lastResource = { service: origin.service, host: origin.host, file: `otlp:${origin.service}${origin.host !== '' ? `@${origin.host}` : ''}` };
      const file = lastResource.file;
      // The events themselves are kept only to be written.
      const events: GuardianEvent[] | undefined = this.opts.onEvents !== undefined ? [] : undefined;
      let lines = '';
      let size = 0;
      let toJudge = 0;
      // Events numbered per origin (service and host), counted here and kept once per session's records.
      let n = this.counters.get(file) ?? 0;
      for (const r of list) {
        const line = seq?.(r) ?? 0;
        // The record's time: the agents' `event.timestamp` (all three send one), else the record's own.
        const ts = isoTime(attrText(r.attributes['event.timestamp']) ?? r.timeMs);
        const scope: RecordScope = ts !== undefined ? { session: origin.session, agent: origin.agent.eventAgent, ts } : { session: origin.session, agent: origin.agent.eventAgent };
        for (const event of mapping.events(r, scope)) {
          size += jsonLength(event);
          if (events !== undefined) {
            events.push(event);
            lines += `${JSON.stringify(event)}\n`;
          }
          this.stats.events++;
          if (this.engine === undefined) continue;
          judged[toJudge++] = { event, ref: { file, line, event: ++n } };
        }
      }
      if (toJudge > 0) {
        // One counter per origin: bounded like the sessions, however many hosts come and go.
        if (!this.counters.has(file) && this.counters.size >= MAX_ORIGINS) this.counters.delete(this.counters.keys().next().value as string);
        this.counters.set(file, n);
      }
      this.account(origin.session, known, size);
      // Written before they are judged: a finding said on stdout is about events already in the
      // workspace, where `scan` and the editor read them.
      if (events !== undefined && events.length > 0) this.opts.onEvents?.(origin, events, lines);
      for (let i = 0; i < toJudge; i++) for (const f of (this.engine as Engine).push(judged[i] as LocatedEvent)) this.opts.judge?.onFinding(f);
    }
  }

  /**
   * A session's state counted by the size of its events (their JSON text, `jsonLength`): past the
   * limit, the sessions least recently sent to go, and are said.
   */
  private account(session: string, known: ReceivedSession | undefined, bytes: number): void {
    // As looked up when its records were grouped, unless forgotten since; a new one may have come in another request meanwhile.
    let entry = known !== undefined && this.receivedOrder.has(known) ? known : this.received.get(session);
    if (entry === undefined) {
      entry = { name: session, bytes: 0, older: undefined, newer: undefined };
      this.received.set(session, entry);
      this.receivedOrder.add(entry);
    } else this.receivedOrder.moveToEnd(entry);
    // A session's state is its signals' windows, bounded whatever its length: counted up to SESSION_WINDOW_BYTES.
    const now = Math.min(SESSION_WINDOW_BYTES, entry.bytes + bytes);
    this.sessionTotal += now - entry.bytes;
    entry.bytes = now;
    while (this.sessionTotal > this.limits.maxSessionBytes && this.receivedOrder.size > 1) {
      const oldest = this.receivedOrder.first() as ReceivedSession;
      this.receivedOrder.delete(oldest);
      this.received.delete(oldest.name);
      this.sessionTotal -= oldest.bytes;
      this.engine?.forgetSession(oldest.name);
      this.stats.droppedSessions++;
      this.droppedUnsaid++;
      this.sayDropped(oldest);
    }
  }

  /**
   * Sessions forgotten, said on the first and then at most once a minute, with how many since: a
   * receiver with sessions coming and going forgets the old ones all day, and a line for each would
   * bury every other message.
   */
  private sayDropped(last: ReceivedSession): void {
    const now = Date.now();
    if (this.droppedSaidAt !== undefined && now - this.droppedSaidAt < DROPPED_SAID_EVERY_MS) return;
    const what = this.droppedUnsaid === 1 ? `session ${last.name} forgotten (${last.bytes} bytes of events)` : `${this.droppedUnsaid} sessions forgotten since the last said, the latest ${last.name}`;
    this.opts.onDrop?.(`${what}: the sessions received keep at most ${this.limits.maxSessionBytes} bytes, the least recently sent forgotten first`);
    this.droppedSaidAt = now;
    this.droppedUnsaid = 0;
  }
}

/** A session received: the name the engine knows it by, and the size of its events counted. */
interface ReceivedSession extends Linked<ReceivedSession> {
  readonly name: string;
  bytes: number;
}

/** The answer to a request that finds the receiver holding all it may: to be retried (503 is retryable in OTLP). */
function busy(): Answer {
  return status(503, 14, 'busy: too many requests being read at once; retry later', { 'Retry-After': '1' });
}

/** Entries (resources, scopes and records) read between two looks at the time. */
const SLICE_ENTRIES = 250;

/** The records of a JSON request (readLogsJson, ../agents/otlpLogs.ts), `pause` every SLICE_ENTRIES entries. */
async function decodeInSlices(value: unknown, pause: () => Promise<void> | undefined, text: TextBound): Promise<DecodedLogs> {
  const into = new LogsRead();
  for (const _ of readLogsJson(value, text, into, SLICE_ENTRIES)) {
    const yielding = pause();
    if (yielding !== undefined) await yielding;
  }
  return into.decoded();
}

/** A pause that yields to the event loop once SLICE_MS of work have gone by since the last. */
function slicer(): () => Promise<void> | undefined {
  let since = performance.now();
  return () => {
    if (performance.now() - since < SLICE_MS) return undefined;
    return new Promise<void>((resolve) =>
      setImmediate(() => {
        since = performance.now();
        resolve();
      }),
    );
  };
}

/**
 * A request's body; undefined when it is longer than `max`, 'closed' when the connection closed
 * first. What was read is let go either way: nothing of a request outlives its connection.
 */
function readBody(req: http.IncomingMessage, max: number): Promise<Buffer | undefined | 'closed'> {
  return new Promise((resolve) => {
    let chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (v: Buffer | undefined | 'closed') => {
      if (done) return;
      done = true;
      chunks = [];
      resolve(v);
    };
    req.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > max) return finish(undefined);
      chunks.push(chunk);
    });
    req.on('end', () => finish(Buffer.concat(chunks, size)));
    req.on('error', () => finish('closed'));
    req.on('close', () => finish('closed'));
  });
}
