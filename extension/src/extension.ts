import * as os from 'node:os';
import * as vscode from 'vscode';
import { addAgent, agentsRoot } from './agents/addAgent';
import { AgentActionTool } from './agentAction';
import { Backend, BackendError } from './backend';
import { agentForModel, backendCommand, ELIZA_ID, joinCommandLine, readAgents } from './config';
import { continueSession } from './continue';
import { AgentEdits, BEFORE_SCHEME, beforeProvider, reviewEdits, revertEdits } from './edits';
import { addByHand, manageAgents } from './agents/manage';
import { SymposiumProvider } from './provider';
import { bundledWheel, ensureBackendVenv, findPython, SetupError } from './setup';
import { Warmup } from './warmup';
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
  const storage = context.globalStorageUri.fsPath;
  const workspaceCwd = () => {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    return folder?.scheme === 'file' ? folder.fsPath : undefined;
  };

  // The backend's private venv, from the wheel this build carries (none in a development build:
  // then the `symposium` script on PATH). symposium.backend.command overrides it.
  const wheel = bundledWheel(context.extensionPath);
  let privateBackend: string[] | undefined;
  let setup: Promise<void> | undefined;
  let setupFailureShown = false;
  const setUpBackend = (): Promise<void> => {
    if (settings().get('backend.command', '') || !wheel) {
      return Promise.resolve();
    }
    setup ??= (async () => {
      let finished = () => {};
      let setUp = false;
      try {
        privateBackend = await ensureBackendVenv({
          storage,
          wheel,
          extensionVersion: String(context.extension.packageJSON.version),
          pythonSetting: settings().get('python', ''),
          log,
          onSetup: () => {
            setUp = true;
            void vscode.window.withProgress(
              { location: vscode.ProgressLocation.Notification, title: 'Symposium: setting up its backend (once)' },
              (progress) => {
                progress.report({ message: 'a Python venv in the extension\'s storage, with the backend this version carries…' });
                return new Promise<void>((resolve) => (finished = resolve));
              },
            );
          },
        });
        setupFailureShown = false;
        if (setUp) {
          void vscode.window.showInformationMessage('Symposium\'s backend is ready: it was set up once, in the extension\'s storage, and is set up again only after an update.');
        }
      } catch (error) {
        setup = undefined; // the next request tries again
        if (!setupFailureShown) {
          setupFailureShown = true;
          void showSetupFailure(error, log);
        }
        throw error;
      } finally {
        finished();
      }
    })();
    return setup;
  };

  const current = new Backend(
    () => {
      const configured = settings().get('backend.command', '');
      const command = backendCommand({
        command: configured || (privateBackend ? joinCommandLine(privateBackend) : ''),
        traceDir: settings().get('traceDir', ''),
        logLevel: settings().get('logLevel', 'info'),
      });
      return { ...command, cwd: workspaceCwd() ?? os.homedir() };
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
      onExit: (pid) => {
        warmup.reset();
        exited.fire(pid);
      },
      onMessage: (direction, message) => {
        failureShown = false;
        warmup.observe(direction, message);
        exchanged.fire({ direction, message });
      },
      onNotification: (method) => {
        if (method === METHOD_MODELS_CHANGED) {
          provider.refresh(); // an agent's models, context window or bytes per token: VS Code asks again
        }
      },
      whenReady: setUpBackend,
    },
  );
  backend = current;
  const edits = new AgentEdits();
  const provider = new SymposiumProvider(current, log, edits);
  const warmup = new Warmup(
    current,
    {
      lastModel: () => context.globalState.get<string>('symposium.lastModel'),
      setLastModel: (modelId) => void context.globalState.update('symposium.lastModel', modelId),
    },
    log,
  );
  const agentsContext = {
    extensionPath: context.extensionPath,
    storage,
    log,
    warmup,
    python: () => findPython(settings().get('python', '')),
    addByHand,
  };

  context.subscriptions.push(
    log,
    exchanged,
    exited,
    provider,
    vscode.lm.registerLanguageModelChatProvider('symposium', provider),
    vscode.lm.registerTool(AGENT_ACTION_TOOL, new AgentActionTool()),
    vscode.commands.registerCommand('symposium.manageAgents', () => manageAgents(agentsRoot(storage), current)),
    vscode.commands.registerCommand('symposium.addAgent', () => addAgent(agentsContext)),
    vscode.commands.registerCommand('symposium.continueSession', () => continueSession(current, log)),
    vscode.commands.registerCommand('symposium.showLog', () => log.show()),
    vscode.workspace.registerTextDocumentContentProvider(BEFORE_SCHEME, beforeProvider(edits)),
    vscode.commands.registerCommand('symposium.reviewEdits', () => reviewEdits(edits)),
    vscode.commands.registerCommand('symposium.revertEdits', () => revertEdits(edits)),
    vscode.commands.registerCommand('symposium.restartBackend', async () => {
      await current.stop('The Symposium backend was restarted');
      provider.refresh();
      log.info('backend restarted by the user; it starts again with the next request');
    }),
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      if (event.affectsConfiguration('symposium.python')) {
        setup = undefined; // checked again with the next start
        setupFailureShown = false;
      }
      if (['symposium.backend.command', 'symposium.python', 'symposium.traceDir', 'symposium.logLevel'].some((s) => event.affectsConfiguration(s))) {
        await current.stop('The Symposium backend was restarted because its settings changed');
        provider.refresh();
      } else if (event.affectsConfiguration('symposium.agents')) {
        provider.refresh();
      }
    }),
  );

  // Activated by a command rather than by a model lookup, VS Code would not list our models yet.
  provider.refresh();

  // The one-time setup starts now, not with the first request; then the model last used warms up.
  void setUpBackend().then(
    () => {
      const last = context.globalState.get<string>('symposium.lastModel');
      const agent = last && last !== ELIZA_ID ? agentForModel(last, readAgents(settings().get('agents')).agents) : undefined;
      if (last && agent) {
        const cwd = workspaceCwd();
        void warmup.prepare({ modelId: last, agent, ...(cwd ? { cwd } : {}) });
      }
    },
    () => undefined, // shown already
  );

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
  const configured = vscode.workspace.getConfiguration('symposium').get('backend.command', '');
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
