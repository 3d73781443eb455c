import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { cli, runHook, tmpProject } from '../helpers';

/*
 * Loops published as OpenTelemetry: `scan` with an OTLP endpoint set sends each incident going on
 * as a log record (the SDK's OTLP/HTTP exporter, JSON), to a local receiver here that keeps what
 * it was sent.
 */

interface Received {
  readonly path: string;
  readonly body: { resourceLogs?: { resource: { attributes: { key: string; value: Record<string, unknown> }[] }; scopeLogs: { logRecords: { eventName?: string; severityText?: string; body?: { stringValue?: string }; attributes: { key: string; value: Record<string, unknown> }[] }[] }[] }[] };
}

async function receiver(): Promise<{ url: string; got: Received[]; close: () => Promise<void> }> {
  const got: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      got.push({ path: req.url ?? '', body: (req.headers['content-type'] ?? '').includes('json') ? (JSON.parse(text) as Received['body']) : {} });
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, got, close: () => new Promise((r) => server.close(() => r())) };
}

const value = (v: Record<string, unknown> | undefined) => (v === undefined ? undefined : (v.stringValue ?? v.intValue ?? v.boolValue ?? v.arrayValue));

function records(got: readonly Received[]) {
  return got
    .filter((g) => g.path === '/v1/logs')
    .flatMap((g) => g.body.resourceLogs ?? [])
    .flatMap((rl) => rl.scopeLogs.flatMap((sl) => sl.logRecords.map((r) => ({ resource: Object.fromEntries(rl.resource.attributes.map((a) => [a.key, value(a.value)])), eventName: r.eventName, severity: r.severityText, body: r.body?.stringValue, attrs: Object.fromEntries(r.attributes.map((a) => [a.key, value(a.value)])) }))));
}

const failing = (i: number) => JSON.stringify({ v: 1, type: 'tool', session: 'sess-7', agent: 'claude-code', ts: `2026-11-26T04:00:0${i}Z`, tool: 'Bash', args: { command: 'npm run build-missing' }, ok: false, error: 'npm error Missing script: "build-missing"' });

describe('loops published as OpenTelemetry (OTEL_EXPORTER_OTLP_ENDPOINT)', () => {
  it('scan sends each loop going on as a log record once: opened, then grew, then ended; nothing without an endpoint', async () => {
    const ws = await tmpProject('lg-otel-');
    const log = path.join(ws, '.tmp', 'current', 'logs', 'agent.jsonl');
    await fs.mkdir(path.dirname(log), { recursive: true });
    await fs.writeFile(log, `${[1, 2, 3].map(failing).join('\n')}\n`);
    const r = await receiver();
    try {
      const none = await cli(['scan'], { cwd: ws });
      assert.equal(none.code, 1);
      assert.doesNotMatch(none.stderr, /OpenTelemetry/);
      const env = { OTEL_EXPORTER_OTLP_ENDPOINT: r.url };
      const first = await cli(['scan'], { cwd: ws, env });
      assert.equal(first.code, 1, first.stderr);
      assert.match(first.stderr, /OpenTelemetry: 1 loop\(s\) opened, 0 grew, 0 ended, sent/);
      const [opened] = records(r.got);
      assert.ok(opened, JSON.stringify(r.got));
      assert.equal(opened.eventName, 'loop_guardian.incident');
      assert.equal(opened.severity, 'ERROR');
      assert.match(opened.body ?? '', /npm run build-missing/);
      assert.equal(opened.attrs['loop_guardian.incident.state'], 'opened');
      assert.equal(opened.attrs['loop_guardian.action'], 'halt');
      assert.equal(opened.attrs['gen_ai.conversation.id'], 'sess-7');
      assert.equal(opened.attrs['gen_ai.agent.name'], 'claude-code');
      assert.equal(opened.attrs['event.name'], 'loop_guardian.incident');
      assert.equal(opened.resource['service.name'], 'loop-guardian');
      assert.equal(opened.resource['loop_guardian.source'], 'cli');
      // The active-loops gauge goes to /v1/metrics.
      assert.ok(r.got.some((g) => g.path === '/v1/metrics'), r.got.map((g) => g.path).join(', '));
      // The same loop, unchanged: nothing new.
      const again = await cli(['scan'], { cwd: ws, env });
      assert.match(again.stderr, /OpenTelemetry: 0 loop\(s\) opened, 0 grew, 0 ended/);
      // It went on: it grew.
      await fs.appendFile(log, `${failing(4)}\n`);
      const grew = await cli(['scan'], { cwd: ws, env });
      assert.match(grew.stderr, /0 loop\(s\) opened, 1 grew/);
      assert.equal(records(r.got).filter((x) => x.attrs['loop_guardian.incident.state'] === 'grew')[0]?.attrs['loop_guardian.count'], 4);
      // The agent moved on (a new turn ends the pattern): ended.
      await fs.appendFile(log, `${JSON.stringify({ v: 1, type: 'user', session: 'sess-7', text: 'try something else' })}\n`);
      const ended = await cli(['scan'], { cwd: ws, env });
      assert.match(ended.stderr, /0 loop\(s\) opened, 0 grew, 1 ended/);
    } finally {
      await r.close();
    }
  });

  it('the hook, refusing a loop, has it published (a scan started apart, detached): the refusal is not held up, the record arrives', async () => {
    const ws = await tmpProject('lg-otel-hook-');
    const r = await receiver();
    try {
      const env = { OTEL_EXPORTER_OTLP_ENDPOINT: r.url };
      const pre = (id: string) => ({ session_id: 'sess-h', transcript_path: '/home/u/.claude/projects/p/sess-h.jsonl', cwd: ws, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'npm test', description: 'run it' }, tool_use_id: id });
      const fail = (id: string) => ({ ...pre(id), hook_event_name: 'PostToolUseFailure', error: 'Exit code 1\nError: Cannot find module "./config"' });
      for (const id of ['t1', 't2']) {
        await runHook(ws, 'claude', pre(id), [], { env });
        await runHook(ws, 'claude', fail(id), [], { env });
      }
      const third = await runHook(ws, 'claude', pre('t3'), [], { env });
      assert.match(third.stdout, /"permissionDecision":"deny"/);
      const deadline = Date.now() + 20_000;
      while (!records(r.got).some((x) => x.attrs['loop_guardian.incident.state'] === 'opened') && Date.now() < deadline) await new Promise((res) => setTimeout(res, 100));
      const opened = records(r.got).find((x) => x.attrs['loop_guardian.incident.state'] === 'opened');
      assert.ok(opened, 'the refused loop arrived at the receiver');
      assert.equal(opened.resource['loop_guardian.source'], 'hook');
      assert.equal(opened.attrs['gen_ai.conversation.id'], 'sess-h');
      assert.equal(opened.attrs['loop_guardian.action'], 'halt');
    } finally {
      await r.close();
    }
  });
});
