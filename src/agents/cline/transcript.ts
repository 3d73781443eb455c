import { isObject, isoTime, jsonText, RecentSet, str, type AdapterSink, type Decoder, type DocumentAdapter } from '../transcript';
import { toolBlocks, userEvent, userText, type RecordScope } from '../anthropicBlocks';

const AGENT = 'cline';

/**
 * Cline (and Roo Code) message files: the new `{version, sessionId, messages}` format or a task's
 * `api_conversation_history.json` (a bare array of Anthropic-style messages). Tool uses pair with
 * tool results by id; `is_error` marks failures; a user message without tool results is a turn.
 */
class ClineDecoder implements Decoder {
  private readonly seen = new RecentSet();
  private index = 0;

  constructor(private readonly session: string) {}

  record(value: unknown, line: number, sink: AdapterSink): void {
    const i = this.index++;
    if (!isObject(value)) return sink.skipped(line, `messages[${i}]`, 'not an object');
    const role = value.role;
    if (role !== 'user' && role !== 'assistant') return sink.skipped(line, `messages[${i}].role`, role === undefined ? 'missing' : `unknown role ${jsonText(role)}`);
    const ts = isoTime(value.ts);
    const scope: RecordScope = { session: this.session, agent: AGENT, ...(ts !== undefined ? { ts } : {}) };
    const content = value.content;
    const calls = toolBlocks(content, line, scope, this.seen, sink, `messages[${i}].content`);
    if (role === 'user' && calls === 0) {
      const text = userText(content);
      sink.event(userEvent(scope, text), line);
    }
  }

  finish(): void {}
}

function messagesOf(doc: unknown): unknown[] | undefined {
  if (isObject(doc) && Array.isArray(doc.messages)) return doc.messages;
  if (Array.isArray(doc) && doc.length > 0 && doc.slice(0, 3).every((m) => isObject(m) && typeof m.role === 'string' && 'content' in m)) return doc;
  return undefined;
}

export const clineTranscript: DocumentAdapter = {
  agent: AGENT,
  layout: 'document',
  sniff: (doc) => messagesOf(doc) !== undefined,
  records: (doc) => ({ key: Array.isArray(doc) ? null : 'messages', items: messagesOf(doc) ?? [] }),
  decoder: (session, doc) => new ClineDecoder((isObject(doc) ? str(doc.sessionId) : undefined) ?? session),
};

