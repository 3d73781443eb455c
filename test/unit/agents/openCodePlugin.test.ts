import { strict as assert } from 'node:assert';
import { openCodePluginTranscript } from '../../../src/agents/opencode/pluginTranscript';
import { decode, halts, jsonlText, replayText } from './util';

/*
 * The transcript oh-my-opencode's plugin writes for Claude Code's hooks
 * (`~/.claude/transcripts/<sessionID>.jsonl`; its shape from the plugin's source, cited in
 * src/agents/opencode/pluginTranscript.ts), written here entry by entry as the plugin does.
 */

let clock = Date.parse('2026-05-02T09:00:00.000Z');
const at = () => new Date((clock += 4000)).toISOString();
const use = (tool_name: string, tool_input: Record<string, unknown>) => ({ type: 'tool_use', timestamp: at(), tool_name, tool_input });
const done = (tool_name: string, tool_input: Record<string, unknown>, tool_output: Record<string, unknown>) => ({ type: 'tool_result', timestamp: at(), tool_name, tool_input, tool_output });
const FILE = 'ses_6f2a91c3e0ffeYq3Rk2mZx8TnB.jsonl';

describe("an opencode plugin's transcript (oh-my-opencode, for Claude Code's hooks)", () => {
  it('its calls, results, prompts and answers: a result answers its own call even when calls ran side by side; nothing skipped', () => {
    const read = { filePath: '/home/dev/shop/src/cart.ts' };
    const grep = { pattern: 'class Cart', path: '/home/dev/shop/src' };
    const { events, skipped } = decode(openCodePluginTranscript, [
      { type: 'user', timestamp: at(), content: 'Why does the cart total drop the discount?' },
      use('read', read),
      use('grep', grep),
      done('grep', grep, { output: 'src/cart.ts:3: export class Cart {' }),
      done('read', read, { output: '1| export class Cart {', filePath: '/home/dev/shop/src/cart.ts' }),
      { type: 'assistant', timestamp: at(), content: 'The discount is applied after rounding.' },
    ]);
    assert.deepEqual(skipped, []);
    const shown = events.map((e) => (e.event.type === 'tool' ? `tool ${e.event.tool} ${e.event.id}` : e.event.type === 'tool_result' ? `result ${e.event.id} ${e.event.ok ? e.event.output : ''}` : e.event.type));
    assert.deepEqual(shown, ['user', 'prompt', 'tool read call-1', 'tool grep call-2', 'result call-2 src/cart.ts:3: export class Cart {', 'result call-1 1| export class Cart {', 'reply']);
    assert.deepEqual([...new Set(events.map((e) => e.event.session))], ['file-session']);
  });

  it('replay recognises it (before: "not recognised", exit 5); a shell failing the same way three times (an older build kept metadata.exit) halts', async () => {
    const cmd = { command: 'npm run build', description: 'Build' };
    const records: unknown[] = [{ type: 'user', timestamp: at(), content: 'Make the build pass.' }];
    for (let i = 0; i < 3; i++) records.push(use('bash', cmd), done('bash', cmd, { title: 'npm run build', output: "src/cart.ts(3,7): error TS2304: Cannot find name 'Item'.\n", metadata: { exit: 2, description: 'Build' } }));
    const r = await replayText(FILE, jsonlText(records));
    assert.equal(r.format, 'opencode');
    assert.equal(r.byType.tool, 3);
    assert.ok(halts(r).length > 0);
  });

  it('healthy: an edit → test cycle that ends green, each failure a different error, is no loop', async () => {
    const test = { command: 'npx vitest run src/cart', description: 'Run the cart tests' };
    const records: unknown[] = [{ type: 'user', timestamp: at(), content: 'Fix the cart tests.' }];
    const failures = ['FAIL applies the discount: expected 90, received 100', 'FAIL rounds to cents: expected 89.99, received 89.991', "src/cart.ts(2,40): error TS2345: Argument of type 'string' is not assignable"];
    failures.forEach((failure, i) => {
      const edit = { filePath: '/home/dev/shop/src/cart.ts', oldString: `step ${i}`, newString: `step ${i + 1}` };
      records.push(use('edit', edit), done('edit', edit, { output: '', filePath: edit.filePath }));
      records.push(use('bash', test), done('bash', test, { title: 'vitest', output: failure, metadata: { exit: 1 } }));
    });
    records.push(use('bash', test), done('bash', test, { title: 'vitest', output: 'PASS src/cart (3 tests)', metadata: { exit: 0 } }));
    const r = await replayText(FILE, jsonlText(records));
    assert.equal(r.format, 'opencode');
    assert.deepEqual(halts(r), []);
  });

  it("is told from Claude Code's, Qwen Code's and Gemini CLI's records, which carry ids", () => {
    assert.equal(openCodePluginTranscript.sniff({ type: 'user', timestamp: at(), content: 'hi' }), true);
    assert.equal(openCodePluginTranscript.sniff({ type: 'user', timestamp: at(), content: 'hi', id: 'm1' }), false);
    assert.equal(openCodePluginTranscript.sniff({ type: 'user', timestamp: at(), sessionId: 's', uuid: 'u', message: { role: 'user', content: 'hi' } }), false);
    assert.equal(openCodePluginTranscript.sniff({ type: 'tool_result', timestamp: at(), tool_name: 'bash', tool_input: {}, tool_output: { output: '' } }), true);
  });
});
