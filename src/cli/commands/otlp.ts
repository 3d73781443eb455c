import { HOOK_LOG_MAX_BYTES } from '../../state/hookLog';
import { OtlpReceiver, type Origin } from '../../watch/otlpReceiver';
import type { GuardianEvent } from '../../core/events';
import type { CommandContext } from '../context';
import { EXIT, findingJson, UsageError } from '../io';

/** `HOST:PORT`, `[v6]:PORT` or `PORT`. */
export function parseListen(text: string): { host: string; port: number } {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(text) ?? /^()()(\d{1,5})$/.exec(text);
  const port = m ? Number(m[3]) : NaN;
  if (!m || !(port >= 0 && port <= 65535)) throw new UsageError(`--listen ${JSON.stringify(text)}: HOST:PORT (for example 127.0.0.1:4318)`);
  return { host: m[1] || m[2] || '127.0.0.1', port };
}

/** A name as a file-name part: letters, digits, `.`, `_` and `-`. */
function safe(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 80) || '_';
}

/**
 * `loop-guardian otlp`: an OTLP/HTTP logs receiver (src/telemetry/receiver.ts). Each finding is a
 * JSON line on stdout (replay --jsonl's shape, with the agent's service and host); with
 * --workspace, each session's events are appended to `.tmp/otlp/logs/otlp-<service>-<host>.jsonl`
 * there, where the editor's guardian reads them as it reads every event log. Runs until
 * interrupted (SIGINT, SIGTERM); exit 0.
 */
export async function otlpCommand(ctx: CommandContext, opts: { listen?: string; workspace?: string }): Promise<number> {
  const { host, port } = parseListen(opts.listen ?? '127.0.0.1:4318');
  const io = ctx.io;
  const write = opts.workspace !== undefined;
  const receiver = new OtlpReceiver({
    config: ctx.config,
    onFinding: (f) => io.out(`${JSON.stringify(findingJson(f))}\n`),
    ...(write
      ? {
          onEvents: (origin: Origin, events: readonly GuardianEvent[]) => {
            const rel = `.tmp/otlp/logs/otlp-${safe(origin.service)}-${safe(origin.host || 'local')}.jsonl`;
            try {
              ctx.ws.appendSync(rel, events.map((e) => `${JSON.stringify(e)}\n`).join(''), { rotateOver: HOOK_LOG_MAX_BYTES });
            } catch (err) {
              io.err(`loop-guardian otlp: warning: ${rel}: not written (${(err as Error).message})\n`);
            }
          },
        }
      : {}),
  });
  let address;
  try {
    address = await receiver.listen(host, port);
  } catch (err) {
    io.err(`loop-guardian otlp: cannot listen on ${host}:${port}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}\n`);
    return EXIT.error;
  }
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  io.err(`loop-guardian otlp: listening on http://${shown}:${address.port}/v1/logs${write ? `; events written to ${ctx.ws.root}/.tmp/otlp/logs/` : ''}\n`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await receiver.close();
  const s = receiver.stats;
  io.err(`loop-guardian otlp: ${s.requests} request(s), ${s.records} record(s), ${s.events} event(s), ${s.rejected} record(s) rejected, ${s.refused} request(s) refused\n`);
  return EXIT.ok;
}
