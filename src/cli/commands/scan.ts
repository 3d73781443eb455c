import * as path from 'node:path';
import { formatSkipped } from '../../core/events';
import { REPLAY_FORMATS, replayFile, type ReplayFormat } from '../../watch/replay';
import { StopAllFile } from '../../state/stopAllFile';
import { PATHS } from '../../state/workspace';
import { WorkspaceMonitor } from '../../watch/workspaceMonitor';
import type { CommandContext } from '../context';
import { EXIT, findingDetailJson, findingJson, formatFinding, json, paint, UsageError } from '../io';

/** Reads every log of the workspace once and prints the findings and the STOP_ALL state. */
export async function scanCommand(ctx: CommandContext): Promise<number> {
  const monitor = new WorkspaceMonitor(ctx.ws, ctx.config);
  await monitor.poll();
  const stop = await new StopAllFile(ctx.ws).read();
  const active = monitor.active();
  const activeEpisodes = new Set(active.map((f) => f.episode));
  const raised = [...monitor.raised];
  // History findings are re-derived on each read: make sure the active ones are listed. (A set,
  // not raised.some() per finding: that was quadratic, minutes for a workspace of many loops.)
  const listed = new Set(raised.map((r) => r.episode));
  for (const f of active) {
    if (listed.has(f.episode)) continue;
    listed.add(f.episode);
    raised.push(f);
  }
  const io = ctx.io;
  const stopError = stop.parse.ok ? undefined : stop.parse.error;
  if (ctx.json) {
    io.out(
      json({
        workspace: ctx.ws.root,
        stop: { ...stop.state, ...(stopError ? { error: `${PATHS.stopAll}: ${stopError}` } : {}) },
        files: monitor.files,
        events: monitor.stats.events,
        skipped: monitor.skippedCount,
        skipped_lines: monitor.skipped,
        findings: raised.map((f) => findingDetailJson(f, activeEpisodes.has(f.episode))),
      }),
    );
  } else {
    const s = stop.state;
    const stopColor = s.status === 'STOP' ? 'red' : s.status === 'PAUSE' ? 'yellow' : 'green';
    io.out(`Workspace ${ctx.ws.root}\n`);
    io.out(`STOP_ALL  ${paint(io, stopColor, s.status)}${s.timestamp ? ` since ${s.timestamp}` : ''}${s.reason ? ` (${s.reason})` : ''}\n`);
    if (stopError) io.out(`          ${paint(io, 'red', `unreadable: ${stopError}; treated as CLEAR`)}\n`);
    io.out(`Read      ${monitor.files.length} log(s), ${monitor.stats.events} event(s), ${monitor.skippedCount} line(s) skipped\n`);
    for (const sk of monitor.skipped) io.out(`          ${paint(io, 'dim', `skipped ${formatSkipped(sk)}`)}\n`);
    io.out(`Findings  ${raised.length} (${active.length} active)\n`);
    for (const f of raised) io.out(`${formatFinding(io, f)}${activeEpisodes.has(f.episode) ? '' : `\n         ${paint(io, 'dim', '(over: the pattern has since been broken)')}`}\n`);
    if (raised.length === 0) io.out(paint(io, 'green', 'No loops detected.\n'));
  }
  return active.some((f) => f.action === 'halt') ? EXIT.loop : EXIT.ok;
}

/** Runs the detectors over one log from its start. */
export async function replayCommand(ctx: CommandContext, file: string | undefined, opts: { format?: string }): Promise<number> {
  if (file === undefined) throw new UsageError('replay needs a FILE');
  const format = (opts.format ?? 'auto') as ReplayFormat | 'auto';
  if (!REPLAY_FORMATS.includes(format)) throw new UsageError(`--format must be one of ${REPLAY_FORMATS.join(', ')}`);
  const abs = path.resolve(ctx.io.cwd, file);
  const result = await replayFile(abs, file, format, ctx.config);
  const io = ctx.io;
  for (const s of result.skippedLines) io.err(`warning: skipped ${formatSkipped(s)}\n`);
  if (result.skipped > result.skippedLines.length) io.err(`warning: ${result.skipped - result.skippedLines.length} more line(s) skipped\n`);
  if (ctx.json) {
    io.out(json({ events: result.events, skipped: result.skipped, findings: result.findings.map(findingJson) }));
  } else {
    io.out(`${file}: ${result.events} event(s) (${result.format}), ${result.skipped} line(s) skipped, ${result.findings.length} finding(s)\n`);
    for (const f of result.findings) io.out(`${formatFinding(io, f)}\n`);
  }
  return result.findings.some((f) => f.action === 'halt') ? EXIT.loop : EXIT.ok;
}
