import { renderBlockedSummary, type BlockedTask } from '../core/blockedSummary';
import type { GuardianConfig } from '../core/config';
import { analyzeTask, currentTier, forceEscalate, type EscalationResult, type TaskAnalysis } from '../core/taskAnalysis';
import { BlockedTaskRegistry } from '../state/blockedTaskRegistry';
import { GuardianLog } from '../state/guardianLog';
import type { Action, Finding } from '../core/finding';
import { groupIncidents } from '../core/incidents';
import { WorkspaceMonitor } from '../watch/workspaceMonitor';
import { collectAttempts } from './taskAttempts';
import { TaskStateStore } from '../state/taskStateStore';
import { checkTaskId, type Workspace } from '../state/workspace';

/** A loop going on in a task, as `analyze` reports it. */
export interface ActiveLoop {
  readonly action: Action;
  readonly signals: readonly string[];
  readonly message: string;
  readonly recommendation: string;
}

/** Seed 003's operations on a task, shared by the CLI and the extension. */
export class TaskOperations {
  private readonly registry: BlockedTaskRegistry;
  private readonly states: TaskStateStore;
  private readonly log: GuardianLog;
  /** What went wrong after an operation's effect was on disk (the guardian log could not be written). */
  readonly warnings: string[] = [];

  constructor(private readonly ws: Workspace, private readonly config: GuardianConfig, private readonly by = 'loop-guardian') {
    this.registry = new BlockedTaskRegistry(ws);
    this.states = new TaskStateStore(ws);
    this.log = new GuardianLog(ws);
  }

  /**
   * Seed 003's analysis of a task's attempts, with the loops the guardian's other signals see going
   * on in the task now (the same ones the editor shows): a task the editor says is looping is never
   * analysed as "no loop". `active`: the findings going on in the workspace when the caller has
   * them already (the editor); otherwise its logs are read, as `scan` reads them.
   */
  async analyze(task: string, active?: readonly Finding[]): Promise<TaskAnalysis & { active_loops: ActiveLoop[] }> {
    const [analysis, loops] = await Promise.all([this.attemptsAnalysis(task), this.activeLoops(task, active)]);
    return { ...analysis, active_loops: loops };
  }

  /** Seed 003's analysis of a task's attempts alone. */
  private async attemptsAnalysis(task: string): Promise<TaskAnalysis> {
    checkTaskId(task);
    const [attempts, state] = await Promise.all([collectAttempts(this.ws, this.config, task), this.states.get(task)]);
    return analyzeTask(task, attempts, state, this.config);
  }

  /** The incidents going on in a task. */
  private async activeLoops(task: string, active?: readonly Finding[]): Promise<ActiveLoop[]> {
    let findings = active;
    if (findings === undefined) {
      const monitor = new WorkspaceMonitor(this.ws, this.config);
      await monitor.poll();
      findings = monitor.active();
    }
    return groupIncidents(findings.filter((f) => f.task === task)).map((i) => ({
      action: i.action,
      signals: [...new Set(i.findings.map((f) => f.signal))],
      message: i.lead.message,
      recommendation: i.lead.recommendation,
    }));
  }

  /** Circuit break: blocks the task, writes its summary and registers it. */
  async break(task: string, reason?: string): Promise<{ entry: BlockedTask; summary: string }> {
    // The summary is seed 003's: the loops other signals see are not read for it.
    const analysis = await this.attemptsAnalysis(task);
    const entry: BlockedTask = {
      task_id: task,
      blocked_at: new Date().toISOString(),
      pattern: analysis.pattern_type,
      attempts: analysis.attempt_count,
      tier: analysis.current_tier,
      reason: reason || this.defaultReason(analysis),
      latest_error: analysis.latest_error,
      repeated_error_count: analysis.repeated_error_count,
      suggested_action: analysis.suggested_action,
      summary_file: this.registry.summaryPath(task),
      ...(analysis.description !== undefined ? { description: analysis.description } : {}),
    };
    const summary = renderBlockedSummary(entry, `loop-guardian cleanup ${task}`);
    await this.registry.block(entry, summary);
    await this.states.update(task, (s) => ({ version: 1, task_id: task, tier_history: [], ...s, status: 'blocked' }));
    await this.note('WARN', `circuit break (${this.by}): task ${task} blocked (${entry.pattern}): ${entry.reason}`);
    return { entry, summary };
  }

  /** Force-escalate: +2 tiers, or HUMAN_INTERVENTION_REQUIRED from the human-review tier. */
  async escalate(task: string, reason = 'Loop detected'): Promise<EscalationResult> {
    checkTaskId(task);
    const attempts = await collectAttempts(this.ws, this.config, task);
    let result: EscalationResult | undefined;
    await this.states.update(task, (state) => {
      result = forceEscalate(task, currentTier(attempts, state), state, reason, new Date().toISOString(), this.config);
      return result.outcome === 'escalated' ? result.state : undefined;
    });
    if (!result) throw new Error(`escalation of ${task} did not run`);
    await this.note(
      result.outcome === 'escalated' ? 'INFO' : 'WARN',
      result.outcome === 'escalated' ? `escalate ${task}: tier ${result.from} → ${result.to} (${reason})` : `escalate ${task}: at tier ${result.tier}, HUMAN_INTERVENTION_REQUIRED (${reason})`,
    );
    return result;
  }

  /** Forgets a blocked task: registry entry, summary and state. True when there was something. */
  async cleanup(task: string): Promise<boolean> {
    const removed = await this.registry.remove(task);
    const state = await this.states.remove(task);
    if (removed || state) await this.note('INFO', `cleanup ${task} (${this.by})`);
    return removed || state;
  }

  private async note(level: 'INFO' | 'WARN', message: string): Promise<void> {
    const problem = await this.log.tryWrite(level, message);
    if (problem !== undefined) this.warnings.push(problem);
  }

  private defaultReason(a: TaskAnalysis): string {
    switch (a.pattern_type) {
      case 'repeated_error':
        return `Same error appearing ${a.repeated_error_count} times`;
      case 'stuck_tier':
        return `${this.config.signals['stuck-tier'].threshold}+ attempts at tier ${a.current_tier} without escalation`;
      case 'quality_gate_loop':
        return 'The same quality-gate check keeps failing';
      case 'none':
        return 'Circuit broken by hand';
    }
  }
}
