import type { HookCall } from '../agents/hook';
import type { HookedAgent } from '../agents/hooks';
import { readHookTail } from '../state/hookLog';
import { readTerminalExits } from '../state/terminalExits';
import type { Workspace } from '../state/workspace';

/*
 * A finished terminal call whose payload does not say how its command exited, settled from the
 * exit code the editor's shell integration reported for the agent's terminal (recorded by the
 * extension: src/state/terminalExits.ts). Only a command the call ran (`terminalCommands`), of the
 * agent's own terminals, ended after the hook recorded the call (so never an earlier run of the
 * same command), and the first such: a command that exited 0, or no record at all, leaves the call
 * as it was (a call that returned its text).
 */
export function withTerminalExit(hooked: HookedAgent, caller: HookedAgent, ws: Workspace, rel: string, call: HookCall & { tool: string }): HookCall & { tool: string } {
  if (call.error !== undefined || call.id === undefined) return call;
  const commands = new Set(hooked.hook.terminalCommands?.(call) ?? []);
  if (commands.size === 0) return call;
  const exits = readTerminalExits(ws);
  if (exits.length === 0) return call;
  const recorded = readHookTail(ws.path(rel), rel).find((e) => e.event.type === 'tool' && e.event.id === call.id);
  const since = recorded?.event.ts !== undefined ? Date.parse(recorded.event.ts) : Number.NaN;
  if (Number.isNaN(since)) return call;
  const exit = exits.find((e) => e.agent === caller.id && Date.parse(e.ts) >= since && commands.has(e.command.trim()));
  if (exit === undefined || exit.exitCode === 0) return call;
  const text = typeof call.response === 'string' ? call.response.trimEnd() : '';
  return { ...call, error: `${text}${text === '' ? '' : '\n'}(exit code ${exit.exitCode})` };
}
