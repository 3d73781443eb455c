import type { GuardianConfig, SignalId } from './config';
import { Engine } from './engine';
import type { LocatedEvent } from './events';
import type { GateVerdict } from './verdict';

/**
 * A loop the hook never saw: calls the agent rejected before its hook ran (an agent that checks a
 * call's input before any hook: `unseenInTranscript` in its hook protocol), read afterwards from
 * its transcript and recorded. The engine judges the session's history as it judges every call; a
 * standing halt whose evidence holds one of those calls (`unseen`, by call id) is refused at the
 * first hook call that comes after them, whatever that call is: the loop already ran past the point
 * where its own call would have been refused.
 */
export function unseenLoopVerdict(history: readonly LocatedEvent[], unseen: ReadonlySet<string>, config: GuardianConfig, what: 'call' | 'prompt' = 'call'): GateVerdict {
  if (unseen.size === 0) return { allow: true };
  const deny = new Set<SignalId>(config.hooks.deny);
  const engine = new Engine(config);
  for (const e of history) engine.push(e);
  engine.flush();
  const at = new Map(history.map((e) => [`${e.ref.file}:${e.ref.line}`, e.event]));
  const rests = (file: string, line: number) => {
    const e = at.get(`${file}:${line}`);
    return e !== undefined && (e.type === 'tool' || e.type === 'tool_result') && e.id !== undefined && unseen.has(e.id);
  };
  const halt = engine.active().find((f) => f.action === 'halt' && deny.has(f.signal) && f.evidence.some((r) => rests(r.file, r.line)));
  if (halt === undefined) return { allow: true };
  return {
    allow: false,
    why: 'loop',
    finding: halt,
    reason: `Loop Guardian refused this ${what}: a loop ran that its hook never saw (${halt.signal}, ${halt.count}/${halt.threshold}): ${halt.message}. ${halt.recommendation}`,
  };
}
