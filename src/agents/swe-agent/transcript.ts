import { boundedText } from '../../core/redact';
import { withBase } from '../eventBuilders';
import { isObject, jsonText, parseArgsText, type AdapterSink, type Decoder, type DocumentAdapter, type Json } from '../transcript';

const AGENT = 'swe-agent';

/** The function calls of a function-calling run, one per action message, in order. */
function functionCalls(history: unknown): ({ name: string; args: Json } | undefined)[] {
  if (!Array.isArray(history)) return [];
  const calls: ({ name: string; args: Json } | undefined)[] = [];
  for (const m of history) {
    if (!isObject(m) || m.role !== 'assistant' || (m.message_type !== undefined && m.message_type !== 'action')) continue;
    const first = Array.isArray(m.tool_calls) ? m.tool_calls[0] : undefined;
    const fn = isObject(first) && isObject(first.function) ? first.function : undefined;
    calls.push(fn && typeof fn.name === 'string' ? { name: fn.name, args: parseArgsText(fn.arguments) } : undefined);
  }
  return calls;
}

/**
 * SWE-agent trajectories: each step's `action` is the command it ran (its first word names the
 * tool, unless the run used function calling, whose calls `history` holds) and `observation` what
 * came back. There are no timestamps and no error flag: every step is a call whose output is its
 * observation, and nothing is guessed from the text.
 */
class SweAgentDecoder implements Decoder {
  private step = 0;
  private readonly calls: ({ name: string; args: Json } | undefined)[];

  constructor(private readonly session: string, doc: unknown) {
    this.calls = isObject(doc) ? functionCalls(doc.history) : [];
  }

  record(value: unknown, line: number, sink: AdapterSink): void {
    const index = this.step++;
    if (!isObject(value)) return sink.skipped(line, `trajectory[${index}]`, 'not an object');
    if (typeof value.action !== 'string') return sink.skipped(line, `trajectory[${index}].action`, value.action === undefined ? 'missing' : 'not a string');
    const command = value.action.trim();
    if (command === '') return sink.skipped(line, `trajectory[${index}].action`, 'empty action');
    const fc = this.calls[index];
    const tool = fc?.name ?? (command.split(/\s+/, 1)[0] as string);
    const args = fc?.args ?? { command };
    const observation = typeof value.observation === 'string' ? value.observation : jsonText(value.observation ?? '');
    sink.event({ v: 1, type: 'tool', session: this.session, agent: AGENT, tool, args, ok: true, output: observation }, line);
  }

  finish(): void {}
}

/**
 * A trajectory that carries only its `history` (princeton-nlp/SWE-agent
 * `trajectories/demonstrations/function_calling_simple.traj`): the messages the model saw. An
 * assistant message with an `action` is a call (named by its function call when it has one, else
 * by the action's first word); the observation that follows it (`role: "tool"`, or a `user`
 * message marked `message_type: "observation"`, or, in older histories that mark nothing, the
 * next user message) is its output. Demonstration messages (`is_demo`) are another run's: skipped
 * silently. A user message while no call waits is a turn. As with trajectories, nothing says a
 * step failed.
 */
class SweAgentHistoryDecoder implements Decoder {
  private index = 0;
  private waiting: { tool: string; args: Json; line: number } | undefined;

  constructor(private readonly session: string) {}

  record(value: unknown, line: number, sink: AdapterSink): void {
    const i = this.index++;
    if (!isObject(value)) return sink.skipped(line, `history[${i}]`, 'not an object');
    if (value.is_demo === true) return;
    const base = { v: 1 as const, session: this.session, agent: AGENT };
    const role = value.role;
    if (role === 'assistant') {
      this.settle(sink);
      const command = typeof value.action === 'string' ? value.action.trim() : '';
      const first = Array.isArray(value.tool_calls) ? value.tool_calls[0] : undefined;
      const fn = isObject(first) && isObject(first.function) ? first.function : undefined;
      if (fn && typeof fn.name === 'string') this.waiting = { tool: fn.name, args: parseArgsText(fn.arguments), line };
      else if (command !== '') this.waiting = { tool: command.split(/\s+/, 1)[0] as string, args: { command }, line };
      // An assistant message without an action is the model thinking aloud (or its last words).
      return;
    }
    if (role === 'tool' || role === 'user') {
      const text = typeof value.content === 'string' ? value.content : jsonText(value.content ?? '');
      const call = this.waiting;
      if (call !== undefined && (role === 'tool' || value.message_type === 'observation' || value.message_type === undefined)) {
        this.waiting = undefined;
        sink.event(withBase(base, { type: 'tool', tool: call.tool, args: call.args, ok: true, output: text }), call.line);
        return;
      }
      if (role === 'user' && value.message_type !== 'observation') {
        sink.event(withBase(base, { type: 'user', ...(text !== '' ? { text: text.slice(0, 500) } : {}) }), line);
        sink.event(withBase(base, { type: 'prompt', text: boundedText(text) }), line);
      }
      return;
    }
    if (role === 'system') return;
    sink.skipped(line, `history[${i}].role`, role === undefined ? 'missing' : `unknown role ${jsonText(role)}`);
  }

  /** A call whose observation never came: what it did is unknown. */
  private settle(sink: AdapterSink): void {
    const call = this.waiting;
    if (call === undefined) return;
    this.waiting = undefined;
    sink.event({ v: 1, type: 'tool', session: this.session, agent: AGENT, tool: call.tool, args: call.args }, call.line);
  }

  finish(sink: AdapterSink): void {
    this.settle(sink);
  }
}

function hasTrajectory(doc: unknown): doc is Json & { trajectory: unknown[] } {
  return isObject(doc) && Array.isArray(doc.trajectory);
}

/** A history of messages with at least one action: a run's history, without its trajectory. */
function historyOnly(doc: unknown): doc is Json & { history: unknown[] } {
  return isObject(doc) && !Array.isArray(doc.trajectory) && Array.isArray(doc.history) && doc.history.some((m) => isObject(m) && m.role === 'assistant' && (typeof m.action === 'string' || Array.isArray(m.tool_calls)));
}

export const sweAgentTranscript: DocumentAdapter = {
  agent: AGENT,
  layout: 'document',
  sniff: (doc) => hasTrajectory(doc) || historyOnly(doc),
  records: (doc) => (hasTrajectory(doc) ? { key: 'trajectory', items: doc.trajectory } : historyOnly(doc) ? { key: 'history', items: doc.history } : { key: 'trajectory', items: [] }),
  decoder: (session, doc) => (hasTrajectory(doc) || !historyOnly(doc) ? new SweAgentDecoder(session, doc) : new SweAgentHistoryDecoder(session)),
};
