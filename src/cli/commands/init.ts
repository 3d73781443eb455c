import { realpathSync } from 'node:fs';
import * as path from 'node:path';
import { HOOK_AGENTS, hookAgent } from '../../agents';
import { hookCommand, installHook } from '../../state/agentSettings';
import type { CommandContext } from '../context';
import { EXIT, json, UsageError } from '../io';

/** The CLI as the agent should start it: this very file, wherever it is installed. */
function thisCli(): string {
  const entry = process.argv[1] ?? path.join(__dirname, 'cli.js');
  try {
    return realpathSync(entry);
  } catch {
    return path.resolve(entry);
  }
}

export async function initCommand(ctx: CommandContext, agent: string | undefined, opts: { command?: string }): Promise<number> {
  const target = agent === undefined ? undefined : hookAgent(agent);
  if (target === undefined) throw new UsageError(`init needs the agent: ${HOOK_AGENTS.map((a) => a.id).join(', ')}`);
  const command = opts.command ?? hookCommand(thisCli(), target);
  const result = await installHook(ctx.ws, target, command);
  await ctx.log.write('INFO', `init ${agent}: ${result.file}: added ${result.added.join(', ') || 'nothing'}; updated ${result.updated.join(', ') || 'nothing'}`);
  if (ctx.json) {
    ctx.io.out(json({ agent, file: result.file, ...(result.files !== undefined ? { files: result.files } : {}), command, created: result.created, added: result.added, updated: result.updated }));
    return EXIT.ok;
  }
  const changed = result.added.length + result.updated.length > 0;
  ctx.io.out(
    changed
      ? `${result.created ? 'Created' : 'Updated'} ${result.file}: the hook runs on ${[...result.added, ...result.updated].join(', ')}.\n  ${command}\n`
      : `${result.file} already runs the hook: nothing to change.\n`,
  );
  return EXIT.ok;
}
