#!/usr/bin/env node
// Runs the integration suites inside a real VS Code (code-server + Chromium), one run per scenario:
// a trusted single folder, a multi-root workspace, and an untrusted folder.
// `node test/host/runIntegration.js [--vscode minimum|stable|<code-server version>] [--grep <title pattern>] [single|multi|untrusted...]`:
// minimum is code-server 4.100.3 (VS Code 1.100, engines.vscode), stable 4.139.1 (VS Code 1.139.1).
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const util = require('node:util');
const { startCodeServer, remoteUri, VERSION } = require('./codeServer');
const { launch } = require('./browser');
const http = require('node:http');

/**
 * An OTLP/HTTP receiver for the trusted scenario: the editor is started with
 * OTEL_EXPORTER_OTLP_ENDPOINT pointing at it (loops published as OpenTelemetry), and every request
 * it receives is appended, as one JSON line `{path, body}`, to a file the tests read.
 */
function startCapture(file) {
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (d) => chunks.push(d));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body = null;
      try {
        body = JSON.parse(text);
      } catch {
        body = null;
      }
      fs.appendFileSync(file, `${JSON.stringify({ path: req.url, body })}\n`);
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('{}');
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((r) => server.close(() => r())) })));
}

const ROOT = path.resolve(__dirname, '..', '..');
const TESTS = path.join(ROOT, 'out', 'test', 'integration', 'index.js');
// The single folder's suite runs a live Claude Code and the issue 33 checks: under load (2 cores, several suites) it takes 3 to 4 minutes.
const TIMEOUT_MS = 360_000;
const ARTIFACTS = path.join(ROOT, 'test-artifacts');
/** `--grep <pattern>`: only the tests whose titles match (the suite's later tests may lean on its earlier ones). */
let grep;

function makeFolder(parent, name, withLog = true) {
  const dir = path.join(parent, name);
  fs.mkdirSync(path.join(dir, '.tmp', 'current', 'logs'), { recursive: true });
  // workspaceContains activation: the extension starts because there is a log to watch.
  if (withLog) fs.writeFileSync(path.join(dir, '.tmp', 'current', 'logs', 'agent.jsonl'), '');
  return dir;
}

const SCENARIOS = {
  single: (tmp) => ({ folder: makeFolder(tmp, 'project') }),
  multi: (tmp) => {
    const a = makeFolder(tmp, 'alpha');
    const b = makeFolder(tmp, 'beta');
    makeFolder(tmp, 'gamma', false);
    const file = path.join(tmp, 'multi.code-workspace');
    fs.writeFileSync(file, JSON.stringify({ folders: [{ path: a }, { path: b }] }));
    return { workspace: file };
  },
  untrusted: (tmp) => ({ folder: makeFolder(tmp, 'untrusted'), untrusted: true }),
};

async function runScenario(name) {
  const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `lg-it-${name}-`)));
  const target = SCENARIOS[name](tmp);
  const started = Date.now();
  // The tests' own output is printed; the editor's and the browser's console go to a log file.
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const report = path.join(tmp, 'report.txt');
  const consoleLog = path.join(ARTIFACTS, `integration-${name}.log`);
  fs.writeFileSync(report, '');
  fs.writeFileSync(consoleLog, '');
  const captureFile = path.join(tmp, 'otlp-capture.jsonl');
  fs.writeFileSync(captureFile, '');
  const capture = name === 'single' ? await startCapture(captureFile) : undefined;
  const server = await startCodeServer({
    // The launcher the extension writes goes to the scenario's own folder, never the person's home.
    env: {
      LOOP_GUARDIAN_SUITE: name,
      ...(grep ? { LOOP_GUARDIAN_GREP: grep } : {}),
      LOOP_GUARDIAN_CLI: path.join(ROOT, 'dist', 'cli.js'),
      LOOP_GUARDIAN_REPORT: report,
      LOOP_GUARDIAN_HOME: path.join(tmp, 'guardian-home'),
      ...(capture ? { OTEL_EXPORTER_OTLP_ENDPOINT: capture.url, LOOP_GUARDIAN_OTLP_CAPTURE: captureFile } : {}),
    },
    trust: !target.untrusted,
    development: true,
  });
  const browser = await launch();
  try {
    const page = await browser.newPage();
    const exit = new Promise((resolve) => {
      page.exposeFunction('codeAutomationLog', (type, args) => {
        fs.appendFileSync(consoleLog, `[${type}] ${util.format(...(Array.isArray(args) ? args : [args]))}\n`);
      });
      page.exposeFunction('codeAutomationExit', (code) => resolve(code));
    });
    const payload = [
      ['extensionDevelopmentPath', remoteUri(server.port, ROOT)],
      ['extensionTestsPath', remoteUri(server.port, TESTS)],
      ['skipWelcome', 'true'],
    ];
    const where = target.workspace ? `workspace=${encodeURIComponent(remoteUri(server.port, target.workspace))}` : `folder=${encodeURIComponent(remoteUri(server.port, target.folder))}`;
    // A loaded machine (2 cores shared by several suites) takes longer than 30 s to serve the workbench.
    await page.goto(`http://127.0.0.1:${server.port}/?${where}&payload=${encodeURIComponent(JSON.stringify(payload))}`, { timeout: 120_000 });
    let timer;
    const timeout = new Promise((resolve) => (timer = setTimeout(() => resolve('timeout'), TIMEOUT_MS)));
    const code = await Promise.race([exit, timeout]);
    clearTimeout(timer);
    process.stdout.write(`[${name}]\n${fs.readFileSync(report, 'utf8')}`);
    if (code !== 0) {
      process.stderr.write(`[${name}] the editor's console is in ${path.relative(ROOT, consoleLog)}\n`);
      try {
        keepGuardianLog(server.dataDir, name);
      } catch (err) {
        process.stderr.write(`[${name}] the guardian's log could not be kept: ${err.message}\n`);
      }
    }
    if (code === 'timeout') {
      process.stderr.write(`[${name}] timed out after ${TIMEOUT_MS / 1000}s\n${server.output().slice(-4000)}\n`);
      return 1;
    }
    process.stdout.write(`[${name}] exit ${code} in ${((Date.now() - started) / 1000).toFixed(1)}s on code-server ${VERSION}\n`);
    return code;
  } finally {
    await browser.close().catch(() => undefined);
    await server.stop();
    await capture?.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

/** The extension's own log (its output channel, as the editor writes it) of a failed scenario: kept, and its end printed. */
function keepGuardianLog(dataDir, name) {
  const logs = fs.readdirSync(path.join(dataDir, 'logs'), { recursive: true }).filter((f) => path.basename(String(f)) === 'Loop Guardian.log');
  for (const [i, rel] of logs.entries()) {
    const kept = path.join(ARTIFACTS, `integration-${name}-guardian${i > 0 ? `-${i + 1}` : ''}.log`);
    const text = fs.readFileSync(path.join(dataDir, 'logs', String(rel)), 'utf8');
    fs.writeFileSync(kept, text);
    process.stderr.write(`[${name}] the guardian's log is in ${path.relative(ROOT, kept)}; its end:\n${text.slice(-3000)}\n`);
  }
}

async function main() {
  const args = process.argv.slice(2);
  if (args.includes('--vscode')) args.splice(args.indexOf('--vscode'), 2);
  if (args.includes('--grep')) grep = args.splice(args.indexOf('--grep'), 2)[1];
  const names = args.length > 0 ? args : Object.keys(SCENARIOS);
  process.stdout.write(`integration on code-server ${VERSION}\n`);
  let failed = 0;
  for (const name of names) {
    if (!SCENARIOS[name]) throw new Error(`unknown scenario ${name}`);
    if ((await runScenario(name)) !== 0) failed++;
  }
  if (failed > 0) {
    process.stderr.write(`${failed} integration scenario(s) failed\n`);
    process.exit(1);
  }
}

main().catch((err) => {
  process.stderr.write(`${err.stack || err}\n`);
  process.exit(1);
});
