import type { Agent } from './agent';
import { claudeHook } from './claude/hook';
import { clineHook } from './cline/hook';
import { codexHook } from './codex/hook';
import { copilotHook } from './copilot/hook';
import { copilotCliHook } from './copilot-cli/hook';
import { cursorHook } from './cursor/hook';
import { geminiHook } from './gemini/hook';
import type { HookProtocol } from './hook';
import { windsurfHook } from './windsurf/hook';

/** An agent as the hook process knows it: its id, the `agent` its events carry, its hook protocol. */
export type HookedAgent = Pick<Agent, 'id' | 'eventAgent'> & { readonly hook: HookProtocol };

/**
 * The registry's agents that have a hook (`HOOK_AGENTS` in index.ts), as the hook process needs
 * them, without the transcript readers and discovery each registry entry brings along: the hook
 * runs before every tool call, and loading those was a good part of its time. The same agents in
 * the same order with the same protocols and event names as `HOOK_AGENTS` (a test holds the two
 * together); everything else reads the registry.
 */
export const HOOKED_AGENTS: readonly HookedAgent[] = [
  { id: 'claude', eventAgent: 'claude-code', hook: claudeHook },
  { id: 'codex', eventAgent: 'codex', hook: codexHook },
  { id: 'gemini', eventAgent: 'gemini-cli', hook: geminiHook },
  { id: 'copilot', eventAgent: 'copilot-vscode', hook: copilotHook },
  { id: 'copilot-cli', eventAgent: 'copilot-cli', hook: copilotCliHook },
  { id: 'cursor', eventAgent: 'cursor', hook: cursorHook },
  { id: 'windsurf', eventAgent: 'windsurf', hook: windsurfHook },
  { id: 'cline', eventAgent: 'cline', hook: clineHook },
];

export function hookedAgent(id: string): HookedAgent | undefined {
  return HOOKED_AGENTS.find((a) => a.id === id);
}

/**
 * The files, relative to a project, whose naming the guardian marks a folder where an agent's hook
 * is registered (`ProjectClues.registrations`): each agent's settings file and those an earlier
 * `init` wrote to; for hooks that are files (Cline), the first event's file.
 */
export const HOOK_REGISTRATION_FILES: readonly string[] = [
  ...new Set(
    HOOKED_AGENTS.flatMap(({ hook: { registration: reg } }) => (reg.layout === 'script' ? [`${reg.settingsFile}/${reg.events[0] ?? ''}`] : [reg.settingsFile, ...(reg.migrateFrom ?? [])])),
  ),
];
