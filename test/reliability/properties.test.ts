import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { objectOfJsonText, parseToolHookInput } from '../../src/agents/hook';
import { HOOKED_AGENTS } from '../../src/agents/hooks';
import { resolveConfig } from '../../src/core/config';
import { configSchema } from '../../src/core/configSchema';
import { parseConfigText } from '../../src/state/configFile';
import { replayFile } from '../../src/watch/replay';
import { config, tmpdir } from '../unit/helpers';

/**
 * Issue 12, guarantee 7 (the parsers outsiders feed): random and mutated input never throws and
 * never hangs. Runs are few and small so that the suite stays quick; the mutations are the ones
 * that broke it: deep nesting, huge strings, wrong types, a BOM, random bytes.
 */

const FORMATS = ['events', 'claude', 'codex', 'gemini', 'swe-agent', 'openhands', 'cline'] as const;
/** Generous: a replay of a few lines takes milliseconds; a hang takes minutes. */
const BOUND_MS = 3_000;

const nest = (value: unknown, depth: number): unknown => {
  let v = value;
  for (let i = 0; i < depth; i++) v = [v];
  return v;
};

/** Values with the shapes agents write, including the hostile ones. */
const value: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.integer({ min: 60, max: 3000 }).map((d) => nest({ a: 1 }, d)) },
  { weight: 1, arbitrary: fc.constantFrom('expected '.repeat(20_000), `TypeError: ${'x'.repeat(50_000)}`, '\uFEFF', '') },
);

/** Records shaped like every format's, so that the decoders get past their first checks. */
const record = fc.oneof(
  fc.record({ v: fc.constant(1), type: fc.constantFrom('tool', 'tool_result', 'attempt', 'usage', 'output'), tool: value, args: value, ok: value, error: value, id: value, task: value }, { requiredKeys: ['v', 'type'] }),
  fc.record({ type: fc.constantFrom('assistant', 'user'), sessionId: value, message: fc.record({ role: value, content: fc.array(fc.record({ type: fc.constantFrom('tool_use', 'tool_result', 'text'), id: value, name: value, input: value, content: value, is_error: value }), { maxLength: 3 }) }) }),
  fc.record({ timestamp: value, type: fc.constantFrom('response_item', 'session_meta', 'event_msg'), payload: fc.record({ type: fc.constantFrom('function_call', 'function_call_output'), name: value, arguments: fc.oneof(value, value.map((v) => JSON.stringify(v) ?? '')), call_id: value, output: value }) }),
  fc.record({ type: fc.constantFrom('gemini', 'user', 'tool_call'), toolCalls: fc.array(fc.record({ name: value, args: value, status: value, result: value }), { maxLength: 2 }) }),
  fc.record({ source: fc.constantFrom('agent', 'user'), action: value, observation: value, args: value, content: value }),
  fc.record({ action: value, observation: value, thought: value }),
  fc.dictionary(fc.string({ maxLength: 6 }), value, { maxKeys: 4 }),
);

/** A file's text: JSONL of records, one JSON document, a BOM in front, a line cut or spliced with junk. */
const fileText = fc
  .tuple(
    fc.array(record, { minLength: 1, maxLength: 4 }),
    fc.constantFrom('jsonl', 'document', 'trajectory', 'messages'),
    fc.boolean(),
    fc.option(fc.tuple(fc.nat(), fc.string({ unit: 'binary', maxLength: 8 })), { nil: undefined }),
  )
  .map(([records, layout, bom, splice]) => {
    let text =
      layout === 'jsonl'
        ? records.map((r) => JSON.stringify(r)).join('\n')
        : JSON.stringify(layout === 'trajectory' ? { trajectory: records } : layout === 'messages' ? { messages: records } : records, null, 1);
    if (splice) {
      const at = splice[0] % (text.length + 1);
      text = text.slice(0, at) + splice[1] + text.slice(at);
    }
    return (bom ? '\uFEFF' : '') + text;
  });

describe('properties: the parsers outsiders feed never throw and never hang', function () {
  this.timeout(120_000);
  let dir: string;
  before(async () => {
    dir = await tmpdir('lg-props-');
  });
  after(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('every format through replay: each line is an event or a skipped line with a reason, within a bound', async () => {
    const file = path.join(dir, 'log.jsonl');
    const cfg = config();
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fileText, fc.constantFrom('auto', ...FORMATS), async (text, format) => {
        await fs.writeFile(file, text);
        const started = Date.now();
        // detectFormat may refuse a file no adapter recognises: that is a clear error, not a crash.
        const result = await replayFile(file, `log-${run++}.jsonl`, format, cfg).catch((err: Error) => {
          if (format === 'auto' && err.name === 'UnknownFormatError') return undefined;
          throw err;
        });
        assert.ok(Date.now() - started < BOUND_MS, `${format}: ${Date.now() - started} ms`);
        for (const s of result?.skippedLines ?? []) {
          assert.ok(s.line >= 1 && s.field.length > 0 && s.reason.length > 0, JSON.stringify(s));
        }
      }),
      { numRuns: 150 },
    );
  });

  it('config: random and mutated objects resolve to a valid config; a list is never emptied by repair', () => {
    const list = fc.array(fc.oneof(fc.constantFrom('cycle', 'identical-calls', 'bad', '', 'Task'), fc.integer(), value), { maxLength: 4 });
    const raw = fc.record(
      {
        signals: fc.dictionary(fc.constantFrom('cycle', 'identical-calls', 'budget', 'repeated-error', 'nope'), fc.oneof(value, fc.record({ enabled: value, threshold: value, warnAt: value }))),
        volatileKeys: list,
        exemptTools: list,
        sources: fc.record({ events: list, invocationHistory: value }),
        tiers: fc.record({ max: value, humanReviewFrom: value }),
        agents: fc.dictionary(fc.constantFrom('claude', 'codex', 'maxAgeDays', 'x'), value),
        hooks: fc.record({ deny: list, delegationTools: list }),
        extra: value,
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(fc.oneof(raw, value), (input) => {
        const { config: c, problems } = resolveConfig(input);
        assert.ok(configSchema.safeParse(c).success);
        for (const p of problems) assert.ok(p.path.length > 0 && p.message.length > 0);
        const given = input as { hooks?: { deny?: unknown[]; delegationTools?: unknown[] }; volatileKeys?: unknown[]; sources?: { events?: unknown[] } };
        // Lists given with entries (all kept, some dropped, or all dropped and so defaulted) are never left empty.
        if (given?.hooks?.deny?.length) assert.ok(c.hooks.deny.length > 0);
        if (given?.hooks?.delegationTools?.length) assert.ok(c.hooks.delegationTools.length > 0);
        if (given?.volatileKeys?.length) assert.ok(c.volatileKeys.length > 0);
        assert.ok(c.sources.events.length > 0);
      }),
      { numRuns: 300 },
    );
  });

  it('config: random and mutated file text (a BOM, junk, deep nesting) never throws', () => {
    const text = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 40 }),
      fc.tuple(fc.jsonValue({ maxDepth: 3 }), fc.boolean()).map(([v, bom]) => `${bom ? '\uFEFF' : ''}${JSON.stringify({ signals: v, hooks: { deny: [v] } })}`),
      fc.integer({ min: 60, max: 5000 }).map((d) => `{"hooks":{"deny":${'['.repeat(d)}${']'.repeat(d)}}}`),
    );
    fc.assert(
      fc.property(text, (t) => {
        const loaded = parseConfigText(t, 'config.json');
        assert.ok(configSchema.safeParse(loaded.config).success);
      }),
      { numRuns: 300 },
    );
  });

  it('the hook stdin parser never throws; a value nested too deep is a problem it names', () => {
    const events = { pre: 'PreToolUse', post: ['PostToolUse'] };
    fc.assert(
      fc.property(fc.oneof(fc.anything(), fc.record({ hook_event_name: value, session_id: value, tool_name: value, tool_input: value, tool_response: value, error: value })), (raw) => {
        const call = parseToolHookInput(events, raw);
        if ('problem' in call) assert.match(call.problem, /^stdin: /);
      }),
      { numRuns: 300 },
    );
    const deep = parseToolHookInput(events, { tool_name: 'Bash', tool_input: nest({}, 5000) });
    assert.deepEqual(deep, { problem: 'stdin: nested deeper than 64 levels' });
  });

  it("every agent's hook refuses a payload nested too deep in any of its dialects, and never throws", () => {
    const deep = nest({}, 5000);
    const payloads = [
      { hook_event_name: 'PreToolUse', session_id: 's', tool_name: 'Bash', tool_input: deep },
      { sessionId: 's', toolName: 'bash', toolArgs: deep }, // Copilot CLI's camelCase
      { hook_event_name: 'beforeShellExecution', conversation_id: 's', command: 'ls', extra: deep }, // Cursor
      { agent_action_name: 'pre_run_command', trajectory_id: 's', tool_info: deep }, // Windsurf
      { hookName: 'PreToolUse', taskId: 's', preToolUse: deep }, // Cline
    ];
    for (const agent of HOOKED_AGENTS) {
      for (const raw of payloads) {
        const call = agent.hook.parse(raw);
        assert.deepEqual(call, { problem: 'stdin: nested deeper than 64 levels' }, `${agent.id}: ${Object.keys(raw).join(',')}`);
      }
    }
  });

  it('a field sent as JSON text (Copilot CLI toolArgs, Cursor tool_input) nested too deep is kept as text, never parsed past the limit', () => {
    const text = `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`;
    assert.deepEqual(objectOfJsonText(text), { input: text });
    assert.deepEqual(objectOfJsonText('{"command":"ls"}'), { command: 'ls' });
    assert.deepEqual(objectOfJsonText('ls -la'), { input: 'ls -la' });
    assert.deepEqual(objectOfJsonText('[1]'), { input: [1] });
    assert.deepEqual(objectOfJsonText(undefined), {});
    const cli = HOOKED_AGENTS.find((a) => a.id === 'copilot-cli');
    const call = cli?.hook.parse({ sessionId: 's', toolName: 'bash', toolArgs: text });
    assert.ok(call !== undefined && !('problem' in call));
    assert.deepEqual(call.input, { input: text });
  });
});
