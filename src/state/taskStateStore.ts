import { promises as fs } from 'node:fs';
import { z } from 'zod';
import { parseJson } from '../core/json';
import type { TaskState } from '../core/taskAnalysis';
import { readTextIfExists, withFileLock } from './atomicFile';
import { checkTaskId, PATHS, type Workspace } from './workspace';

const stateSchema = z.object({
  version: z.literal(1),
  task_id: z.string(),
  tier: z.number().int().min(1).optional(),
  status: z.enum(['active', 'blocked']),
  tier_history: z.array(z.object({ from: z.number(), to: z.number(), at: z.string(), reason: z.string() })),
});

/** Per-task state with tier history: `.tmp/guardian/tasks/<task>.json`. */
export class TaskStateStore {
  constructor(private readonly ws: Workspace) {}

  relativePath(taskId: string): string {
    return `${PATHS.tasks}/${checkTaskId(taskId)}.json`;
  }

  /** The task's state; undefined when there is none. A corrupt file is an error naming it. */
  async get(taskId: string): Promise<TaskState | undefined> {
    const rel = this.relativePath(taskId);
    const text = await readTextIfExists(this.ws.path(rel));
    return text === undefined ? undefined : parseState(text, rel);
  }

  /** Read-modify-write under the task's lock. `change` returns the new state, or undefined to leave it. */
  async update(taskId: string, change: (current: TaskState | undefined) => TaskState | undefined): Promise<TaskState | undefined> {
    const rel = this.relativePath(taskId);
    const file = await this.ws.resolveForWrite(rel);
    return withFileLock(file, async () => {
      const text = await readTextIfExists(file);
      const next = change(text === undefined ? undefined : parseState(text, rel));
      if (next !== undefined) await this.ws.writeAtomic(rel, `${JSON.stringify(next, null, 2)}\n`);
      return next;
    });
  }

  async remove(taskId: string): Promise<boolean> {
    const file = await this.ws.resolveForWrite(this.relativePath(taskId));
    return fs.rm(file).then(
      () => true,
      () => false,
    );
  }
}

function parseState(text: string, rel: string): TaskState {
  const json = parseJson(text);
  if (!json.ok) throw new Error(`${rel}: ${json.tooDeep ? json.error : `not JSON (${json.error})`}; fix or delete the file`);
  const parsed = stateSchema.safeParse(json.value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`${rel}: ${issue?.path.join('.') || '(file)'}: ${issue?.message ?? 'invalid'}; fix or delete the file`);
  }
  return parsed.data as TaskState;
}
