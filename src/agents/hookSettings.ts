import { escapeRegExp, isObject } from '../core/guards';
import type { HookRegistration } from './hook';

export class SettingsShapeError extends Error {
  constructor(readonly file: string, readonly field: string, detail: string) {
    super(`${file}: ${field} ${detail}; not changed`);
    this.name = 'SettingsShapeError';
  }
}

/** Whether a hook command is the guardian's hook for this agent (any install path). */
export function isGuardianHook(command: unknown, agent: string): boolean {
  // The id ends where no other id could go on ("copilot" is not "copilot-cli").
  return typeof command === 'string' && /loop-guardian|cli\.js/.test(command) && new RegExp(`\\bhook\\s+${escapeRegExp(agent)}(?![\\w-])`).test(command);
}

export interface MergeResult {
  readonly settings: Record<string, unknown>;
  /** The events whose registration was added or updated; empty when it was already there. */
  readonly added: string[];
  readonly updated: string[];
}

/**
 * Adds the guardian's hook to an agent's settings, keeping everything else as it is: other keys,
 * other events, other hooks on the same events. A registration of the guardian already there is
 * updated in place (a new command path), never duplicated. Throws when the shape is not the
 * documented one, rather than guess and clobber.
 */
export function mergeHookSettings(existing: unknown, agent: string, reg: HookRegistration, command: string, file: string = reg.settingsFile): MergeResult {
  if (existing !== undefined && !isObject(existing)) throw new SettingsShapeError(file, '(root)', 'is not a JSON object');
  const settings: Record<string, unknown> = { ...(existing ?? {}) };
  if (reg.layout === 'flat' && settings.version === undefined) settings.version = 1;
  const hooks = settings.hooks === undefined ? {} : settings.hooks;
  if (!isObject(hooks)) throw new SettingsShapeError(file, 'hooks', 'is not an object');
  const merged: Record<string, unknown> = { ...hooks };
  const added: string[] = [];
  const updated: string[] = [];
  for (const event of reg.events) {
    const groups = merged[event] === undefined ? [] : merged[event];
    if (!Array.isArray(groups)) throw new SettingsShapeError(file, `hooks.${event}`, 'is not an array');
    let found = false;
    if (reg.layout === 'flat') {
      // Each entry is a hook of its own: `{type: "command", bash, timeoutSec}`.
      const next = groups.map((h: unknown) => {
        if (!isObject(h) || !isGuardianHook(h.bash ?? h.command, agent)) return h;
        found = true;
        if (h.bash === command) return h;
        if (!updated.includes(event)) updated.push(event);
        return { ...h, bash: command };
      });
      if (!found) {
        next.push({ type: 'command', bash: command, timeoutSec: reg.timeout });
        added.push(event);
      }
      merged[event] = next;
      continue;
    }
    const next = groups.map((group: unknown) => {
      if (!isObject(group) || !Array.isArray(group.hooks)) return group;
      const inner = group.hooks.map((h: unknown) => {
        if (!isObject(h) || !isGuardianHook(h.command, agent)) return h;
        found = true;
        if (h.command === command) return h;
        if (!updated.includes(event)) updated.push(event);
        return { ...h, command };
      });
      return { ...group, hooks: inner };
    });
    if (!found) {
      const matcher = reg.matcher !== undefined && !(reg.unmatched ?? []).includes(event) ? { matcher: reg.matcher } : {};
      next.push({ ...matcher, hooks: [{ type: 'command', command, timeout: reg.timeout }] });
      added.push(event);
    }
    merged[event] = next;
  }
  settings.hooks = merged;
  return { settings, added, updated };
}
