import { TaskOperations } from '../../tasks/taskOperations';
import type { CommandContext } from '../context';
import { EXIT, json, paint, UsageError } from '../io';

function needTask(task: string | undefined, command: string): string {
  // The id itself is checked by the operations (an invalid one is a usage error too).
  if (task === undefined) throw new UsageError(`${command} needs a TASK id`);
  return task;
}

/** The operations, whose warnings (the effect is on disk, only the log failed) go to stderr. */
function operations(ctx: CommandContext): TaskOperations {
  return new TaskOperations(ctx.ws, ctx.config, 'cli');
}

function warn(ctx: CommandContext, ops: TaskOperations): void {
  for (const w of ops.warnings) ctx.io.err(`warning: ${w}\n`);
}

/** Seed 003's `analyze`: the loop pattern of a task, as JSON, with the loops going on in it (`active_loops`). */
export async function analyzeCommand(ctx: CommandContext, task: string | undefined): Promise<number> {
  const analysis = await operations(ctx).analyze(needTask(task, 'analyze'));
  // stdout keeps seed 003's shape; the loops the other signals see in the task go to stderr, so
  // `analyze` never says "no loop" for a task the editor shows looping.
  const { description: _description, active_loops: loops, ...seedShape } = analysis;
  ctx.io.out(json(seedShape));
  for (const l of loops) ctx.io.err(`${l.action === 'halt' ? 'loop' : 'possible loop'} going on in task ${seedShape.task_id} (${l.signals.join(', ')}): ${l.message}\n  → ${l.recommendation}\n`);
  return analysis.pattern_type === 'none' && !analysis.active_loops.some((l) => l.action === 'halt') ? EXIT.ok : EXIT.loop;
}

/** Seed 003's `break`: marks the task blocked, writes its summary, registers it, prints the summary. */
export async function breakCommand(ctx: CommandContext, task: string | undefined, opts: { reason?: string }): Promise<number> {
  const ops = operations(ctx);
  const { entry, summary } = await ops.break(needTask(task, 'break'), opts.reason);
  warn(ctx, ops);
  if (ctx.json) ctx.io.out(json(entry));
  else ctx.io.out(`${summary}\nSummary written to ${entry.summary_file}\n`);
  return EXIT.ok;
}

/** Seed 003's `force-escalate`: +2 tiers, or HUMAN_INTERVENTION_REQUIRED at the top. */
export async function escalateCommand(ctx: CommandContext, task: string | undefined, opts: { reason?: string }): Promise<number> {
  const id = needTask(task, 'escalate');
  const ops = operations(ctx);
  const result = await ops.escalate(id, opts.reason);
  warn(ctx, ops);
  if (result.outcome === 'HUMAN_INTERVENTION_REQUIRED') {
    ctx.io.out(ctx.json ? json({ task_id: id, outcome: result.outcome, tier: result.tier }) : `HUMAN_INTERVENTION_REQUIRED: task ${id} is at tier ${result.tier}\n`);
    return EXIT.humanRequired;
  }
  ctx.io.out(ctx.json ? json({ task_id: id, outcome: result.outcome, from: result.from, to: result.to }) : `${paint(ctx.io, 'green', '✓')} Escalated to tier ${result.to}\n`);
  return EXIT.ok;
}

/** Seed 003's `cleanup`: forgets a blocked task, its summary and its state. */
export async function cleanupCommand(ctx: CommandContext, task: string | undefined): Promise<number> {
  const id = needTask(task, 'cleanup');
  const ops = operations(ctx);
  const done = await ops.cleanup(id);
  warn(ctx, ops);
  ctx.io.out(ctx.json ? json({ task_id: id, removed: done }) : done ? `${paint(ctx.io, 'green', '✓')} Cleaned up task ${id}\n` : `Task ${id} was not blocked: nothing to clean up\n`);
  return EXIT.ok;
}
