import { strict as assert } from 'node:assert';
import { copilotChatTranscript, copilotPromptLog, renderedText } from '../../../src/agents/copilot/transcript';
import { callLevel, decode, halts, replayText } from './util';

/** A chat in the shape VS Code's *Export Chat…* writes (our own text). */
function chat(requests: unknown[]) {
  return { requesterUsername: 'u', responderUsername: 'GitHub Copilot', initialLocation: 'panel', requests };
}
const tree = (text: string) => ({ $mid: 20, content: [{ $mid: 23, value: { node: { type: 1, ctor: 2, children: [{ type: 2, priority: 1, text }] } } }] });
function request(id: string, prompt: string, calls: { name: string; args: Record<string, unknown>; id: string; result?: string }[]) {
  const results: Record<string, unknown> = {};
  for (const c of calls) if (c.result !== undefined) results[c.id] = tree(c.result);
  return {
    requestId: id,
    message: { text: prompt, parts: [] },
    response: [{ kind: 'toolInvocationSerialized', toolId: 'copilot_readFile', toolCallId: 'unrelated-uuid', isComplete: true }],
    timestamp: 1762194229850,
    result: { metadata: { toolCallRounds: [{ response: '', toolCalls: calls.map((c) => ({ name: c.name, arguments: JSON.stringify(c.args), id: c.id })), toolInputRetry: 0, id: `r-${id}` }], toolCallResults: results } },
  };
}

describe('Copilot in VS Code: chat documents', () => {
  it('reads the prompt as a user turn, the rounds as calls with their arguments, and the rendered result as the output; a call without a result has no outcome', () => {
    const doc = chat([request('q1', 'fix the footer', [{ name: 'read_file', args: { filePath: '/p/Footer.tsx' }, id: 'c1__vscode-1', result: '```tsx\nexport const Footer' }, { name: 'run_in_terminal', args: { command: 'npm test', explanation: 'Run the tests' }, id: 'c2' }])]);
    const { events, skipped } = decode(copilotChatTranscript, doc.requests, doc);
    assert.deepEqual(skipped, []);
    assert.deepEqual(events.map((e) => e.event.type), ['user', 'prompt', 'tool', 'tool']);
    const [, read, run] = callLevel(events).map((e) => e.event);
    assert.equal(read?.type === 'tool' && read.output, '```tsx\nexport const Footer');
    assert.equal(read?.type === 'tool' && read.ok, true);
    assert.equal(run?.type === 'tool' && run.ok, undefined);
    assert.deepEqual(run?.type === 'tool' && run.args, { command: 'npm test', explanation: 'Run the tests' });
    assert.equal(read?.agent, 'copilot-vscode');
  });

  it('renders a prompt-tsx result tree to its text, in order', () => {
    assert.equal(renderedText({ node: { children: [{ type: 2, text: 'a' }, { children: [{ type: 2, text: 'b' }] }, { type: 2, text: 'c' }] } }), 'abc');
  });

  it('replay: the same search with the same answer, asked three times in a row, halts; auto-detected', async () => {
    const same = (id: string) => ({ name: 'file_search', args: { query: '**/Footer*' }, id, result: 'No files found' });
    const result = await replayText('chat.json', JSON.stringify(chat([request('q1', 'find the footer', [same('a'), same('b'), same('c')])])));
    assert.equal(result.format, 'copilot');
    assert.ok(halts(result).length > 0);
  });

  it('reads the chat debug prompt log: each prompt a turn, each toolCall log a call with its response', () => {
    const doc = { exportedAt: '2026-11-20T10:00:00Z', totalPrompts: 1, prompts: [{ prompt: 'remove the tests', logs: [{ kind: 'element', name: 'x' }, { kind: 'toolCall', id: 't1', tool: 'grep_search', args: '{"query":"x"}', time: '2026-11-20T10:00:01Z', response: ['2 matches'] }] }] };
    const { events } = decode(copilotPromptLog, doc.prompts, doc);
    assert.deepEqual(events.map((e) => [e.event.type, e.event.type === 'tool' ? e.event.output : '']), [['user', ''], ['prompt', ''], ['tool', '2 matches']]);
  });
});
