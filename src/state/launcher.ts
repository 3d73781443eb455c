import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { HOOK_AGENTS } from '../agents';
import { readTextIfExists, writeFileAtomic } from './atomicFile';
import type { HookProtocol } from '../agents/hook';
import { stopFallback } from '../agents/hookSettings';
import { guardianHome } from './guardianHome';
import { PATHS } from './workspace';

/*
 * The per-user launcher: the one file the guardian writes outside a workspace.
 *
 * The hooks `init` registers live in files teams commit, so they cannot name this checkout's or
 * this extension version's `dist/cli.js`: they run `$LOOP_GUARDIAN_HOME/bin/loop-guardian`
 * (default `~/.loop-guardian/bin/loop-guardian`), a small POSIX shell script that starts the
 * current install. `init` writes it; the VS Code extension writes it when it installs a hook, and
 * on activation refreshes one that exists (never creates one) so that it follows the extension's
 * updates. Where it is missing (a teammate without the guardian) the registered command exits 0
 * with no decision but under STOP; where the install it names is gone, the launcher does the same
 * for hooks (STOP_ALL read by the same shell, `stopFallback`).
 * Besides it, only the hook's code cache (`cache/`) is written there. Removing the folder removes the
 * guardian from every agent.
 */

/** Where the launcher lives (the hook command says the same in shell, `LAUNCHER_IN_SHELL`). */
export function launcherPath(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(guardianHome(env), 'bin', 'loop-guardian');
}

/** The hook client beside the launcher (bash): it asks the hook server (src/hook/server.ts) where one runs. */
export function hookClientPath(env: NodeJS.ProcessEnv = process.env): string {
  return `${launcherPath(env)}-hook`;
}

/** The same launcher for hosts without a POSIX shell (Windows), run by Node: `loop-guardian.js` beside it. */
export function nodeLauncherPath(env: NodeJS.ProcessEnv = process.env): string {
  return `${launcherPath(env)}.js`;
}

/**
 * The Node launcher's text: starts the install when it is there (the CLI runs as it is required),
 * else, for a hook, reads the call to its end and gives the agent's "no decision" (exit 0), as the
 * shell launcher does. Pure, so that a refresh writes only when it changes.
 */
export function nodeLauncherScript(target: LauncherTarget): string {
  const idle = Object.fromEntries(HOOK_AGENTS.flatMap((a) => (a.hook.allow().stdout.trim() === '' ? [] : [[a.id, a.hook.allow().stdout.trim()]])));
  return [
    "// Loop Guardian's launcher for hosts without a POSIX shell (Windows), run by Node. Written by",
    '// `loop-guardian init` and by the VS Code extension beside bin/loop-guardian, the same install.',
    "'use strict';",
    `const cli = ${JSON.stringify(target.cli)};`,
    `const idle = ${JSON.stringify(idle)};`,
    "if (require('fs').existsSync(cli)) {",
    '  process.argv[1] = cli;',
    '  require(cli);',
    "} else if (process.argv[2] === 'hook') {",
    '  // The install is gone: the call is let through, in the words of agents that expect an answer.',
    '  process.stdin.resume();',
    "  process.stdin.on('end', () => process.stdout.write(idle[process.argv[3]] !== undefined ? `${idle[process.argv[3]]}\\n` : ''));",
    '} else {',
    "  console.error(`loop-guardian: cannot start ${cli} (missing); run loop-guardian init again, or open VS Code with the extension`);",
    '  process.exitCode = 1;',
    '}',
    '',
  ].join('\n');
}

/** The install the launcher starts. */
export interface LauncherTarget {
  /** The CLI's entry, absolute (`…/dist/cli.js`). */
  readonly cli: string;
  /** A Node.js executable to start it with, tried first. */
  readonly node?: string;
  /** An Electron executable that can run as Node (`ELECTRON_RUN_AS_NODE=1`), tried when no `node` is found. */
  readonly electron?: string;
  /** The hook client (`hookClientPath`), written beside the launcher; none: every hook call starts Node. */
  readonly client?: string;
}

/**
 * The hook client's text (bash): a hook call sent to the hook server (src/hook/server.ts) with the
 * caller's folder, arguments, environment and stdin, its answer given as the hook process gives it.
 * Whatever goes wrong (no server, a server of another install, no answer within 5 s) the call goes
 * to the hook process, `LOOP_GUARDIAN_HOOK_SERVER=start` asking it to start a server afterwards.
 * STOP never depends on the server: with a STOP_ALL file at or above the caller's folder, a project
 * folder the agent names, or `--workspace`, the hook process answers (it reads STOP_ALL first,
 * whatever stdin does).
 */
export function hookClientScript(): string {
  const projectVars = [...new Set(HOOK_AGENTS.flatMap((a) => a.hook.projectDirEnv))].filter((n) => /^[A-Z_][A-Z0-9_]*$/.test(n));
  return [
    '# Loop Guardian\'s hook client (bash), run by the launcher beside it for a hook call: asks the hook',
    '# server (loop-guardian hook-server) instead of starting Node. Written with the launcher.',
    'node=$1; cli=$2; shift 2',
    'trap \'\' PIPE',
    'direct() { LOOP_GUARDIAN_HOOK_SERVER=$1; export LOOP_GUARDIAN_HOOK_SERVER; shift; exec "$node" "$cli" "$@"; }',
    'piped() { local how=$1; shift; exec 3>&-; printf \'%s\' "$payload" | direct "$how" "$@"; exit; }',
    // A STOP_ALL file that may say anything but CLEAR (it names neither STOP nor PAUSE, it says CLEAR; read as bash reads: up to a NUL): the hook process reads it.
    'shopt -s nocasematch',
    'stop_at() { local d=$1 f t; [[ $d == /* ]] || d=$PWD/$d; while :; do f=$d/' + PATHS.stopAll + '; if [ -e "$f" ]; then [ -f "$f" ] || return 0; t=; IFS= read -r -d \'\' -n 4096 t < "$f" 2>/dev/null; [[ $t == *clear* && $t != *stop* && $t != *pause* ]] || return 0; fi; [ -z "$d" ] || [ "$d" = / ] && return 1; d=${d%/*}; done; }',
    'builtin cd -P . 2>/dev/null',
    'if stop_at "$PWD"; then direct off "$@"; fi',
    `for v in ${projectVars.join(' ')}; do if [ -n "\${!v:-}" ] && stop_at "\${!v}"; then direct off "$@"; fi; done`,
    'prev=; for a in "$@"; do if [ "$prev" = --workspace ] && stop_at "$a"; then direct off "$@"; fi; prev=$a; done',
    // Bash 4.4 and later read stdin and the answer without a process (`read -N`, buffered), and list
    // the exported variables without one (`${!a*}`, `${n@a}`); older ones (macOS's 3.2) with `cat` and `compgen`.
    'if (( BASH_VERSINFO[0] * 100 + BASH_VERSINFO[1] >= 404 )); then new=1; else new=; fi',
    'if [ -n "$new" ]; then IFS= read -r -N 16777216 payload; else payload=$(cat; printf .); payload=${payload%.}; fi',
    'info="${BASH_SOURCE[0]%/*}/../run/hook-server"',
    'port=; token=; [ -f "$info" ] && IFS=\' \' read -r port token _ < "$info"',
    '[[ $port =~ ^[0-9]+$ ]] || piped start "$@"',
    '{ exec 3<>"/dev/tcp/127.0.0.1/$port"; } 2>/dev/null || piped start "$@"',
    'names=()',
    'if [ -n "$new" ]; then for n in ${!a*} ${!b*} ${!c*} ${!d*} ${!e*} ${!f*} ${!g*} ${!h*} ${!i*} ${!j*} ${!k*} ${!l*} ${!m*} ${!n*} ${!o*} ${!p*} ${!q*} ${!r*} ${!s*} ${!t*} ${!u*} ${!v*} ${!w*} ${!x*} ${!y*} ${!z*} ${!A*} ${!B*} ${!C*} ${!D*} ${!E*} ${!F*} ${!G*} ${!H*} ${!I*} ${!J*} ${!K*} ${!L*} ${!M*} ${!N*} ${!O*} ${!P*} ${!Q*} ${!R*} ${!S*} ${!T*} ${!U*} ${!V*} ${!W*} ${!X*} ${!Y*} ${!Z*} ${!_*}; do [[ ${!n@a} == *x* ]] && names+=("$n"); done; else while IFS= read -r n; do names+=("$n"); done < <(compgen -e); fi',
    '{',
    '  printf \'LGH1\\0%s\\0%s\\0%s\\0%s\\0\' "$token" "$cli" "$PWD" "$#"',
    '  [ $# -gt 0 ] && printf \'%s\\0\' "$@"',
    '  printf \'%s\\0\' "${#names[@]}"',
    '  for n in "${names[@]}"; do printf \'%s=%s\\0\' "$n" "${!n}"; done',
    '  LC_ALL=C',
    '  printf \'%s\\0%s\' "${#payload}" "$payload"',
    '} >&3 2>/dev/null || piped start "$@"',
    'IFS= read -r -t 5 code <&3 || piped start "$@"',
    '[[ $code =~ ^[0-9]+$ ]] || piped start "$@"',
    'IFS= read -r -t 5 olen <&3 || piped start "$@"',
    'if [ -n "$new" ]; then IFS= read -r -N 16777216 rest <&3; else rest=$(cat <&3; printf .); rest=${rest%.}; fi',
    'exec 3>&-',
    'LC_ALL=C',
    'printf \'%s\' "${rest:0:olen}"',
    'printf \'%s\' "${rest:olen}" >&2',
    'exit "$code"',
    '',
  ].join('\n');
}

/** A value single-quoted for the shell. */
function sq(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/**
 * The launcher's text for a target. Pure, so that a refresh writes only when it changes. Where the
 * install is gone or no runtime is found (the extension uninstalled, nvm's Node version removed), a
 * hook answers as the registered command does where there is no launcher at all (`stopFallback`):
 * STOP still wins, in the agent's answer for its event; else the call runs.
 */
export function launcherScript(target: LauncherTarget): string {
  const fallbacks = HOOK_AGENTS.map((a) => `    ${a.id}) ${stopFallback(a.id, a.hook)} ;;`);
  return [
    '#!/bin/sh',
    "# Loop Guardian's launcher: starts the Loop Guardian install named below. Written by",
    '# `loop-guardian init` and by the VS Code extension, which keep it pointing at their current',
    "# install; the agents' hooks registered by init run it. Delete this folder to take Loop",
    '# Guardian out of every agent on this machine: their hooks then let every call run (but STOP).',
    `cli=${sq(target.cli)}`,
    `node=${sq(target.node ?? '')}`,
    `electron=${sq(target.electron ?? '')}`,
    `client=${sq(target.client ?? '')}`,
    'if [ -f "$cli" ]; then',
    '  run=',
    '  if [ -n "$node" ] && [ -x "$node" ]; then run=$node; elif command -v node >/dev/null 2>&1; then run=node; fi',
    '  if [ -n "$run" ]; then',
    "    # A hook call goes to the hook server through the hook client, where bash is found; else (and",
    '    # with LOOP_GUARDIAN_HOOK_SERVER=off) the hook runs in a Node process of its own.',
    '    if [ "$1" = hook ] && [ "${LOOP_GUARDIAN_HOOK_SERVER:-}" != off ] && [ -n "$client" ] && [ -f "$client" ] && command -v bash >/dev/null 2>&1; then exec bash "$client" "$run" "$cli" "$@"; fi',
    '    exec "$run" "$cli" "$@"',
    '  fi',
    '  if [ -n "$electron" ] && [ -x "$electron" ]; then ELECTRON_RUN_AS_NODE=1; export ELECTRON_RUN_AS_NODE; exec "$electron" "$cli" "$@"; fi',
    'fi',
    '# The install is gone, or no runtime was found: a hook still refuses under STOP (STOP_ALL read',
    "# here as the guardian reads it), in the agent's own words for its event; else it lets the call",
    '# run (fail-open) with exit 0, which no agent reads as a refusal.',
    'if [ "$1" = hook ]; then',
    '  case "$2" in',
    ...fallbacks,
    '  esac',
    // An agent this launcher does not know: the call read to its end (the agent writing it must not meet a closed pipe).
    '  cat >/dev/null',
    '  exit 0',
    'fi',
    'echo "loop-guardian: cannot start $cli (missing, or no node found); run loop-guardian init again, or open VS Code with the extension" >&2',
    'exit 1',
    '',
  ].join('\n');
}

export interface LauncherResult {
  readonly path: string;
  /** Written now (new, or pointing elsewhere before). */
  readonly changed: boolean;
  readonly created: boolean;
}

/**
 * Writes the launcher for a target (temp file + rename, mode 0755), only when its text changes:
 * what `init` and the extension's *Install the Agent Hook* do.
 */
export async function installLauncher(target: LauncherTarget, env: NodeJS.ProcessEnv = process.env): Promise<LauncherResult> {
  const file = launcherPath(env);
  const client = hookClientPath(env);
  const text = launcherScript({ ...target, client: target.client ?? client });
  const before = await readTextIfExists(file);
  const js = nodeLauncherPath(env);
  const jsText = nodeLauncherScript(target);
  const jsBefore = await readTextIfExists(js);
  const clientText = hookClientScript();
  const clientBefore = await readTextIfExists(client);
  if (before === text && jsBefore === jsText && clientBefore === clientText) return { path: file, changed: false, created: false };
  await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o755 });
  const within = await fs.realpath(guardianHome(env));
  if (jsBefore !== jsText) await writeFileAtomic(js, jsText, { mode: 0o644, within });
  // The client before the launcher that runs it.
  if (clientBefore !== clientText) await writeFileAtomic(client, clientText, { mode: 0o644, within });
  if (before !== text) {
    await writeFileAtomic(file, text, { mode: 0o755, within });
    // A file that was there keeps its mode through the rename: make sure it can be run.
    await fs.chmod(file, 0o755);
  }
  return { path: file, changed: true, created: before === undefined };
}

/** Points an existing launcher at a target; creates none (what the extension does on activation). */
export async function refreshLauncher(target: LauncherTarget, env: NodeJS.ProcessEnv = process.env): Promise<LauncherResult | undefined> {
  if ((await readTextIfExists(launcherPath(env))) === undefined) return undefined;
  return installLauncher(target, env);
}

/**
 * The command for hosts without a POSIX shell (Windows): Node runs the Node launcher beside the
 * shell one (`~/.loop-guardian/bin/loop-guardian.js`, or under `LOOP_GUARDIAN_HOME`), found by
 * Node itself, so that it names no shell variable (PowerShell, cmd and an agent that expands
 * `$NAME` read it alike); where the launcher is missing, the call is read and let through (exit
 * 0, no answer). Only for agents whose "no decision" is an empty answer.
 */
export function windowsHookCommand(agentId: string, hook: Pick<HookProtocol, 'allow'>): string | undefined {
  if (hook.allow().stdout.trim() !== '' || !/^[a-z][a-z0-9-]*$/.test(agentId)) return undefined;
  const script = [
    "const p=require('path'),h=process.env.LOOP_GUARDIAN_HOME||p.join(require('os').homedir(),'.loop-guardian'),f=p.join(h,'bin','loop-guardian.js');",
    "process.argv.splice(1,0,f);",
    "if(require('fs').existsSync(f))require(f);else process.stdin.resume();",
  ].join('');
  return `node -e "${script}" hook ${agentId}`;
}

/**
 * The Windows command in PowerShell (a registration whose `windowsKey` is `powershell`): the Node command where `node`
 * is found, else the call read and let through, so that a machine without Node never refuses a
 * call (an agent whose registration is `failClosed` refuses one whose pre-call hook fails).
 */
export function powershellHookCommand(agentId: string, hook: Pick<HookProtocol, 'allow'>): string | undefined {
  const command = windowsHookCommand(agentId, hook);
  return command === undefined ? undefined : `if (Get-Command node -ErrorAction SilentlyContinue) { ${command} } else { [Console]::In.ReadToEnd() | Out-Null }`;
}

/** The Windows command for an agent's registration, in the form its `windowsKey` takes; undefined where it has none. */
export function windowsCommandFor(agent: { readonly id: string; readonly hook: Pick<HookProtocol, 'allow' | 'registration'> }): string | undefined {
  const key = agent.hook.registration.windowsKey;
  if (key === undefined) return undefined;
  return key === 'powershell' ? powershellHookCommand(agent.id, agent.hook) : windowsHookCommand(agent.id, agent.hook);
}

