// Installs code-server (a real VS Code: workbench + Node extension host) from the npm registry
// into a cached, git-ignored folder, offline-safe, and starts it. See README "Tests in a real VS Code".
'use strict';
const { execFileSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const VERSION = process.env.CODE_SERVER_VERSION || '4.100.3';
const ROOT = path.resolve(__dirname, '..', '..');
const CACHE = path.join(ROOT, '.vscode-test', `code-server-${VERSION}`);
const ENTRY = path.join(CACHE, 'node_modules', 'code-server', 'out', 'node', 'entry.js');

function log(msg) {
  process.stderr.write(`[code-server] ${msg}\n`);
}

function run(cmd, args, opts = {}) {
  return execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8', ...opts });
}

/** Reads one file out of an npm package tarball without installing it. */
function fileFromPackage(spec, inner, workDir) {
  const out = run('npm', ['pack', spec, '--silent', '--pack-destination', workDir], { cwd: workDir }).trim().split('\n').pop();
  const tarball = path.join(workDir, out);
  return run('tar', ['-xzOf', tarball, `package/${inner}`], { maxBuffer: 64 << 20 });
}

/**
 * @vscode/ripgrep's postinstall downloads rg from GitHub unless its cache already holds the
 * archive: put Debian's rg there, under the name and version that package asks for.
 */
function seedRipgrepCache(workDir, tmpDir) {
  const shrinkwrap = JSON.parse(fileFromPackage(`code-server@${VERSION}`, 'lib/vscode/npm-shrinkwrap.json', workDir));
  const entry = shrinkwrap.packages && shrinkwrap.packages['node_modules/@vscode/ripgrep'];
  if (!entry) throw new Error('cannot find @vscode/ripgrep in code-server\'s npm-shrinkwrap.json');
  const postinstall = fileFromPackage(`@vscode/ripgrep@${entry.version}`, 'lib/postinstall.js', workDir);
  const m = /VERSION\s*=\s*'([^']+)'/.exec(postinstall);
  if (!m) throw new Error('cannot find the ripgrep release in @vscode/ripgrep\'s postinstall');
  const rg = run('sh', ['-c', 'command -v rg']).trim();
  if (!rg) throw new Error('ripgrep is not installed (apt-get install ripgrep)');
  const cacheDir = path.join(tmpDir, `vscode-ripgrep-cache-${entry.version}`);
  fs.mkdirSync(cacheDir, { recursive: true });
  const stage = fs.mkdtempSync(path.join(workDir, 'rg-'));
  fs.copyFileSync(rg, path.join(stage, 'rg'));
  for (const arch of ['x86_64-unknown-linux-musl', 'aarch64-unknown-linux-musl']) {
    run('tar', ['-czf', path.join(cacheDir, `ripgrep-${m[1]}-${arch}.tar.gz`), '-C', stage, 'rg']);
  }
  log(`ripgrep cache seeded for @vscode/ripgrep ${entry.version} (${m[1]})`);
}

function ensureCodeServer() {
  if (fs.existsSync(ENTRY)) return ENTRY;
  log(`installing code-server ${VERSION} into ${path.relative(ROOT, CACHE)} (1 to 3 minutes)`);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'lg-cs-'));
  try {
    seedRipgrepCache(work, work);
    fs.mkdirSync(CACHE, { recursive: true });
    fs.writeFileSync(path.join(CACHE, 'package.json'), JSON.stringify({ name: 'code-server-cache', private: true }));
    execFileSync('npm', ['install', '--no-audit', '--no-fund', '--no-save', '--dangerously-allow-all-scripts', `code-server@${VERSION}`], {
      cwd: CACHE,
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, TMPDIR: work, npm_config_unsafe_perm: 'true', npm_config_yes: 'true' },
    });
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  if (!fs.existsSync(ENTRY)) throw new Error(`code-server installed, but ${ENTRY} is missing`);
  return ENTRY;
}

/** Starts code-server on a free loopback port with a throw-away profile; resolves once it listens. */
function startCodeServer({ extensionsDir, userDataDir, env = {}, args = [], trust = true } = {}) {
  const entry = ensureCodeServer();
  const data = userDataDir || fs.mkdtempSync(path.join(os.tmpdir(), 'lg-cs-data-'));
  const exts = extensionsDir || fs.mkdtempSync(path.join(os.tmpdir(), 'lg-cs-exts-'));
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [entry, '--auth', 'none', '--bind-addr', '127.0.0.1:0', '--disable-telemetry', '--disable-update-check', ...(trust ? ['--disable-workspace-trust'] : []),
        '--disable-getting-started-override', '--ignore-last-opened', '--user-data-dir', data, '--extensions-dir', exts, ...args],
      // The launcher the extension keeps current goes under this editor's data folder, never the
      // person's own ~/.loop-guardian (which its hooks would then follow into a temporary folder).
      { env: { ...process.env, LOOP_GUARDIAN_HOME: path.join(data, 'guardian-home'), ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    const onData = (d) => {
      output += d.toString();
      const m = /HTTP server listening on https?:\/\/127\.0\.0\.1:(\d+)/.exec(output);
      if (m) {
        child.stdout.off('data', onData);
        child.stderr.off('data', onData);
        resolve({ child, port: Number(m[1]), output: () => output, stop: () => stop(child) });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => reject(new Error(`code-server exited with ${code}:\n${output}`)));
  });
}

function stop(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 5000).unref();
  });
}

/** `vscode-remote://127.0.0.1:<port>/<absolute path>`, as the workbench wants paths. */
function remoteUri(port, p) {
  return `vscode-remote://127.0.0.1:${port}${p.split(path.sep).map(encodeURIComponent).join('/')}`;
}

module.exports = { ensureCodeServer, startCodeServer, remoteUri, VERSION, CACHE };

if (require.main === module) {
  try {
    console.log(ensureCodeServer());
  } catch (err) {
    log(err.stack || String(err));
    process.exit(1);
  }
}
