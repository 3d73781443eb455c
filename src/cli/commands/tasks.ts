import { renderBlockedStatus, renderBlockedSummary, type BlockedTask } from '../../core/blockedSummary';
import { analyzeTask, currentTier, forceEscalate, type TaskAnalysis } from '../../core/taskAnalysis';
import { BlockedTaskRegistry } from '../../store/blockedTaskRegistry';
import { collectAttempts } from '../../store/taskAttempts';
import { TaskStateStore } from '../../store/taskStateStore';
import { checkTaskId, PATHS } from '../../store/workspace';
import type { CommandContext } from '../context';
import { EXIT, json, paint, UsageError } from '../io';

function needTask(task: string | undefined, command: string): string {
  if (task === undefined) throw new UsageError(`${command} needs a TASK id`);
  return checkTaskId(task);
}

async function analysisOf(ctx: CommandContext, task: string): Promise<TaskAnalysis> {
  const [attempts, state] = await Promise.all([collectAttempts(ctx.ws, ctx.config, task), new TaskStateStore(ctx.ws).get(task)]);
  return analyzeTask(task, attempts, state, ctx.config);
}

/** Seed 003's `analyze`: the loop pattern of a task, as JSON. */
export async function analyzeCommand(ctx: CommandContext, task: string | undefined): Promise<number> {
  const id = needTask(task, 'analyze');
  const analysis = await analysisOf(ctx, id);
  const { description: _description, ...seedShape } = analysis;
  ctx.io.out(json(seedShape));
  return analysis.pattern_type === 'none' ? EXIT.ok : EXIT.loop;
}

function blockedReason(a: TaskAnalysis, reason: string | undefined, ctx: CommandContext): string {
  if (reason) return reason;
  switch (a.pattern_type) {
    case 'repeated_error':
      return `Same error appearing ${a.repeated_error_count} times`;
    case 'stuck_tier':
      return `${ctx.config.signals['stuck-tier'].threshold}+ attempts at tier ${a.current_tier} without escalation`;
    case 'quality_gate_loop':
      return 'The same quality-gate check keeps failing';
    case 'none':
      return 'Circuit broken by hand';
  }
}

/** Seed 003's `break`: marks the task blocked, writes its summary, registers it, prints the summary. */
export async function breakCommand(ctx: CommandContext, task: string | undefined, opts: { reason?: string }): Promise<number> {
  const id = needTask(task, 'break');
  const analysis = await analysisOf(ctx, id);
  const registry = new BlockedTaskRegistry(ctx.ws);
  const entry: BlockedTask = {
    task_id: id,
    blocked_at: new Date().toISOString(),
    pattern: analysis.pattern_type,
    attempts: analysis.attempt_count,
    tier: analysis.current_tier,
    reason: blockedReason(analysis, opts.reason, ctx),
    latest_error: analysis.latest_error,
    repeated_error_count: analysis.repeated_error_count,
    suggested_action: analysis.suggested_action,
    summary_file: registry.summaryPath(id),
    ...(analysis.description !== undefined ? { description: analysis.description } : {}),
  };
  const summary = renderBlockedSummary(entry, `loop-guardian cleanup ${id}`);
  await registry.block(entry, summary);
  await new TaskStateStore(ctx.ws).update(id, (s) => ({ version: 1, task_id: id, tier_history: [], ...s, status: 'blocked' }));
  await ctx.log.write('WARN', `circuit break: task ${id} blocked (${entry.pattern}): ${entry.reason}`);
  if (ctx.json) ctx.io.out(json(entry));
  else ctx.io.out(`${summary}\nSummary written to ${entry.summary_file}\n`);
  return EXIT.ok;
}

/** Seed 003's `force-escalate`: +2 tiers, or HUMAN_INTERVENTION_REQUIRED at the top. */
export async function escalateCommand(ctx: CommandContext, task: string | undefined, opts: { reason?: string }): Promise<number> {
  const id = needTask(task, 'escalate');
  const store = new TaskStateStore(ctx.ws);
  const attempts = await collectAttempts(ctx.ws, ctx.config, id);
  const reason = opts.reason ?? 'Loop detected';
  let result: ReturnType<typeof forceEscalate> | undefined;
  await store.update(id, (state) => {
    result = forceEscalate(id, currentTier(attempts, state), state, reason, new Date().toISOString(), ctx.config);
    return result.outcome === 'escalated' ? result.state : undefined;
  });
  if (!result) throw new Error('escalation did not run');
  if (result.outcome === 'HUMAN_INTERVENTION_REQUIRED') {
    await ctx.log.write('WARN', `escalate ${id}: at tier ${result.tier}, HUMAN_INTERVENTION_REQUIRED (${reason})`);
    ctx.io.out(ctx.json ? json({ task_id: id, outcome: result.outcome, tier: result.tier }) : `HUMAN_INTERVENTION_REQUIRED: task ${id} is at tier ${result.tier}\n`);
    return EXIT.humanRequired;
  }
  await ctx.log.write('INFO', `escalate ${id}: tier ${result.from} → ${result.to} (${reason})`);
  ctx.io.out(ctx.json ? json({ task_id: id, outcome: result.outcome, from: result.from, to: result.to }) : `${paint(ctx.io, 'green', '✓')} Escalated to tier ${result.to}\n`);
  return EXIT.ok;
}

/** Seed 003's `status`: every blocked task. */
export async function statusCommand(ctx: CommandContext): Promise<number> {
  const read = await new BlockedTaskRegistry(ctx.ws).list();
  for (const p of read.problems) ctx.io.err(`warning: ${p}\n`);
  if (ctx.json) ctx.io.out(json({ blocked: read.tasks }));
  else ctx.io.out(renderBlockedStatus(read.tasks, PATHS.summaries));
  return EXIT.ok;
}

/** Seed 003's `cleanup`: forgets a blocked task, its summary and its state. */
export async function cleanupCommand(ctx: CommandContext, task: string | undefined): Promise<number> {
  const id = needTask(task, 'cleanup');
  const removed = await new BlockedTaskRegistry(ctx.ws).remove(id);
  const state = await new TaskStateStore(ctx.ws).remove(id);
  if (removed || state) await ctx.log.write('INFO', `cleanup ${id}`);
  const done = removed || state;
  ctx.io.out(ctx.json ? json({ task_id: id, removed: done }) : done ? `${paint(ctx.io, 'green', '✓')} Cleaned up task ${id}\n` : `Task ${id} was not blocked: nothing to clean up\n`);
  return EXIT.ok;
}
