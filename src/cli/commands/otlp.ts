import { HOOK_LOG_MAX_BYTES } from '../../state/hookLog';
import { parseHostPort } from '../../watch/otelConfig';
import { logsUrl, OtlpReceiver, workspaceEvents } from '../../watch/otlpReceiver';
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
 * interrupted (SIGINT, SIGTERM); exit 0.
 */
export async function otlpCommand(ctx: CommandContext, opts: { listen?: string; workspace?: string }): Promise<number> {
  const { host, port } = parseListen(opts.listen ?? '127.0.0.1:4318');
  const io = ctx.io;
  const write = opts.workspace !== undefined;
  const receiver = new OtlpReceiver({
    judge: { config: ctx.config, onFinding: (f) => io.out(`${JSON.stringify(findingJson(f))}\n`) },
    ...(write ? { onEvents: workspaceEvents(ctx.ws, HOOK_LOG_MAX_BYTES, (rel, err) => io.err(`loop-guardian otlp: warning: ${rel}: not written (${err.message})\n`)) } : {}),
  });
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
  const s = receiver.stats;
  io.err(`loop-guardian otlp: ${s.requests} request(s), ${s.records} record(s), ${s.events} event(s), ${s.rejected} record(s) rejected, ${s.refused} request(s) refused\n`);
  return EXIT.ok;
}
