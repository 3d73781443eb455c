import { promises as fs } from 'node:fs';
import { z } from 'zod';
import type { BlockedTask } from '../core/blockedSummary';
import { isObject } from '../core/guards';
import { exceedsDepth, parseJson, tooDeepReason } from '../core/json';
import { readTextIfExists, withFileLock, writeFileAtomic } from './atomicFile';
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

  /** Adds or replaces a task and writes its summary. */
  async block(task: BlockedTask, summary: string): Promise<void> {
    checkTaskId(task.task_id);
    const file = await this.ws.resolveForWrite(PATHS.registry);
    const summaryFile = await this.ws.resolveForWrite(task.summary_file);
    await writeFileAtomic(summaryFile, summary);
    await withFileLock(file, async () => {
      const tasks = await this.readForUpdate(file);
      const next = tasks.filter((t) => !isObject(t) || t.task_id !== task.task_id);
      next.push(task);
      await writeFileAtomic(file, `${JSON.stringify({ version: 1, tasks: next }, null, 2)}\n`);
    });
  }

  /** Removes a task and its summary; true when it was there. */
  async remove(taskId: string): Promise<boolean> {
    checkTaskId(taskId);
    const file = await this.ws.resolveForWrite(PATHS.registry);
    const removed = await withFileLock(file, async () => {
      const tasks = await this.readForUpdate(file);
      const next = tasks.filter((t) => !isObject(t) || t.task_id !== taskId);
      if (next.length === tasks.length) return false;
      await writeFileAtomic(file, `${JSON.stringify({ version: 1, tasks: next }, null, 2)}\n`);
      return true;
    });
    const summary = await this.ws.resolveForWrite(this.summaryPath(taskId));
    const hadSummary = await fs.rm(summary).then(
      () => true,
      () => false,
    );
    return removed || hadSummary;
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
