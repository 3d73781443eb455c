import { checkInfiniteLoop, type InvocationRecord } from '../../core/checkInfiniteLoop';
import { appendInvocation, readInvocationHistory } from '../../state/invocationHistory';
import { formatSkipped } from '../../core/events';
import { parseJson } from '../../core/json';
import { archiveLoopDiagnostic } from '../../state/loopArchive';
import type { CommandContext } from '../context';
import { EXIT, json, plain, UsageError } from '../io';

export function parseJsonObject(flag: string, text: string | undefined): Record<string, unknown> {
  if (text === undefined) throw new UsageError(`${flag} is required (a JSON object, e.g. '{"priority":"critical"}')`);
  const parsed = parseJson(text);
  if (!parsed.ok) throw new UsageError(`${flag}: ${parsed.tooDeep ? parsed.error : `not JSON (${parsed.error})`}`);
  const value = parsed.value;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new UsageError(`${flag}: expected a JSON object`);
  return value as Record<string, unknown>;
}

export function parseCount(flag: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`${flag}: expected a whole number of at least 1, got ${JSON.stringify(text)}`);
  return n;
}

/** Seed 000's check-infinite-loop, with its exact JSON output. */
export async function checkCommand(ctx: CommandContext, opts: { agent?: string; config?: string; 'max-repeats'?: string }): Promise<number> {
  if (opts.agent === undefined || opts.agent === '') throw new UsageError('--agent is required');
  const config = parseJsonObject('--config', opts.config);
  const max = parseCount('--max-repeats', opts['max-repeats'], ctx.config.signals['repeated-invocation'].threshold);
  const rel = ctx.config.sources.invocationHistory;
  let history: InvocationRecord[] = [];
  try {
    const read = await readInvocationHistory(ctx.ws, rel);
    for (const s of read.skipped) ctx.io.err(`warning: ${plain(formatSkipped(s))}\n`);
    history = read.invocations.map((i) => i.record);
  } catch (err) {
    // Seed 000: a history that cannot be read is assumed safe, with a warning.
    ctx.io.err(`warning: ${rel}: cannot read (${(err as Error).message}); assuming no previous invocations\n`);
  }
  const result = checkInfiniteLoop(history, { agent_name: opts.agent, config, max_repeats: max });
  ctx.io.out(json(result));
  if (!result.loop_detected) return EXIT.ok;
  try {
    const archived = await archiveLoopDiagnostic(ctx.ws, { agent_name: opts.agent, config, ...result });
    await ctx.log.write('ERROR', `infinite loop: ${opts.agent} ${JSON.stringify(config)} invoked ${result.invocation_count} times; diagnostic archived to ${archived}`);
    ctx.io.err(`diagnostic archived to ${archived}\n`);
  } catch (err) {
    ctx.io.err(`warning: could not archive the diagnostic: ${(err as Error).message}\n`);
  }
  return EXIT.loop;
}

/** Logs an invocation result to the history (seed 000's "Logging Invocation Results"). */
export async function recordCommand(
  ctx: CommandContext,
  opts: { agent?: string; config?: string; result?: string; reason?: string; timestamp?: string },
): Promise<number> {
  if (opts.agent === undefined || opts.agent === '') throw new UsageError('--agent is required');
  const config = parseJsonObject('--config', opts.config);
  const record: InvocationRecord = {
    agent_name: opts.agent,
    config,
    timestamp: opts.timestamp ?? new Date().toISOString(),
    ...(opts.result !== undefined ? { result: opts.result } : {}),
    ...(opts.reason !== undefined ? { reason: opts.reason } : {}),
  };
  const rel = ctx.config.sources.invocationHistory;
  const done = await appendInvocation(ctx.ws, rel, record);
  if (done.backup) ctx.io.err(`warning: ${rel} was corrupt; kept as ${done.backup} and started a new history\n`);
  if (ctx.json) ctx.io.out(json({ file: rel, ...done }));
  else ctx.io.out(`recorded ${opts.agent} in ${rel} (${done.kept} kept${done.rotated ? `, ${done.rotated} rotated out` : ''})\n`);
  return EXIT.ok;
}
