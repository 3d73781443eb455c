import { exportConfigured } from '../watch/otelConfig';
import { publisherBusy } from '../state/otelQueue';

/**
 * With an OTLP endpoint configured, a loop the hook refuses is published as OpenTelemetry (its
 * incident, as `scan` sends it: src/watch/incidentExport.ts) by a `scan` started apart, detached,
 * its output dropped: the agent's call is answered at once, whatever the endpoint does (a slow or
 * unreachable endpoint never holds up the refusal). Only from the shipped CLI, whose path is this
 * process's script; a failure to start is nothing the agent hears of. Not while another publisher
 * is at work in the workspace (its lock): refusals in quick succession start one, not one each.
 */
export function publishInBackground(env: NodeJS.ProcessEnv, root: string): void {
  const script = process.argv[1];
  if (!exportConfigured(env) || script === undefined || !/(?:^|[\\/])cli\.js$/.test(script) || publisherBusy(root)) return;
  try {
    // Required here only: loading child_process loads net, which the hook otherwise never does.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { spawn } = require('node:child_process') as typeof import('node:child_process');
    const child = spawn(process.execPath, [script, 'scan', '--workspace', root], { detached: true, stdio: 'ignore', env: { ...env, LOOP_GUARDIAN_OTEL_SOURCE: 'hook' } });
    child.on('error', () => undefined);
    child.unref();
  } catch {
    // Not published: the refusal stands.
  }
}
