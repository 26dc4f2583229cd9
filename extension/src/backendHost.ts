// What the running extension keeps about its backend process, apart from the JSON-RPC client
// (`backend.ts`): the private venv it starts from, the command line that follows from the settings,
// and what the user has been told of it (its log lines, a failure to set up or to start). Each piece
// of state has one owner here, so `activate()` only wires them together.

import * as os from 'node:os';
import * as vscode from 'vscode';
import { BackendCommand, BackendError } from './backend';
import { backendCommand, joinCommandLine } from './config';
import { bundledRuntimes, provisionPython } from './runtimes';
import { bundledWheel, ensureBackendVenv, SetupError } from './setup';

export const settings = () => vscode.workspace.getConfiguration('symposium');

/** The first workspace folder when it is on this machine's disk: where agents run. */
export function workspaceCwd(): string | undefined {
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
  return folder?.scheme === 'file' ? folder.fsPath : undefined;
}

/**
 * The backend's private venv, from the wheel this build carries (none in a development build: then
 * the `symposium` script on PATH; `symposium.backend.command` overrides both). Holds the command the
 * venv gives, the setup under way (one at a time, shared by every caller), and whether its failure
 * was shown (once, until a setup succeeds or the Python setting changes).
 */
export class PrivateBackend {
  private command: string[] | undefined;
  private setup: Promise<void> | undefined;
  private failureShown = false;
  private readonly wheel: string | undefined;

  constructor(
    private readonly extension: { path: string; version: string; storage: string },
    private readonly log: vscode.LogOutputChannel,
  ) {
    this.wheel = bundledWheel(extension.path);
  }

  /** The full command line of the backend as the settings and the venv say now. */
  backendCommand(): BackendCommand {
    const configured = settings().get('backend.command', '');
    const command = backendCommand({
      command: configured || (this.command ? joinCommandLine(this.command) : ''),
      traceDir: settings().get('traceDir', ''),
      logLevel: settings().get('logLevel', 'info'),
    });
    return { ...command, cwd: workspaceCwd() ?? os.homedir() };
  }

  /** Sets the venv up if it is not (once per version); rejects when that fails (shown to the user once). */
  ensure(): Promise<void> {
    if (settings().get('backend.command', '') || !this.wheel) {
      return Promise.resolve();
    }
    this.setup ??= this.setUp(this.wheel);
    return this.setup;
  }

  /** `symposium.python` changed: checked again with the next start, and a failure shown again. */
  forget(): void {
    this.setup = undefined;
    this.failureShown = false;
  }

  private async setUp(wheel: string): Promise<void> {
    let finished = () => {};
    let report = (_message: string) => {};
    let setUp = false;
    const { uv } = bundledRuntimes(this.extension.path);
    try {
      this.command = await ensureBackendVenv({
        storage: this.extension.storage,
        wheel,
        extensionVersion: this.extension.version,
        pythonSetting: settings().get('python', ''),
        log: this.log,
        uv,
        provision: uv ? (request) => provisionPython(uv, this.extension.storage, request, process.env, this.log) : undefined,
        progress: (message) => report(message),
        onSetup: () => {
          setUp = true;
          void vscode.window.withProgress(
            { location: vscode.ProgressLocation.Notification, title: 'Symposium: setting up its backend (once)' },
            (progress) => {
              report = (message) => progress.report({ message });
              return new Promise<void>((resolve) => (finished = resolve));
            },
          );
        },
      });
      this.failureShown = false;
      if (setUp) {
        // With no GitHub account, VS Code's chat counts only the extension models it knew as the window
        // started: ours came after this setup (docs/usage.md, "The backend's private venv").
        void vscode.window
          .showInformationMessage('Symposium\'s backend is ready: it was set up once, in the extension\'s storage, and is set up again only after an update. If the Chat view asks you to sign in to GitHub, reload the window.', 'Reload Window')
          .then((choice) => choice && vscode.commands.executeCommand('workbench.action.reloadWindow'));
      }
    } catch (error) {
      this.setup = undefined; // the next request tries again
      if (!this.failureShown) {
        this.failureShown = true;
        void showSetupFailure(error, this.log);
      }
      throw error;
    } finally {
      finished();
    }
  }
}

/**
 * What the user sees of the backend process: its stderr in the Symposium log at each line's own
 * level (a continuation line keeps the level of the line before), and a failure to start shown once
 * until the backend speaks again.
 */
export class BackendReports {
  private level: 'info' | 'warn' | 'error' = 'info';
  private startFailureShown = false;

  constructor(private readonly log: vscode.LogOutputChannel) {}

  stderr(line: string): void {
    // Python's logging: "<date> <time> LEVEL name: message"; continuation lines keep the level.
    const level = /^\S+ \S+ (DEBUG|INFO|WARNING|ERROR|CRITICAL) /.exec(line)?.[1];
    if (level) {
      this.level = level === 'WARNING' ? 'warn' : level === 'ERROR' || level === 'CRITICAL' ? 'error' : 'info';
    }
    this.log[this.level](`[backend] ${line}`);
  }

  startFailed(error: BackendError): void {
    if (!this.startFailureShown) {
      this.startFailureShown = true;
      void showStartFailure(error, this.log);
    }
  }

  /** A message went to or came from the backend: it runs, so the next failure is news. */
  spoke(): void {
    this.startFailureShown = false;
  }
}

async function showSetupFailure(error: unknown, log: vscode.LogOutputChannel): Promise<void> {
  const message = error instanceof Error ? error.message : String(error);
  const fix = error instanceof SetupError ? error.fix : 'See the Symposium log.';
  log.error(`the backend's setup failed: ${message}${error instanceof SetupError && error.detail ? `\n${error.detail}` : ''}`);
  const choice = await vscode.window.showErrorMessage(`Symposium could not set up its backend: ${message}. ${fix}`, 'Choose a Python', 'Show Log');
  if (choice === 'Choose a Python') {
    await vscode.commands.executeCommand('workbench.action.openSettings', 'symposium.python');
  } else if (choice === 'Show Log') {
    log.show();
  }
}

async function showStartFailure(error: BackendError, log: vscode.LogOutputChannel): Promise<void> {
  const configured = settings().get('backend.command', '');
  const hint = configured
    ? 'Check the symposium.backend.command setting.'
    : 'The backend of the extension\'s private venv (or, in a build without one, the `symposium` script on PATH) did not start: see the log; symposium.python chooses the Python, symposium.backend.command another backend.';
  const lines = error.message.split('\n');
  const what = lines.length > 1 ? `${lines[0]} (${lines[lines.length - 1]})` : lines[0];
  const choice = await vscode.window.showErrorMessage(`${what}. ${hint}`, 'Open Setting', 'Show Log');
  if (choice === 'Open Setting') {
    await vscode.commands.executeCommand('workbench.action.openSettings', 'symposium.backend.command');
  } else if (choice === 'Show Log') {
    log.show();
  }
}
