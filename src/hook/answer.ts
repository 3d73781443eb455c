import { denyReply, type DenyStyle, type HookCall, type HookReply } from '../agents/hook';
import type { HookedAgent } from '../agents/hooks';
import { GuardianLog } from '../state/guardianLog';
import type { Workspace } from '../state/workspace';
import { handOver, handsOver } from './handover';
import { publishInBackground } from './publish';

/** What the model reads where the agent cannot be ended from its hook: it is asked to end its turn itself. */
const CANNOT_END = 'Loop Guardian cannot end this run from its hook: end your turn now, without another tool call, and tell the person what happened.';

/**
 * The hook's answers to one call, in the agent's form, and what it says of them in the guardian's
 * log: only what happened ("refused", and "ended the run" only where the agent ends it on this
 * reply). What is learnt along the way (the project, the call, the agent that really called) is
 * set on it as the pipeline goes.
 */
export class HookAnswers {
  /** The project's workspace, once found: where the guardian's log is written. */
  ws: Workspace | undefined;
  /** The call, once parsed. */
  call: HookCall | undefined;
  /** The agent the call is from: the one named, unless its payload says another that shares its hook file. */
  who: HookedAgent;
  /** What the agent is told besides the answer (a STOP_ALL that could not be read, a call let through on an error). */
  private readonly notes: string[] = [];

  constructor(
    /** The agent whose hook entry ran (its protocol answers). */
    private readonly agent: HookedAgent,
    private readonly style: DenyStyle,
    private readonly env: NodeJS.ProcessEnv,
  ) {
    this.who = agent;
  }

  /** A line in the guardian's log, written at once (a synchronous append that refuses a FIFO in the log's place); a failure to write it never changes the decision. */
  log(level: 'WARN' | 'ERROR', message: string): void {
    if (this.ws) void new GuardianLog(this.ws).write(level, message).catch(() => undefined);
  }

  /** Something the agent is told along with the answer. */
  note(message: string): void {
    this.notes.push(message);
  }

  allow(): HookReply {
    return this.agent.hook.allow(this.notes.length > 0 ? this.notes.map((n) => `loop-guardian hook ${this.who.id}: ${n}`).join('\n') : undefined);
  }

  /** The call let through on a failure of the hook's own, said in the log and to the agent. */
  failOpen(what: string): HookReply {
    const message = `${what}; the call is allowed (fail-open)`;
    this.log('ERROR', `hook ${this.who.id}: ${message}`);
    this.note(message);
    return this.allow();
  }

  /**
   * The call refused. `end`: the agent's run is ended as well where it can be (STOP; a halt the
   * agent keeps retrying): where the agent ends it only at the call's permission request, the
   * refusal is handed over there; where it cannot be ended, the model is asked to end its turn.
   */
  refuse(verdict: { reason: string; why?: string }, what: string, end = verdict.why === 'stop'): HookReply {
    const { call, ws, who } = this;
    if (end && this.style === 'json' && call !== undefined && ws !== undefined && handsOver(this.agent, who, ws, call) && handOver(ws, who, call)) {
      this.log('WARN', `hook ${who.id}: ${what}: to be refused, and the run ended, at the agent's permission request: ${verdict.reason}`);
      return this.agent.hook.allow();
    }
    const refusal = denyReply(this.agent.hook, verdict.reason, this.style, call, end, verdict.why !== undefined ? `${verdict.reason} ${CANNOT_END}` : verdict.reason);
    if (refusal === undefined) {
      // A prompt this agent (or the dialect it called in) cannot refuse: recorded, and said.
      this.log('WARN', `hook ${who.id}: would refuse ${what}, but this agent cannot refuse a prompt: ${verdict.reason}`);
      this.note(`${what} cannot be refused here: ${verdict.reason}`);
      return this.allow();
    }
    // Said as it is: "ended the run" only where the agent ends it on this reply (its protocol says, per event and call).
    const outcome = refusal.ends ? ' and ended the run' : end && call?.phase !== 'prompt' ? ` (the run goes on: ${who.id} does not end it from its ${call?.event ?? 'hook'} hook${call?.tool !== undefined ? ` for ${call.tool}` : ''}; the model is asked to end its turn)` : '';
    this.log('WARN', `hook ${who.id}: refused ${what}${outcome}: ${verdict.reason}`);
    if (verdict.why === 'loop' && ws !== undefined) publishInBackground(this.env, ws.root);
    return refusal.reply;
  }
}
