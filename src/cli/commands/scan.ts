import { formatSkipped } from '../../core/events';
import { groupIncidents, type Incident } from '../../core/incidents';
import { exportConfigured, type Seen } from '../../watch/otelConfig';
import { LockTimeoutError, readTextIfExists } from '../../state/atomicFile';
import { asPublisher, readOtelQueue, writeOtelQueue } from '../../state/otelQueue';
import { StopAllFile } from '../../state/stopAllFile';
import { PATHS } from '../../state/workspace';
import { WorkspaceMonitor } from '../../watch/workspaceMonitor';
import type { CommandContext } from '../context';
import { EXIT, findingDetailJson, formatIncident, incidentJson, json, paint, plain } from '../io';

/** Reads every log of the workspace once and prints the findings and the STOP_ALL state. */
export async function scanCommand(ctx: CommandContext): Promise<number> {
  const monitor = new WorkspaceMonitor(ctx.ws, ctx.config, process.env, undefined, undefined, { lastly: true });
  await monitor.poll();
  const stop = await new StopAllFile(ctx.ws).read();
  const active = monitor.active();
  const activeEpisodes = new Set(active.map((f) => f.episode));
  const raised = [...monitor.lastly];
  // History findings are re-derived on each read: make sure the active ones are listed. (A set,
  // not raised.some() per finding: that was quadratic, minutes for a workspace of many loops.)
  const listed = new Set(raised.map((r) => r.episode));
  for (const f of active) {
    if (listed.has(f.episode)) continue;
    listed.add(f.episode);
    raised.push(f);
  }
  const incidents = groupIncidents(raised);
  const going = new Set(incidents.filter((inc) => inc.findings.some((f) => activeEpisodes.has(f.episode))));
  await exportIncidents(ctx, [...going]);
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
        incidents: incidents.map((inc) => ({ ...incidentJson(inc, (f) => index.get(f) ?? -1), active: going.has(inc) })),
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
    io.out(`Loops     ${incidents.length} (${going.size} active), from ${raised.length} finding(s)\n`);
    for (const inc of incidents) io.out(`${formatIncident(io, inc)}${going.has(inc) ? '' : `\n         ${paint(io, 'dim', '(over: the pattern has since been broken)')}`}\n`);
    if (raised.length === 0) io.out(paint(io, 'green', 'No loops detected.\n'));
  }
  return active.some((f) => f.action === 'halt') ? EXIT.loop : EXIT.ok;
}

/** Where scan remembers what it sent (so that a loop still going on is not sent as new at every run). */
const EXPORTED = `${PATHS.guardianDir}/exported-incidents.json`;

/** The longest scan waits on an endpoint, in all: a dead or slow one never holds it up longer. */
const EXPORT_WAIT_MS = 1500;

/**
 * With an OTLP endpoint configured (`OTEL_EXPORTER_OTLP_ENDPOINT` …), the incidents going on are
 * sent as OpenTelemetry log records: those new since the last scan, those that grew, and those
 * over since (src/watch/incidentExport.ts), after those an earlier scan could not send. A record
 * is said sent only when the endpoint accepted it; until then it waits in the workspace's queue
 * (src/state/otelQueue.ts) for the next scan. One publisher at a time per workspace: when another
 * is at work, this one leaves everything to the next.
 */
async function exportIncidents(ctx: CommandContext, going: readonly Incident[]): Promise<void> {
  if (!exportConfigured(process.env)) return;
  try {
    await asPublisher(ctx.ws, () => publish(ctx, going), 1);
  } catch (err) {
    if (!(err instanceof LockTimeoutError)) throw err;
    ctx.io.err('OpenTelemetry: another publisher is at work in this workspace: left to the next scan\n');
  }
}

async function publish(ctx: CommandContext, going: readonly Incident[]): Promise<void> {
  const { IncidentExporter, MAX_QUEUED } = await import('../../watch/incidentExport');
  let seen: Record<string, Seen> = {};
  try {
    const text = await readTextIfExists(ctx.ws.path(EXPORTED));
    const parsed = text !== undefined ? (JSON.parse(text) as unknown) : undefined;
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) seen = parsed as Record<string, Seen>;
  } catch {
    // Unreadable: every incident going on is sent as new.
  }
  // A scan the hook started to publish the loop it refused says so (src/hook/publish.ts).
  const source = process.env.LOOP_GUARDIAN_OTEL_SOURCE === 'hook' ? 'hook' : 'cli';
  const exporter = new IncidentExporter({ source, workspace: ctx.ws.root, seen, queued: await readOtelQueue(ctx.ws) });
  exporter.update(going);
  const made = exporter.made;
  const result = await exporter.flush(EXPORT_WAIT_MS);
  const waiting = exporter.pending().length;
  const dropped = exporter.dropped > 0 ? `; ${exporter.dropped} oldest record(s) dropped (at most ${MAX_QUEUED} wait)` : '';
  const outcome = result.error === undefined ? (result.accepted > 0 ? `, sent${result.accepted > made.opened + made.grew + made.ended ? ` (with ${result.accepted - made.opened - made.grew - made.ended} left from before)` : ''}` : '') : `, not sent (${result.error}): ${waiting} record(s) wait for the next scan`;
  ctx.io.err(`OpenTelemetry: ${made.opened} loop(s) opened, ${made.grew} grew, ${made.ended} ended${outcome}${dropped}\n`);
  try {
    // The queue first: a scan stopped between the two writes sends a record twice, never loses one.
    await writeOtelQueue(ctx.ws, exporter.pending());
    await ctx.ws.writeAtomic(EXPORTED, `${JSON.stringify(exporter.seenState())}\n`);
  } catch (err) {
    ctx.io.err(`warning: ${EXPORTED}: not written (${(err as Error).message})\n`);
  }
}
