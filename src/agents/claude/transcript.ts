import { isObject, isoTime, RecentSet, str, unknownType, type AdapterSink, type Decoder, type JsonlAdapter } from '../transcript';
import { toolBlocks, userEvent, userText, type RecordScope } from '../anthropicBlocks';

/** Record types Claude Code writes that say nothing about tool calls. */
const IGNORED = new Set([
  'summary',
  'system',
  'progress',
  'attachment',
  'file-history-snapshot',
  'queue-operation',
  'custom-title',
  'ai-title',
  'tag',
  'agent-name',
  'last-prompt',
  'pr-link',
  'permission-mode',
]);
const AGENT = 'claude-code';

class ClaudeDecoder implements Decoder {
  private readonly seen = new RecentSet();

  constructor(private readonly fallbackSession: string) {}

  record(value: unknown, line: number, sink: AdapterSink): void {
    if (!isObject(value)) return sink.skipped(line, '(line)', 'not a JSON object');
    const type = value.type;
    if (type !== 'user' && type !== 'assistant') {
      if (typeof type === 'string' && IGNORED.has(type)) return;
      return unknownType(sink, line, 'type', type);
    }
    const message = value.message;
    if (!isObject(message)) return sink.skipped(line, 'message', `a ${type} record without a message`);
    const base = str(value.sessionId) ?? this.fallbackSession;
    // Subagents' lines (sidechains) are their own sessions: their calls do not interleave the parent's.
    const session = value.isSidechain === true ? `${base}/${str(value.agentId) ?? 'sidechain'}` : base;
    const ts = isoTime(value.timestamp);
    const scope: RecordScope = { session, agent: AGENT, ...(ts !== undefined ? { ts } : {}) };
    const content = message.content;
    if (type === 'assistant') {
      toolBlocks(content, line, scope, this.seen, sink, 'message.content');
      return;
    }
    if (toolBlocks(content, line, scope, this.seen, sink, 'message.content') > 0) return;
    // What the person typed (not meta lines the CLI injects) starts a new turn.
    if (value.isMeta === true || value.isCompactSummary === true) return;
    const uuid = str(value.uuid);
    if (uuid !== undefined && !this.seen.add(`user:${uuid}`)) return;
    const text = userText(content);
    sink.event(userEvent(scope, text), line);
  }

  finish(): void {}
}

/** Claude Code transcripts: `~/.claude/projects/<project>/<session>.jsonl`. */
export const claudeTranscript: JsonlAdapter = {
  agent: AGENT,
  layout: 'jsonl',
  sniff: (first) =>
    typeof first.type === 'string' &&
    (typeof first.sessionId === 'string' || typeof first.leafUuid === 'string' || typeof first.uuid === 'string' || first.type === 'file-history-snapshot' || first.type === 'summary') &&
    !('payload' in first),
  decoder: (fallbackSession) => new ClaudeDecoder(fallbackSession),
};
