import { parseHostPort } from '../../watch/otelConfig';
import { isLoopback, logsUrl, OtlpReceiver, workspaceEvents } from '../../watch/otlpReceiver';
import type { CommandContext } from '../context';
import { EXIT, findingJson, UsageError } from '../io';

/** `--listen`'s value. */
export function parseListen(text: string): { host: string; port: number } {
  const address = parseHostPort(text);
  if (address === undefined) throw new UsageError(`--listen ${JSON.stringify(text)}: HOST:PORT (for example 127.0.0.1:4318)`);
  return address;
}

/**
 * `loop-guardian otlp`: an OTLP/HTTP logs receiver (src/watch/otlpReceiver.ts). Each finding is a
 * JSON line on stdout (replay --jsonl's shape, with the agent's service and host); with
 * --workspace, each session's events are appended to `.tmp/otlp/logs/otlp-<service>-<host>.jsonl`
 * there, where the editor's guardian reads them as it reads every event log. Runs until
 * interrupted (SIGINT, SIGTERM); exit 0. With a token (`--token`, else LOOP_GUARDIAN_OTLP_TOKEN), a
 * request without `Authorization: Bearer <token>` is refused; requests from web pages (an `Origin`
 * header) are refused unless that origin is allowed (`--allow-origin`).
 */
export async function otlpCommand(ctx: CommandContext, opts: { listen?: string; workspace?: string; token?: string; 'allow-origin'?: string }, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const { host, port } = parseListen(opts.listen ?? '127.0.0.1:4318');
  const io = ctx.io;
  const write = opts.workspace !== undefined;
  const token = (opts.token ?? env.LOOP_GUARDIAN_OTLP_TOKEN ?? '').trim();
  const warn = (what: string) => io.err(`loop-guardian otlp: warning: ${what}\n`);
  // The findings of a turn of the event loop written at once, at its end: one write for a request's, not one each.
  const said = new Batched((text) => io.out(text));
  const receiver = new OtlpReceiver({
    judge: { config: ctx.config, onFinding: (f) => said.add(`${JSON.stringify(findingJson(f))}\n`) },
    ...(write ? { onEvents: workspaceEvents(ctx.ws, (rel, err) => warn(`${rel}: not written (${err.message})`), warn) } : {}),
    ...(token !== '' ? { token } : {}),
    ...(opts['allow-origin'] !== undefined ? { allowedOrigins: opts['allow-origin'].split(',').map((o) => o.trim()) } : {}),
    onDrop: warn,
  });
  if (!isLoopback(host) && token === '') warn(`listening on ${host}, reachable from other machines, without a token: anyone who reaches it is believed (set --token or LOOP_GUARDIAN_OTLP_TOKEN, and put TLS in front: docs/fleet.md)`);
  let address;
  try {
    address = await receiver.listen(host, port);
  } catch (err) {
    io.err(`loop-guardian otlp: cannot listen on ${host}:${port}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}\n`);
    return EXIT.error;
  }
  io.err(`loop-guardian otlp: listening on ${logsUrl(address)}${write ? `; events written to ${ctx.ws.root}/.tmp/otlp/logs/` : ''}\n`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await receiver.close();
  said.flush();
  const s = receiver.stats;
  io.err(`loop-guardian otlp: ${s.requests} request(s), ${s.records} record(s), ${s.events} event(s), ${s.rejected} record(s) rejected, ${s.refused} request(s) refused, ${s.dropped} metrics or traces request(s) dropped, ${s.droppedSessions} session(s) forgotten\n`);
  return EXIT.ok;
}

/**
 * Text gathered and written at once when the code running now is done (a microtask), or on `flush`:
 * one write for a slice of a request's records, made before that request is answered and before the
 * next request's records are read (a `setImmediate` waited for the next request's first slice).
 */
export class Batched {
  private parts: string[] = [];
  private scheduled = false;

  constructor(private readonly write: (text: string) => void) {}

  add(text: string): void {
    this.parts.push(text);
    if (this.scheduled) return;
    this.scheduled = true;
    queueMicrotask(() => this.flush());
  }

  flush(): void {
    this.scheduled = false;
    if (this.parts.length === 0) return;
    const text = this.parts.join('');
    this.parts = [];
    this.write(text);
  }
}
