import type { GuardianEvent } from './events';

/** An event's time in epoch milliseconds (apart from the zod schemas: the hook loads no zod). */
export function timestampMs(event: GuardianEvent): number | undefined {
  if (event.ts === undefined) return undefined;
  const ms = Date.parse(event.ts);
  return Number.isNaN(ms) ? undefined : ms;
}
