import type { StopStatus } from '../../core/stopAll';
import { StopAllFile } from '../../state/stopAllFile';
import type { CommandContext } from '../context';
import { EXIT, json } from '../io';

/** `stop`, `pause`, `clear`: writes the circuit-breaker file. */
export async function stopAllCommand(ctx: CommandContext, status: StopStatus, opts: { reason?: string }): Promise<number> {
  const file = new StopAllFile(ctx.ws);
  const state = await file.write(status, opts.reason, 'loop-guardian cli');
  // STOP_ALL is on disk: a log that cannot be written is a warning, not a failed stop.
  const problem = await ctx.log.tryWrite(status === 'CLEAR' ? 'INFO' : 'WARN', `STOP_ALL set to ${status}${opts.reason ? `: ${opts.reason}` : ''}`);
  if (problem !== undefined) ctx.io.err(`warning: ${problem}\n`);
  ctx.io.out(ctx.json ? json({ workspace: ctx.ws.root, file: file.relativePath, ...state }) : `STOP_ALL: ${state.status} ${state.timestamp}${opts.reason ? ` (${opts.reason})` : ''}, in ${ctx.ws.path(file.relativePath)}\n`);
  return EXIT.ok;
}
