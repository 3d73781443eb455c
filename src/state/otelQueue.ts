import { statSync } from 'node:fs';
import { join } from 'node:path';
import { readTextIfExists, withFileLock } from './atomicFile';
import type { Workspace } from './workspace';

/*
 * The exporter's state in a workspace (src/watch/incidentExport.ts): the records an endpoint has
 * not accepted yet, kept until it does (written atomically), and the lock that lets one publisher
 * at a time send them.
 */

export const OTEL_QUEUE = '.tmp/otel/unsent-records.json';
/** Held (as `<this>.lock`) by the one publisher of a workspace at work. */
export const OTEL_PUBLISH_LOCK = '.tmp/otel/publish';
/** A publisher's lock not refreshed for this long is left over from a crashed one. */
export const OTEL_LOCK_STALE_MS = 30_000;

/** The records waiting, as last written (an unreadable file: none). */
export async function readOtelQueue<T>(ws: Workspace): Promise<T[]> {
  try {
    const parsed = JSON.parse((await readTextIfExists(ws.path(OTEL_QUEUE))) ?? '[]') as unknown;
    return Array.isArray(parsed) ? (parsed as T[]) : [];
  } catch {
    return [];
  }
}

export async function writeOtelQueue(ws: Workspace, records: readonly unknown[]): Promise<void> {
  await ws.writeAtomic(OTEL_QUEUE, `${JSON.stringify(records)}\n`);
}

/** Whether a publisher holds the workspace's lock now (so that another need not be started). */
export function publisherBusy(root: string): boolean {
  try {
    return Date.now() - statSync(join(root, `${OTEL_PUBLISH_LOCK}.lock`)).mtimeMs < OTEL_LOCK_STALE_MS;
  } catch {
    return false;
  }
}

/** Runs `fn` as the workspace's one publisher, waiting for the lock at most `waitMs` (LockTimeoutError past it). */
export function asPublisher<T>(ws: Workspace, fn: () => Promise<T>, waitMs: number): Promise<T> {
  return withFileLock(ws.path(OTEL_PUBLISH_LOCK), fn, { timeoutMs: waitMs, staleMs: OTEL_LOCK_STALE_MS });
}
