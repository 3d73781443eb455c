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

/** Keeps the last `max` items. */
export function pushBounded<T>(list: T[], item: T, max: number): void {
  list.push(item);
  while (list.length > max) list.shift();
}
