import { formatSkipped } from '../../core/events';
import { groupIncidents } from '../../core/incidents';
import { formatDescription, REPLAY_FORMATS, replayFile, replayText, type ReplayFormat, type ReplayResult } from '../../watch/replay';
import { StopAllFile } from '../../state/stopAllFile';
import { PATHS } from '../../state/workspace';
import { readReplayInput } from '../../watch/replayInput';
import { WorkspaceMonitor } from '../../watch/workspaceMonitor';
import type { CommandContext } from '../context';
import { EXIT, findingDetailJson, findingJson, formatIncident, incidentJson, json, paint, plain, UsageError } from '../io';

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
  const incidents = groupIncidents(raised);
  const index = new Map(raised.map((f, i) => [f, i]));
  const io = ctx.io;
  const unread = monitor.unreadLogs();
  for (const u of unread) io.err(`warning: ${plain(u.file)}: nothing could be read: ${u.skipped} line(s) skipped, 0 events; it was read as ${u.readAs}\n`);
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
        unread: unread.map((u) => ({ file: u.file, skipped: u.skipped, read_as: u.readAs })),
        findings: raised.map((f) => findingDetailJson(f, activeEpisodes.has(f.episode))),
        incidents: incidents.map((inc) => ({ ...incidentJson(inc, (f) => index.get(f) ?? -1), active: inc.findings.some((f) => activeEpisodes.has(f.episode)) })),
      }),
    );
  } else {
    const s = stop.state;
    const stopColor = s.status === 'STOP' ? 'red' : s.status === 'PAUSE' ? 'yellow' : 'green';
    io.out(`Workspace ${ctx.ws.root}\n`);
    io.out(`STOP_ALL  ${paint(io, stopColor, s.status)}${s.timestamp ? ` since ${plain(s.timestamp)}` : ''}${s.reason ? ` (${plain(s.reason.length > 300 ? `${s.reason.slice(0, 300)}…` : s.reason)})` : ''}\n`);
    if (stopError) io.out(`          ${paint(io, 'red', `unreadable: ${plain(stopError)}; treated as CLEAR`)}\n`);
    io.out(`Read      ${monitor.files.length} log(s), ${monitor.stats.events} event(s), ${monitor.skippedCount} line(s) skipped\n`);
    for (const sk of monitor.skipped) io.out(`          ${paint(io, 'dim', `skipped ${plain(formatSkipped(sk))}`)}\n`);
    const live = incidents.filter((inc) => inc.findings.some((f) => activeEpisodes.has(f.episode))).length;
    io.out(`Loops     ${incidents.length} (${live} active), from ${raised.length} finding(s)\n`);
    for (const inc of incidents) io.out(`${formatIncident(io, inc)}${inc.findings.some((f) => activeEpisodes.has(f.episode)) ? '' : `\n         ${paint(io, 'dim', '(over: the pattern has since been broken)')}`}\n`);
    if (raised.length === 0) io.out(paint(io, 'green', 'No loops detected.\n'));
  }
  return active.some((f) => f.action === 'halt') ? EXIT.loop : EXIT.ok;
}

/** Runs the detectors over one log from its start. */
export async function replayCommand(ctx: CommandContext, file: string | undefined, opts: { format?: string }): Promise<number> {
  if (file === undefined) throw new UsageError('replay needs a FILE (or - for stdin)');
  const format = (opts.format ?? 'auto') as ReplayFormat | 'auto';
  if (!REPLAY_FORMATS.includes(format)) throw new UsageError(`--format must be one of ${REPLAY_FORMATS.join(', ')}`);
  if (file === '-' && process.stdin.isTTY) throw new UsageError('replay -: stdin is a terminal; pipe a log into it (cat log.jsonl | loop-guardian replay -)');
  const input = await readReplayInput(file, ctx.io.cwd);
  const result = 'file' in input ? await replayFile(input.file, file, format, ctx.config) : await replayText(input.text, file, format, ctx.config);
  const io = ctx.io;
  for (const s of result.skippedLines) io.err(`warning: skipped ${plain(formatSkipped(s))}\n`);
  if (result.skipped > result.skippedLines.length) io.err(`warning: ${result.skipped - result.skippedLines.length} more line(s) skipped\n`);
  for (const k of result.skippedKinds) io.err(`warning: skipped ${k.count} record(s) with ${plain(`${k.field}: ${k.reason}`)}\n`);
  const nothing = nothingRead(file, format, result);
  const incidents = groupIncidents(result.findings);
  const index = new Map(result.findings.map((f, i) => [f, i]));
  if (nothing !== undefined) io.err(`loop-guardian replay: error: ${plain(nothing)}\n`);
  if (ctx.json) {
    io.out(
      json({
        format: result.format,
        events: result.events,
        skipped: result.skipped,
        skipped_kinds: result.skippedKinds,
        findings: result.findings.map(findingJson),
        incidents: incidents.map((inc) => incidentJson(inc, (f) => index.get(f) ?? -1)),
        ...(nothing !== undefined ? { error: nothing } : {}),
      }),
    );
  } else {
    io.out(`${plain(file)}: ${result.events} event(s) (${result.format}), ${result.skipped} line(s) skipped, ${incidents.length} loop(s) from ${result.findings.length} finding(s)\n`);
    for (const inc of incidents) io.out(`${formatIncident(io, inc)}\n`);
  }
  if (nothing !== undefined) return EXIT.nothingRead;
  return result.findings.some((f) => f.action === 'halt') ? EXIT.loop : EXIT.ok;
}

/**
 * A non-blank input from which not one event came is never a silent success: what was read, as
 * what, what that format expects, and what to try.
 */
export function nothingRead(file: string, format: string, result: ReplayResult): string | undefined {
  if (result.events > 0 || result.blank) return undefined;
  const how = format === 'auto' ? `recognised as ${result.format}` : `read as --format ${result.format}`;
  const skips = result.skipped > 0 ? `${result.skipped} record(s) skipped (${result.skippedKinds.slice(0, 3).map((k) => `${k.count} with ${k.field}: ${k.reason}`).join('; ')})` : 'no record skipped';
  const others = REPLAY_FORMATS.filter((f) => f !== 'auto' && f !== result.format).join(', ');
  return `${file}: nothing could be read: ${how}, expecting ${formatDescription(result.format)}; 0 events, ${skips}. If another program wrote it, name its format with --format (${others})`;
}
