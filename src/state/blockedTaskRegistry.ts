import { promises as fs } from 'node:fs';
import { z } from 'zod';
import type { BlockedTask } from '../core/blockedSummary';
import { isObject } from '../core/guards';
import { exceedsDepth, parseJson, tooDeepReason } from '../core/json';
import { readTextIfExists, withFileLock } from './atomicFile';
import { checkTaskId, PATHS, type Workspace } from './workspace';

const blockedTaskSchema = z.looseObject({
  task_id: z.string().min(1),
  blocked_at: z.string(),
  pattern: z.enum(['repeated_error', 'stuck_tier', 'quality_gate_loop', 'none']),
  attempts: z.number().int().min(0),
  tier: z.number().int().min(0),
  reason: z.string(),
  latest_error: z.string().nullable(),
  repeated_error_count: z.number().int().min(0),
  suggested_action: z.string(),
  summary_file: z.string(),
  description: z.string().optional(),
});

const registrySchema = z.object({ version: z.literal(1), tasks: z.array(z.unknown()) });

export interface RegistryRead {
  readonly tasks: BlockedTask[];
  /** What could not be read, with the file and the field. */
  readonly problems: string[];
}

export class CorruptRegistryError extends Error {
  constructor(readonly file: string, detail: string) {
    super(`${file}: ${detail}; fix or delete the file (nothing was written)`);
    this.name = 'CorruptRegistryError';
  }
}

/** Seed 003's blocked-task registry, moved into the workspace: `.tmp/guardian/blocked.json`. */
export class BlockedTaskRegistry {
  constructor(private readonly ws: Workspace) {}

  summaryPath(taskId: string): string {
    return `${PATHS.summaries}/${checkTaskId(taskId)}-summary.txt`;
  }

  async list(): Promise<RegistryRead> {
    const text = await readTextIfExists(this.ws.path(PATHS.registry));
    return parseRegistry(text, PATHS.registry);
  }

  /**
   * Adds or replaces a task and writes its summary. The summary is written under the registry's
   * lock, like `remove` removes it: a break and a cleanup of one task at the same moment leave it
   * registered with its summary, or neither.
   */
  async block(task: BlockedTask, summary: string): Promise<void> {
    checkTaskId(task.task_id);
    const file = await this.ws.resolveForWrite(PATHS.registry);
    await withFileLock(file, async () => {
      const tasks = await this.readForUpdate(file);
      const next = tasks.filter((t) => !isObject(t) || t.task_id !== task.task_id);
      next.push(task);
      await this.ws.writeAtomic(task.summary_file, summary);
      await this.ws.writeAtomic(PATHS.registry, `${JSON.stringify({ version: 1, tasks: next }, null, 2)}\n`);
    });
  }

  /** Removes a task and its summary, under the registry's lock; true when either was there. */
  async remove(taskId: string): Promise<boolean> {
    checkTaskId(taskId);
    const file = await this.ws.resolveForWrite(PATHS.registry);
    const summary = await this.ws.resolveForWrite(this.summaryPath(taskId));
    return withFileLock(file, async () => {
      const tasks = await this.readForUpdate(file);
      const next = tasks.filter((t) => !isObject(t) || t.task_id !== taskId);
      // The entry goes first: a failure in between leaves a summary without entry, which `status` ignores.
      if (next.length !== tasks.length) await this.ws.writeAtomic(PATHS.registry, `${JSON.stringify({ version: 1, tasks: next }, null, 2)}\n`);
      const hadSummary = await fs.rm(summary).then(
        () => true,
        () => false,
      );
      return next.length !== tasks.length || hadSummary;
    });
  }

  /**
   * Raw entries, kept as they are (even ones this version does not understand, even `null`). An
   * entry nested too deep cannot be written back (stringify would overflow): an error names it.
   */
  private async readForUpdate(file: string): Promise<unknown[]> {
    const text = await readTextIfExists(file);
    if (text === undefined || text.trim() === '') return [];
    const json = parseJson(text, Number.POSITIVE_INFINITY);
    if (!json.ok) throw new CorruptRegistryError(PATHS.registry, `not JSON (${json.error})`);
    const parsed = registrySchema.safeParse(json.value);
    if (!parsed.success) throw new CorruptRegistryError(PATHS.registry, `expected {"version": 1, "tasks": [...]}`);
    const deep = parsed.data.tasks.findIndex((t) => exceedsDepth(t));
    if (deep >= 0) throw new CorruptRegistryError(PATHS.registry, `tasks[${deep}]: ${tooDeepReason()}`);
    return parsed.data.tasks;
  }
}

export function parseRegistry(text: string | undefined, name: string): RegistryRead {
  if (text === undefined || text.trim() === '') return { tasks: [], problems: [] };
  // No depth limit on the file as a whole: an entry nested too deep is reported alone, below.
  const json = parseJson(text, Number.POSITIVE_INFINITY);
  if (!json.ok) return { tasks: [], problems: [`${name}: not JSON (${json.error})`] };
  const parsed = registrySchema.safeParse(json.value);
  if (!parsed.success) return { tasks: [], problems: [`${name}: expected {"version": 1, "tasks": [...]}`] };
  const tasks: BlockedTask[] = [];
  const problems: string[] = [];
  parsed.data.tasks.forEach((entry, i) => {
    if (exceedsDepth(entry)) {
      problems.push(`${name}: tasks[${i}]: ${tooDeepReason()}`);
      return;
    }
    const t = blockedTaskSchema.safeParse(entry);
    if (t.success) tasks.push(t.data as BlockedTask);
    else {
      const issue = t.error.issues[0];
      problems.push(`${name}: tasks[${i}]${issue?.path.length ? `.${issue.path.join('.')}` : ''}: ${issue?.message ?? 'invalid'}`);
    }
  });
  return { tasks, problems };
}
