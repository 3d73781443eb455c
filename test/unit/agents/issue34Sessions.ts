import { jsonlText } from './util';

/*
 * Issue 34's sessions, written in Claude Code's transcript format (see issue34Loops.test.ts), shared
 * with the one-judgement test (test/unit/core/oneJudgement.test.ts).
 */

export type Rec = Record<string, unknown>;

/** A Claude Code subagent's transcript, written record by record. */
export class Transcript {
  readonly records: Rec[] = [];
  private n = 0;
  private last: string | null = null;
  private clock = Date.parse('2026-04-02T10:00:00.000Z');

  constructor(
    private readonly sessionId = '7d2c1a90-5b1e-4c1f-9a57-3f0f5e1b2c44',
    private readonly agentId = 'a3f91c2',
  ) {}

  private base(seconds: number): Rec {
    this.clock += seconds * 1000;
    const uuid = `00000000-0000-4000-8000-${String(++this.n).padStart(12, '0')}`;
    const rec: Rec = { parentUuid: this.last, isSidechain: true, agentId: this.agentId, userType: 'external', cwd: '/home/dev/shop', sessionId: this.sessionId, version: '2.1.5', gitBranch: 'main', uuid, timestamp: new Date(this.clock).toISOString() };
    this.last = uuid;
    return rec;
  }

  prompt(text: string): this {
    this.records.push({ ...this.base(1), type: 'user', message: { role: 'user', content: text } });
    return this;
  }

  /** One assistant message with these calls (a batch when several), then one result record each. */
  calls(...calls: { name: string; input: Rec; result: string; error?: boolean }[]): this {
    const ids = calls.map(() => `toolu_01${String(++this.n).padStart(22, '0')}`);
    this.records.push({
      ...this.base(2),
      type: 'assistant',
      message: { id: `msg_01${String(this.n).padStart(22, '0')}`, type: 'message', role: 'assistant', model: 'claude-sonnet-4-5-20250929', content: calls.map((c, i) => ({ type: 'tool_use', id: ids[i], name: c.name, input: c.input })), stop_reason: null },
    });
    calls.forEach((c, i) => {
      const content = c.error ? `<tool_use_error>${c.result}</tool_use_error>` : c.result;
      this.records.push({
        ...this.base(1),
        type: 'user',
        message: { role: 'user', content: [{ tool_use_id: ids[i], type: 'tool_result', content, ...(c.error ? { is_error: true } : {}) }] },
        toolUseResult: c.error ? `Error: ${c.result}` : c.result,
      });
    });
    return this;
  }

  call(name: string, input: Rec, result: string, error = false): this {
    return this.calls({ name, input, result, error });
  }

  /** An automatic compaction: the boundary record, then the summary the conversation continues from. */
  compact(summary: string): this {
    const boundary: Rec = { ...this.base(20), parentUuid: null, logicalParentUuid: this.last, type: 'system', subtype: 'compact_boundary', content: 'Conversation compacted', isMeta: false, level: 'info', compactMetadata: { trigger: 'auto', preTokens: 161203 } };
    this.records.push(boundary);
    this.records.push({ ...this.base(0), parentUuid: boundary.uuid, type: 'user', isCompactSummary: true, isVisibleInTranscriptOnly: true, message: { role: 'user', content: `This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:\n${summary}` } });
    return this;
  }

  text(): string {
    return jsonlText(this.records);
  }
}

export const FILE = '/home/dev/shop/src/cart/total.ts';
export const MODIFIED = 'File has been unexpectedly modified. Read it again before attempting to write it.';
export const NOT_READ = 'File has not been read yet. Read it first before writing to it.';
export const SOURCE = '     1→export function total(items: Item[]): number {\n     2→  return items.reduce((s, i) => s + i.price, 0);\n     3→}\n';

/*
 * Read by a person: the subagent reads total.ts, edits it, is told the file changed since it
 * was read; reads it again, writes it whole instead, is told it has not read it; reads again,
 * edits with a smaller old_string, the path spelled relatively… Every cycle ends with one of the
 * same two errors: one attempt that keeps failing. Verdict: halt by the third cycle (not before:
 * two failed edits with a read between are an agent finding its way).
 */
export function nonConverging(cycles: number): Transcript {
  const t = new Transcript().prompt('Add a discount parameter to total() in src/cart/total.ts and apply it.');
  const edits: { name: string; input: Rec; error: string }[] = [
    { name: 'Edit', input: { file_path: FILE, old_string: 'export function total(items: Item[]): number {\n  return items.reduce((s, i) => s + i.price, 0);', new_string: 'export function total(items: Item[], discount = 0): number {\n  return items.reduce((s, i) => s + i.price, 0) * (1 - discount);' }, error: MODIFIED },
    { name: 'Write', input: { file_path: FILE, content: 'export function total(items: Item[], discount = 0): number {\n  return items.reduce((s, i) => s + i.price, 0) * (1 - discount);\n}\n' }, error: NOT_READ },
    { name: 'Edit', input: { file_path: 'src/cart/total.ts', old_string: 'items: Item[]): number', new_string: 'items: Item[], discount = 0): number' }, error: MODIFIED },
    { name: 'Edit', input: { file_path: './src/cart/total.ts', old_string: 'Item[])', new_string: 'Item[], discount = 0)' }, error: NOT_READ },
  ];
  for (let i = 0; i < cycles; i++) {
    const edit = edits[i % edits.length] as (typeof edits)[number];
    t.call('Read', { file_path: i % 2 === 0 ? FILE : 'src/cart/total.ts' }, SOURCE).call(edit.name, edit.input, edit.error, true);
  }
  return t;
}

export const NO_PROJECT = 'Error: No active project. Ask the user to provide the project path or to select a project from this list: []';
export const BATCH = [
  { name: 'mcp__serena__find_symbol', input: { name_path: 'CartService', relative_path: 'src/cart' }, result: NO_PROJECT },
  { name: 'mcp__serena__get_symbols_overview', input: { relative_path: 'src/cart/service.ts' }, result: NO_PROJECT },
  { name: 'mcp__serena__search_for_pattern', input: { substring_pattern: 'applyDiscount' }, result: NO_PROJECT },
  { name: 'mcp__serena__read_file', input: { relative_path: 'src/cart/service.ts' }, result: NO_PROJECT },
];

/*
 * Read by a person: after each automatic compaction the subagent sends the same four MCP calls
 * at once, each answered "Error: No active project" inside a result not marked as an error, and
 * compacts again. Nothing between compactions changes. Verdict: warn at the second such cycle,
 * halt at the third.
 */
export function thrash(cycles: number): Transcript {
  const t = new Transcript().prompt('Find where CartService applies discounts and explain the rounding.');
  t.calls(...BATCH);
  for (let i = 0; i < cycles; i++) t.compact(`The user asked where CartService applies discounts. Serena calls so far answered "No active project". (summary ${i + 1})`).calls(...BATCH);
  return t;
}

