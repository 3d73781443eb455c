// Bundles the extension (vscode is provided by the host) and the CLI (with a shebang).
const esbuild = require('esbuild');
const fs = require('fs');
const { version } = require('./package.json');

const production = process.argv.includes('--production');
// Every bundle with its comments and blank space, its source files named in it: for profiling by source file.
const readable = process.argv.includes('--readable') && !production;
const watch = process.argv.includes('--watch');

const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: !production,
  minify: production,
  logLevel: 'warning',
  define: { __VERSION__: JSON.stringify(version), __BUNDLED__: 'true' },
};

/**
 * zod, in dist/cli-main.js, is `require('./cli-zod.js')`: a bundle of its own, loaded only where a
 * schema is (a config file to validate, a bad line to explain, the task and history commands).
 * Even unused, its source in the main bundle cost a replay about 5 MB of memory to parse.
 */
const zodApart = {
  name: 'zod-apart',
  setup(build) {
    build.onResolve({ filter: /^zod$/ }, () => ({ path: './cli-zod.js', external: true }));
  },
};

/**
 * SQLite built to WebAssembly (sql.js), for the agents that keep their sessions in a database:
 * `require('./sqlite.js')`, a bundle of its own with its .wasm beside it (its loader finds it in
 * its own folder), loaded only when such a database is read.
 */
const sqliteApart = {
  name: 'sqlite-apart',
  setup(build) {
    build.onResolve({ filter: /^sql\.js$/ }, () => ({ path: './sqlite.js', external: true }));
  },
};

/**
 * The OpenTelemetry SDK and its exporters, which publish loops (src/watch/incidentExport.ts):
 * `require('./otel.js')`, a bundle of its own, loaded only when an OTLP endpoint is configured.
 */
const otelApart = {
  name: 'otel-apart',
  setup(build) {
    build.onResolve({ filter: /\/watch\/incidentExport$/ }, (args) => (args.importer.endsWith('incidentExport.ts') ? undefined : { path: './otel.js', external: true }));
  },
};

/** The OTLP receiver (`loop-guardian otlp`, with protobufjs): `require('./cli-otlp.js')`, loaded only by that command; in the editor `./otlp-receiver.js`, only when its setting is on. */
const otlpApart = {
  name: 'otlp-apart',
  setup(build) {
    build.onResolve({ filter: /\/commands\/otlp$/ }, () => ({ path: './cli-otlp.js', external: true }));
    build.onResolve({ filter: /\/watch\/otlpReceiver$/ }, (args) => (args.importer.includes(`${require('path').sep}vscode${require('path').sep}`) ? { path: './otlp-receiver.js', external: true } : undefined));
  },
};

// The hook's bundles are read on every tool call an agent makes, and the CLI's main ones on every
// command (a replay of 300,000 events, the OTLP receiver): never with comments or blank space, so
// that they are small and ASCII (read and compiled faster; V8 holds a source with one non-ASCII
// character in a comment as two bytes a character); names are kept, and the source maps.
const compact = { ...common, minifyWhitespace: !readable };

const builds = [
  { ...common, entryPoints: ['src/extension.ts'], outfile: 'dist/extension.js', external: ['vscode'], plugins: [sqliteApart, otelApart, otlpApart] },
  { ...common, entryPoints: ['src/watch/otlpReceiver.ts'], outfile: 'dist/otlp-receiver.js' },
  // dist/cli.js only picks dist/cli-hook.js (the agents' hook: small, fast to start) or dist/cli-main.js.
  { ...compact, entryPoints: ['src/cli.ts'], outfile: 'dist/cli.js', banner: { js: '#!/usr/bin/env node' } },
  { ...compact, entryPoints: ['src/cli/run.ts'], outfile: 'dist/cli-main.js', plugins: [zodApart, sqliteApart, otelApart, otlpApart] },
  { ...compact, entryPoints: ['src/cli/commands/otlp.ts'], outfile: 'dist/cli-otlp.js', plugins: [zodApart, sqliteApart, otelApart] },
  { ...common, entryPoints: ['src/watch/incidentExport.ts'], outfile: 'dist/otel.js' },
  { ...common, entryPoints: ['sql.js'], outfile: 'dist/sqlite.js', sourcemap: false },
  { ...common, stdin: { contents: "export * from 'zod';", resolveDir: __dirname, loader: 'js' }, outfile: 'dist/cli-zod.js' },
  { ...compact, entryPoints: ['src/cli/hookRun.ts'], outfile: 'dist/cli-hook.js' },
  // What the hook loads only to replay a session (a repeated call, a prompt): the engine and the detectors;
  // and only before a prompt: the transcript readers (apart, so that a repeated call does not load them).
  { ...compact, entryPoints: ['src/hook/gate.ts'], outfile: 'dist/cli-gate.js' },
  { ...compact, entryPoints: ['src/hook/turn.ts'], outfile: 'dist/cli-turn.js' },
  // The hook server (`loop-guardian hook-server`): loaded by that process only, never by a hook call.
  { ...compact, entryPoints: ['src/hook/server.ts'], outfile: 'dist/cli-hook-server.js' },
  // The configuration schema (zod), loaded by the hook only when its cached configuration is stale.
  { ...common, entryPoints: ['src/state/configFile.ts'], outfile: 'dist/cli-config.js' },
];

async function run() {
  if (watch) {
    for (const b of builds) await (await esbuild.context(b)).watch();
    return;
  }
  await Promise.all(builds.map((b) => esbuild.build(b)));
  fs.copyFileSync(require.resolve('sql.js/dist/sql-wasm.wasm'), 'dist/sql-wasm.wasm');
  fs.chmodSync('dist/cli.js', 0o755);
}

run().catch((err) => {
  console.error(err);
  process.exit(1);
});
