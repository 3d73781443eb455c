import type { SettledCall } from '../calls';
import type { Scope } from '../detector';
import type { EventRef } from '../events';

/** session/task/agent of a call or scope, without undefined keys. */
export function whoOf(x: SettledCall | Scope): { session: string; task?: string; agent?: string } {
  return { session: x.session, task: x.task, agent: x.agent };
}

/** An episode id: the signal, its key, and the event that started the pattern. */
export function episodeId(signal: string, key: string, start: EventRef): string {
  return `${signal}|${key}|${start.file}#${start.event}`;
}

/**
 * Empties a list and keeps its storage: `list.length = 0` gives the storage up, and a list that is
 * emptied and filled again for every call (a run that restarts) then costs an allocation each time.
 */
export function clear(list: unknown[]): void {
  while (list.length > 0) list.pop();
}
