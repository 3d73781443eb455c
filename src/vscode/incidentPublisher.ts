import type * as vscode from 'vscode';
import type { IncidentExporter } from '../watch/incidentExport';
import { exportConfigured } from '../watch/otelConfig';
import type { FolderGuardian } from './folderGuardian';
import type { GuardianService } from './guardianService';

/**
 * Publishes the loops the editor follows as OpenTelemetry (src/watch/incidentExport.ts), when the
 * editor's environment names an OTLP endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT` …): one exporter per
 * folder, told the folder's open incidents at each change (it sends those opened, grown and
 * ended). The SDK is loaded only then; without an endpoint this does nothing at all.
 */
export class IncidentPublisher implements vscode.Disposable {
  private readonly exporters = new Map<FolderGuardian, Promise<IncidentExporter>>();
  private readonly subscription: vscode.Disposable | undefined;

  constructor(service: GuardianService, private readonly log: vscode.LogOutputChannel, env: NodeJS.ProcessEnv = process.env) {
    if (!exportConfigured(env)) return;
    this.log.info(`publishing loops as OpenTelemetry to ${env.OTEL_EXPORTER_OTLP_LOGS_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT}`);
    this.subscription = service.onDidChangeIncidents(({ guardian }) => void this.publish(guardian));
  }

  private async publish(guardian: FolderGuardian): Promise<void> {
    try {
      let exporter = this.exporters.get(guardian);
      if (exporter === undefined) {
        exporter = import('../watch/incidentExport').then(({ IncidentExporter }) => new IncidentExporter({ source: 'extension', workspace: guardian.folder.uri.fsPath }));
        this.exporters.set(guardian, exporter);
      }
      (await exporter).update(guardian.state.incidents.filter((i) => i.state === 'open'));
    } catch (err) {
      this.log.warn(`OpenTelemetry: not published (${(err as Error).message})`);
    }
  }

  dispose(): void {
    this.subscription?.dispose();
    for (const e of this.exporters.values()) void e.then((x) => x.shutdown()).catch(() => undefined);
  }
}
