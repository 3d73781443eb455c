import type * as vscode from 'vscode';
import { LockTimeoutError } from '../state/atomicFile';
import { asPublisher, readOtelQueue, writeOtelQueue } from '../state/otelQueue';
import type { IncidentExporter, QueuedRecord } from '../watch/incidentExport';
import { exportConfigured } from '../watch/otelConfig';
import type { FolderGuardian } from './folderGuardian';
import type { GuardianService } from './guardianService';

/** How often records an endpoint did not accept are tried again. */
const RETRY_MS = 30_000;
/** The longest one send waits on the endpoint. */
const SEND_WAIT_MS = 5_000;

/**
 * Publishes the loops the editor follows as OpenTelemetry (src/watch/incidentExport.ts), when the
 * editor's environment names an OTLP endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT` …): one exporter per
 * folder, told the folder's open incidents at each change (it queues those opened, grown and
 * ended), and sending what waits then and every RETRY_MS while anything does; what the endpoint
 * has not accepted is kept in the folder's queue (src/state/otelQueue.ts), which `scan` shares, under
 * the folder's publisher lock. Without an endpoint this does nothing at all.
 */
export class IncidentPublisher implements vscode.Disposable {
  private readonly exporters = new Map<FolderGuardian, Promise<IncidentExporter>>();
  private readonly subscription: vscode.Disposable | undefined;
  private readonly retry: NodeJS.Timeout | undefined;

  constructor(service: GuardianService, private readonly log: vscode.LogOutputChannel, env: NodeJS.ProcessEnv = process.env) {
    if (!exportConfigured(env)) return;
    this.log.info(`publishing loops as OpenTelemetry to ${env.OTEL_EXPORTER_OTLP_LOGS_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT}`);
    this.subscription = service.onDidChangeIncidents(({ guardian }) => void this.publish(guardian, true));
    this.retry = setInterval(() => {
      for (const guardian of this.exporters.keys()) void this.publish(guardian, false);
    }, RETRY_MS);
    this.retry.unref();
  }

  private async publish(guardian: FolderGuardian, changed: boolean): Promise<void> {
    try {
      let exporter = this.exporters.get(guardian);
      if (exporter === undefined) {
        exporter = import('../watch/incidentExport').then(({ IncidentExporter }) => new IncidentExporter({ source: 'extension', workspace: guardian.folder.uri.fsPath }));
        this.exporters.set(guardian, exporter);
      }
      const x = await exporter;
      if (changed) x.update(guardian.state.incidents.filter((i) => i.state === 'open'));
      await asPublisher(
        guardian.ws,
        async () => {
          // The folder's queue is the one kept: what an earlier run (or a scan) left waiting goes first.
          x.adopt(await readOtelQueue<QueuedRecord>(guardian.ws));
          if (x.pending().length === 0) return;
          const result = await x.flush(SEND_WAIT_MS);
          if (result.error !== undefined) this.log.warn(`OpenTelemetry: not sent (${result.error}); ${x.pending().length} record(s) wait`);
          await writeOtelQueue(guardian.ws, x.takePending());
        },
        1000,
      );
    } catch (err) {
      if (err instanceof LockTimeoutError) return;
      this.log.warn(`OpenTelemetry: not published (${(err as Error).message})`);
    }
  }

  dispose(): void {
    this.subscription?.dispose();
    if (this.retry !== undefined) clearInterval(this.retry);
  }
}
