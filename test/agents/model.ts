import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/*
 * A scripted model on 127.0.0.1 that speaks the four wire formats the agents' own CLIs use, so
 * that an agent's real tool runner, hook runner and transcript writer are what a live test
 * exercises (../shared/docs/live-agents.md, "The providers' wire formats"):
 * - Anthropic Messages, streamed (Claude Code): `POST /v1/messages`, SSE `message_start`,
 *   `content_block_start` / `_delta` / `_stop`, `message_delta` with the stop reason, `message_stop`
 *   (docs.anthropic.com, "Streaming Messages");
 * - OpenAI Responses, streamed (Codex): `POST /v1/responses`, SSE `response.created`,
 *   `response.output_item.added` / `.done`, `response.completed` (platform.openai.com, "Streaming
 *   API responses"; openai/codex `codex-rs/codex-api/src/sse/responses.rs` reads these);
 * - OpenAI Chat Completions, streamed or not (Copilot CLI, Cline, Qwen): `POST /v1/chat/completions`,
 *   `chat.completion.chunk`s with `delta.tool_calls`, then `[DONE]`; `GET /v1/models`;
 * - Gemini (Gemini CLI): `POST /v1beta/models/<m>:streamGenerateContent?alt=sse` with a
 *   `functionCall` part, `:generateContent` and `:countTokens` for its side requests.
 *
 * Each request that offers tools is one turn of the script: the script sees which tools are offered
 * and what the agent sent back for the last call, and answers with a tool call or a final text.
 * Requests without tools (titles, routing, summaries) get a short text and are not turns.
 */

export type WireFormat = 'anthropic' | 'responses' | 'chat' | 'gemini';

/** What the script is told of a turn. */
export interface Turn {
  /** 1 for the first request that offers tools. */
  readonly index: number;
  readonly format: WireFormat;
  /** The names of the tools the agent offered. */
  readonly tools: readonly string[];
  /** The text the agent sent back for the model's last tool call (its output, an error, a refusal); '' on the first turn. */
  readonly lastResult: string;
}

/**
 * A tool call the model makes, or its final answer. `freeform` is the raw input of a call to a
 * freeform (custom) tool, which the Responses API sends as a `custom_tool_call` with `input` text
 * instead of a `function_call` with JSON arguments (Codex's `apply_patch` for its own models);
 * `args` then says the same for the script's records.
 */
export type Step = { readonly tool: string; readonly args: Record<string, unknown>; readonly freeform?: string } | { readonly text: string };

export type Script = (turn: Turn) => Step;

/** One request the model received. */
export interface ModelRequest {
  readonly at: number;
  readonly format: WireFormat;
  readonly path: string;
  readonly offersTools: boolean;
  /** The turn it was, for a request that offers tools. */
  readonly turn?: number;
  readonly lastResult: string;
  readonly step?: Step;
  /** The names of the tools it offered (none for a request without tools). */
  readonly tools: readonly string[];
}

export interface ScriptedModel {
  readonly port: number;
  readonly url: string;
  /** Every request, in the order received. */
  readonly requests: readonly ModelRequest[];
  /** The requests that offered tools: the model requests an agent pays for. */
  turns(): readonly ModelRequest[];
  /** Called as each turn arrives, before it is answered (a test writes STOP_ALL here, mid-run). */
  onTurn(listener: (turn: ModelRequest) => void): void;
  close(): Promise<void>;
}

export async function startScriptedModel(script: Script): Promise<ScriptedModel> {
  const requests: ModelRequest[] = [];
  const listeners: ((r: ModelRequest) => void)[] = [];
  let turn = 0;
  let callId = 0;
  const server: Server = createServer((req, res) => {
    void readBody(req).then((body) => {
      try {
        route(req, res, body);
      } catch (err) {
        res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: String(err) } }));
      }
    });
  });

  function answer(format: WireFormat, path: string, body: Record<string, unknown>): Step {
    const tools = toolNames(format, body);
    const lastResult = lastToolResult(format, body);
    if (tools.length === 0) {
      requests.push({ at: Date.now(), format, path, offersTools: false, lastResult, tools });
      return { text: 'ok' };
    }
    turn++;
    const step = script({ index: turn, format, tools, lastResult });
    const request: ModelRequest = { at: Date.now(), format, path, offersTools: true, turn, lastResult, step, tools };
    requests.push(request);
    for (const l of listeners) l(request);
    return step;
  }

  function route(req: IncomingMessage, res: ServerResponse, raw: string): void {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const path = url.pathname;
    if (req.method === 'GET' && /\/models\/?$/.test(path)) {
      json(res, { object: 'list', data: [{ id: 'scripted', object: 'model', created: 0, owned_by: 'test' }] });
      return;
    }
    if (req.method === 'HEAD' || req.method === 'GET') {
      json(res, {});
      return;
    }
    const body = parseBody(raw);
    if (path.endsWith('/messages/count_tokens')) return json(res, { input_tokens: 100 });
    if (path.endsWith('/messages')) {
      const step = answer('anthropic', path, body);
      return body.stream === true ? sse(res, anthropicEvents(step, ++callId)) : json(res, anthropicMessage(step, ++callId));
    }
    if (path.endsWith('/responses')) {
      const step = answer('responses', path, body);
      return sse(res, responsesEvents(step, ++callId));
    }
    if (path.endsWith('/chat/completions')) {
      const step = answer('chat', path, body);
      return body.stream === true ? sse(res, chatChunks(step, ++callId, body.stream_options)) : json(res, chatCompletion(step, ++callId));
    }
    if (path.includes(':countTokens')) return json(res, { totalTokens: 100 });
    if (path.includes(':streamGenerateContent')) {
      const step = answer('gemini', path, body);
      return sse(res, [geminiResponse(step)]);
    }
    if (path.includes(':generateContent')) {
      const step = answer('gemini', path, body);
      return json(res, geminiResponse(step));
    }
    res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `not scripted: ${req.method} ${path}` } }));
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    requests,
    turns: () => requests.filter((r) => r.offersTools),
    onTurn: (l) => listeners.push(l),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', () => resolve(''));
  });
}

function parseBody(raw: string): Record<string, unknown> {
  try {
    const v = JSON.parse(raw) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function json(res: ServerResponse, value: unknown): void {
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(value));
}

/** Server-sent events: `{event?, data}` each, `data` JSON (or the literal `[DONE]`). */
function sse(res: ServerResponse, events: readonly (Record<string, unknown> | { readonly raw: string })[]): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  for (const e of events) {
    if ('raw' in e) {
      res.write(`data: ${e.raw}\n\n`);
      continue;
    }
    const name = typeof e.type === 'string' ? `event: ${e.type}\n` : '';
    res.write(`${name}data: ${JSON.stringify(e)}\n\n`);
  }
  res.end();
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** The tool names a request offers, in each format's shape. */
function toolNames(format: WireFormat, body: Obj): string[] {
  if (format === 'gemini') {
    return arr(body.tools).flatMap((t) => (isObj(t) ? arr(t.functionDeclarations ?? t.function_declarations) : [])).flatMap((d) => (isObj(d) && typeof d.name === 'string' ? [d.name] : []));
  }
  return arr(body.tools).flatMap((t) => {
    if (!isObj(t)) return [];
    if (typeof t.name === 'string') return [t.name];
    if (isObj(t.function) && typeof t.function.name === 'string') return [t.function.name];
    return typeof t.type === 'string' ? [t.type] : [];
  });
}

/** Text of a content value: a string, or the text of its blocks / parts. */
function textOf(v: unknown): string {
  if (typeof v === 'string') return v;
  if (Array.isArray(v)) return v.map(textOf).join('\n');
  if (isObj(v)) {
    if (typeof v.text === 'string') return v.text;
    if (v.content !== undefined) return textOf(v.content);
    if (v.output !== undefined) return textOf(v.output);
    return JSON.stringify(v);
  }
  return v === undefined || v === null ? '' : String(v);
}

/** What the agent sent back for the model's last tool call. */
function lastToolResult(format: WireFormat, body: Obj): string {
  if (format === 'anthropic') {
    for (const m of arr(body.messages).reverse()) {
      const blocks = isObj(m) ? arr(m.content).filter((b) => isObj(b) && b.type === 'tool_result') : [];
      if (blocks.length > 0) return blocks.map((b) => textOf((b as Obj).content)).join('\n');
    }
    return '';
  }
  if (format === 'responses') {
    for (const item of arr(body.input).reverse()) {
      if (isObj(item) && (item.type === 'function_call_output' || item.type === 'custom_tool_call_output')) return textOf(item.output);
    }
    return '';
  }
  if (format === 'chat') {
    for (const m of arr(body.messages).reverse()) {
      if (isObj(m) && m.role === 'tool') return textOf(m.content);
      // Agents that call tools in text (XML) send results back as a user message.
      if (isObj(m) && m.role === 'user' && m !== arr(body.messages)[0]) return textOf(m.content);
    }
    return '';
  }
  for (const c of arr(body.contents).reverse()) {
    const parts = isObj(c) ? arr(c.parts).filter((p) => isObj(p) && isObj(p.functionResponse)) : [];
    if (parts.length > 0) return parts.map((p) => JSON.stringify((p as { functionResponse: Obj }).functionResponse.response)).join('\n');
  }
  return '';
}

const USAGE = { input_tokens: 100, output_tokens: 10 };

function anthropicMessage(step: Step, n: number): Obj {
  const content = 'tool' in step ? [{ type: 'tool_use', id: `toolu_${n}`, name: step.tool, input: step.args }] : [{ type: 'text', text: step.text }];
  return { id: `msg_${n}`, type: 'message', role: 'assistant', model: 'scripted', content, stop_reason: 'tool' in step ? 'tool_use' : 'end_turn', stop_sequence: null, usage: USAGE };
}

function anthropicEvents(step: Step, n: number): Obj[] {
  const start = { type: 'message_start', message: { ...anthropicMessage(step, n), content: [], stop_reason: null, usage: { input_tokens: 100, output_tokens: 1 } } };
  const block =
    'tool' in step
      ? [
          { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: `toolu_${n}`, name: step.tool, input: {} } },
          { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(step.args) } },
        ]
      : [
          { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
          { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: step.text } },
        ];
  return [
    start,
    ...block,
    { type: 'content_block_stop', index: 0 },
    { type: 'message_delta', delta: { stop_reason: 'tool' in step ? 'tool_use' : 'end_turn', stop_sequence: null }, usage: { output_tokens: 10 } },
    { type: 'message_stop' },
  ];
}

function responsesEvents(step: Step, n: number): Obj[] {
  // A freeform tool's call (platform.openai.com, "Custom tools": `{type: "custom_tool_call", call_id, name, input}`).
  const item =
    'tool' in step
      ? step.freeform !== undefined
        ? { type: 'custom_tool_call', id: `ctc_${n}`, call_id: `call_${n}`, name: step.tool, input: step.freeform, status: 'completed' }
        : { type: 'function_call', id: `fc_${n}`, call_id: `call_${n}`, name: step.tool, arguments: JSON.stringify(step.args), status: 'completed' }
      : { type: 'message', id: `msg_${n}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: step.text, annotations: [] }] };
  const response = { id: `resp_${n}`, object: 'response', status: 'in_progress', model: 'scripted', output: [] as Obj[] };
  const usage = { input_tokens: 100, input_tokens_details: { cached_tokens: 0 }, output_tokens: 10, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 110 };
  return [
    { type: 'response.created', response },
    { type: 'response.output_item.added', output_index: 0, item: { ...item, status: 'in_progress' } },
    { type: 'response.output_item.done', output_index: 0, item },
    { type: 'response.completed', response: { ...response, status: 'completed', output: [item], usage } },
  ];
}

function chatCompletion(step: Step, n: number): Obj {
  const message = 'tool' in step ? { role: 'assistant', content: null, tool_calls: [{ id: `call_${n}`, type: 'function', function: { name: step.tool, arguments: JSON.stringify(step.args) } }] } : { role: 'assistant', content: step.text };
  return {
    id: `chatcmpl-${n}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: 'scripted',
    choices: [{ index: 0, message, finish_reason: 'tool' in step ? 'tool_calls' : 'stop' }],
    usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 },
  };
}

function chatChunks(step: Step, n: number, options: unknown): (Obj | { raw: string })[] {
  const base = { id: `chatcmpl-${n}`, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model: 'scripted' };
  const delta = 'tool' in step ? { role: 'assistant', content: null, tool_calls: [{ index: 0, id: `call_${n}`, type: 'function', function: { name: step.tool, arguments: JSON.stringify(step.args) } }] } : { role: 'assistant', content: step.text };
  const usage = { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 };
  const withUsage = isObj(options) && options.include_usage === true;
  return [
    { ...base, choices: [{ index: 0, delta, finish_reason: null }] },
    { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'tool' in step ? 'tool_calls' : 'stop' }], ...(withUsage ? {} : { usage }) },
    ...(withUsage ? [{ ...base, choices: [], usage }] : []),
    { raw: '[DONE]' },
  ];
}

function geminiResponse(step: Step): Obj {
  const part = 'tool' in step ? { functionCall: { name: step.tool, args: step.args } } : { text: step.text };
  return {
    candidates: [{ content: { role: 'model', parts: [part] }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: 100, candidatesTokenCount: 10, totalTokenCount: 110 },
    modelVersion: 'scripted',
  };
}
