import * as os from 'node:os';
import * as vscode from 'vscode';
import { AgentActionTool } from './agentAction';
import { Backend, BackendError } from './backend';
import { backendCommand } from './config';
import { continueSession } from './continue';
import { manageAgents } from './manage';
import { SymposiumProvider } from './provider';
import { AGENT_ACTION_TOOL, METHOD_MODELS_CHANGED } from './wire';

/** What `activate` returns: enough for the integration tests to watch and kill the backend. */
export interface SymposiumApi {
  readonly backendPid: number | undefined;
  readonly onDidExchange: vscode.Event<{ direction: 'send' | 'recv'; message: any }>;
  readonly onDidBackendExit: vscode.Event<number | undefined>;
}

let backend: Backend | undefined;

export function activate(context: vscode.ExtensionContext): SymposiumApi {
  const log = vscode.window.createOutputChannel('Symposium', { log: true });
  const exchanged = new vscode.EventEmitter<{ direction: 'send' | 'recv'; message: any }>();
  const exited = new vscode.EventEmitter<number | undefined>();
  const settings = () => vscode.workspace.getConfiguration('symposium');
  let failureShown = false;
  let backendLevel: 'info' | 'warn' | 'error' = 'info';

  const current = new Backend(
    () => {
      const command = backendCommand({
        command: settings().get('backend.command', ''),
        traceDir: settings().get('traceDir', ''),
        logLevel: settings().get('logLevel', 'info'),
      });
      const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
      return { ...command, cwd: folder?.scheme === 'file' ? folder.fsPath : os.homedir() };
    },
    log,
    {
      onStderr: (line) => {
        // Python's logging: "<date> <time> LEVEL name: message"; continuation lines keep the level.
        const level = /^\S+ \S+ (DEBUG|INFO|WARNING|ERROR|CRITICAL) /.exec(line)?.[1];
        if (level) {
          backendLevel = level === 'WARNING' ? 'warn' : level === 'ERROR' || level === 'CRITICAL' ? 'error' : 'info';
        }
        log[backendLevel](`[backend] ${line}`);
      },
      onStartFailure: (error) => {
        if (!failureShown) {
          failureShown = true;
          void showStartFailure(error, log);
        }
      },
      onExit: (pid) => exited.fire(pid),
      onMessage: (direction, message) => {
        failureShown = false;
        exchanged.fire({ direction, message });
      },
      onNotification: (method) => {
        if (method === METHOD_MODELS_CHANGED) {
          provider.refresh(); // an agent's models, context window or bytes per token: VS Code asks again
        }
      },
    },
  );
  backend = current;
  const provider = new SymposiumProvider(current, log);

  context.subscriptions.push(
    log,
    exchanged,
    exited,
    provider,
    vscode.lm.registerLanguageModelChatProvider('symposium', provider),
    vscode.lm.registerTool(AGENT_ACTION_TOOL, new AgentActionTool()),
    vscode.commands.registerCommand('symposium.manageAgents', () => manageAgents(current)),
    vscode.commands.registerCommand('symposium.continueSession', () => continueSession(current, log)),
    vscode.commands.registerCommand('symposium.showLog', () => log.show()),
    vscode.commands.registerCommand('symposium.restartBackend', async () => {
      await current.stop('The Symposium backend was restarted');
      provider.refresh();
      log.info('backend restarted by the user; it starts again with the next request');
    }),
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      if (['symposium.backend.command', 'symposium.traceDir', 'symposium.logLevel'].some((s) => event.affectsConfiguration(s))) {
        await current.stop('The Symposium backend was restarted because its settings changed');
        provider.refresh();
      } else if (event.affectsConfiguration('symposium.agents')) {
        provider.refresh();
      }
    }),
  );

  // Activated by a command rather than by a model lookup, VS Code would not list our models yet.
  provider.refresh();

  return {
    get backendPid() {
      return current.pid;
    },
    onDidExchange: exchanged.event,
    onDidBackendExit: exited.event,
  };
}

export function deactivate(): Promise<void> | undefined {
  return backend?.stop('VS Code is shutting down');
}

async function showStartFailure(error: BackendError, log: vscode.LogOutputChannel): Promise<void> {
  const configured = vscode.workspace.getConfiguration('symposium').get('backend.command', '');
  const hint = configured
    ? 'Check the symposium.backend.command setting.'
    : 'Neither the `symposium` script on PATH nor `python3 -m symposium` works: install Symposium or set symposium.backend.command.';
  const lines = error.message.split('\n');
  const what = lines.length > 1 ? `${lines[0]} (${lines[lines.length - 1]})` : lines[0];
  const choice = await vscode.window.showErrorMessage(`${what}. ${hint}`, 'Open Setting', 'Show Log');
  if (choice === 'Open Setting') {
    await vscode.commands.executeCommand('workbench.action.openSettings', 'symposium.backend.command');
  } else if (choice === 'Show Log') {
    log.show();
  }
}
