/*
 * VS Code's chat session operation log (chatSessions/<id>.jsonl), written here in the shapes of
 * microsoft/vscode `objectMutationLog.ts` (kinds 0 to 3), `chatSessionOperationLog.ts` (the state)
 * and `ChatToolInvocation.toJSON` (the tool parts): our own text, no real session.
 */
export const T = Date.parse('2026-11-20T10:00:00.000Z');
const md = (value: string, uris: Record<string, unknown> = {}) => ({ value, supportThemeIcons: false, supportHtml: false, uris });

export const chat = {
  snapshot: (requests: unknown[] = [], sessionId = 'chat-1') => ({
    kind: 0,
    v: { version: 3, creationDate: T, initialLocation: 'panel', inputState: { attachments: [], mode: { id: 'agent', kind: 'agent' }, inputText: '', selections: [], contrib: {} }, responderUsername: '', sessionId, hasPendingEdits: false, requests, pendingRequests: [] },
  }),
  request: (id: string, text: string, response: unknown[] = [], state = 0) => ({
    requestId: id,
    timestamp: T,
    agent: { id: 'github.copilot.editsAgent' },
    modelId: 'copilot/gpt-5',
    message: { text, parts: [{ kind: 'text', text }] },
    variableData: { variables: [] },
    response,
    responseId: `response_${id}`,
    modelState: { value: state },
    editedFileEvents: [],
  }),
  /** A terminal call as `toJSON` writes it: running (no exit code yet), or done with its exit code and output. */
  terminal: (id: string, command: string, done?: { exitCode: number; output: string }) => ({
    kind: 'toolInvocationSerialized',
    invocationMessage: md(`Running \`${command}\``),
    pastTenseMessage: done ? md(`Ran \`${command}\``) : undefined,
    isConfirmed: { type: 1 },
    isComplete: true,
    source: { type: 'internal', label: 'Built-In' },
    toolSpecificData: {
      kind: 'terminal',
      commandLine: { original: command },
      language: 'sh',
      ...(done ? { terminalCommandState: { exitCode: done.exitCode, timestamp: T + 5_000, duration: 4_000 }, terminalCommandOutput: { text: done.output } } : {}),
    },
    toolCallId: id,
    toolId: 'run_in_terminal',
  }),
  read: (id: string, file: string, lines?: [number, number]) => ({
    kind: 'toolInvocationSerialized',
    invocationMessage: md(`Reading [](file://${file})${lines ? `, lines ${lines[0]} to ${lines[1]}` : ''}`, { [`file://${file}`]: { $mid: 1, path: file, scheme: 'file' } }),
    pastTenseMessage: md(`Read [](file://${file})`),
    isConfirmed: { type: 1 },
    isComplete: true,
    source: { type: 'internal', label: 'Built-In' },
    toolCallId: id,
    toolId: 'copilot_readFile',
  }),
  edit: (id: string) => ({ kind: 'toolInvocationSerialized', presentation: 'hidden', invocationMessage: md('Using "Replace String in File"'), isConfirmed: { type: 1 }, isComplete: true, source: { type: 'internal', label: 'Built-In' }, toolCallId: id, toolId: 'copilot_replaceString' }),
  mcp: (id: string, input: Record<string, unknown>, output: string, isError: boolean) => ({
    kind: 'toolInvocationSerialized',
    invocationMessage: md('Running `update_entry_fields`'),
    pastTenseMessage: md('Ran `update_entry_fields` '),
    isConfirmed: { type: 3, scope: 'profile' },
    isComplete: true,
    source: { type: 'mcp', label: 'entries' },
    resultDetails: { input: JSON.stringify(input, null, 2), output: [{ type: 'embed', isText: true, value: output }], isError },
    toolSpecificData: { kind: 'input', rawInput: input },
    toolCallId: id,
    toolId: 'mcp_entries_update_entry_fields',
  }),
  text: (value: string) => md(value),
  set: (k: (string | number)[], v?: unknown) => ({ kind: 1, k, ...(v !== undefined ? { v } : {}) }),
  push: (k: (string | number)[], v?: unknown[], i?: number) => ({ kind: 2, k, ...(v !== undefined ? { v } : {}), ...(i !== undefined ? { i } : {}) }),
  del: (k: (string | number)[]) => ({ kind: 3, k }),
};

export const failing = (id: string) => chat.terminal(id, 'npm test', { exitCode: 1, output: 'FAIL src/a.test.ts\n  expected 2, received 1' });

/** A session in which the agent runs the same failing `npm test` three times, in the order VS Code writes the saves. */
export function loopingSession(sessionId = 'chat-1'): unknown[] {
  const { snapshot, request, terminal, text, set, push } = chat;
  return [
    snapshot([], sessionId),
    push(['requests'], [request('request_1', 'make the tests pass')]),
    // The first save while the call runs: the response was empty, so it is set whole.
    set(['requests', 0, 'response'], [text('Let me run the tests.'), terminal('call_1', 'npm test')]),
    // The call moved on: it comes again from its index, with the parts after it.
    push(['requests', 0, 'response'], [failing('call_1'), text('Still failing; again.'), terminal('call_2', 'npm test')], 1),
    push(['requests', 0, 'response'], [failing('call_2'), text('Once more.'), failing('call_3')], 3),
    set(['requests', 0, 'modelState'], { value: 1, completedAt: T + 60_000 }),
  ];
}
