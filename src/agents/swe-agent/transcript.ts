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

export const sweAgentTranscript: DocumentAdapter = {
  agent: AGENT,
  layout: 'document',
  sniff: (doc) => isObject(doc) && Array.isArray(doc.trajectory),
  records: (doc) => ({ key: 'trajectory', items: isObject(doc) && Array.isArray(doc.trajectory) ? doc.trajectory : [] }),
  decoder: (session, doc) => new SweAgentDecoder(session, doc),
};

