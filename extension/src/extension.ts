// The extension's composition: it builds the pieces, passes each the others it uses, and registers
// them. What they do lives in their own files: the backend's client (`backend.ts`) and what the
// extension keeps about its process (`backendHost.ts`), the model provider (`provider.ts`), the
// warm-up (`warmup.ts`), the commands (`commands.ts`) and agent management (`agents/`).

import * as vscode from 'vscode';
import { registerAgentCommands } from './agents';
import { noticeIgnoredSettings } from './settingsNotice';
import { AgentActionTool } from './agentAction';
import { agentHostNotice, BYOK_SETTING, NOTICE_SHOWN } from './agentHost';
import { Backend } from './backend';
import { BackendReports, PrivateBackend, settings, workspaceCwd } from './backendHost';
import { registerCommands } from './commands';
import { agentForModel, ELIZA_ID, readAgents, useKeys } from './config';
import { Keychain, SECRET_KEY } from './keys';
import { AgentEdits, BEFORE_SCHEME, beforeProvider } from './edits';
import { SymposiumProvider } from './provider';
import { SignIn } from './signIn';
import { prepareParams, Warmup, WarmupStore } from './warmup';
import { AGENT_ACTION_TOOL, METHOD_MODELS_CHANGED } from './wire';

type Exchange = { direction: 'send' | 'recv'; message: any };

/** What `activate` returns: enough for the integration tests to watch and kill the backend. */
export interface SymposiumApi {
  readonly backendPid: number | undefined;
  readonly onDidExchange: vscode.Event<Exchange>;
  readonly onDidBackendExit: vscode.Event<number | undefined>;
}

/** The running backend, for `deactivate` (VS Code awaits what it returns; disposables are not awaited). */
let backend: Backend | undefined;

export function activate(context: vscode.ExtensionContext): SymposiumApi {
  const log = vscode.window.createOutputChannel('Symposium', { log: true });
  const storage = context.globalStorageUri.fsPath;
  const privateBackend = new PrivateBackend(
    { path: context.extensionPath, version: String(context.extension.packageJSON.version), storage },
    log,
  );
  const reports = new BackendReports(log);
  // The backend tells what happens to it through these; what is built on it (the warm-up, the
  // provider, the tests through the API) listens, so the backend is built before them.
  const exchanged = new vscode.EventEmitter<Exchange>();
  const exited = new vscode.EventEmitter<number | undefined>();
  const modelsChanged = new vscode.EventEmitter<void>();
  const current = new Backend(() => privateBackend.backendCommand(), log, {
    onStderr: (line) => reports.stderr(line),
    onStartFailure: (error) => reports.startFailed(error),
    onExit: (pid) => exited.fire(pid),
    onMessage: (direction, message) => {
      reports.spoke();
      exchanged.fire({ direction, message });
    },
    onNotification: (method) => {
      if (method === METHOD_MODELS_CHANGED) {
        modelsChanged.fire(); // an agent's models, context window or bytes per token: VS Code asks again
      }
    },
    whenReady: () => privateBackend.ensure(),
  });
  backend = current;
  const edits = new AgentEdits();
  // Agents' keys, from VS Code's secret storage: each agent's definition carries its own in its env.
  const keychain = new Keychain(context.secrets);
  useKeys((id) => keychain.of(id));
  const keysRead = keychain.load();
  const signIn = new SignIn(current, log, keychain);
  const provider = new SymposiumProvider(current, log, edits, signIn, keysRead);
  const warmup = new Warmup(current, lastModelStore(context.globalState), log);

  context.subscriptions.push(
    log,
    exchanged,
    exited,
    modelsChanged,
    provider,
    // Subscribed before the API is returned, so the warm-up hears each message and exit first.
    exchanged.event(({ direction, message }) => warmup.observe(direction, message)),
    exited.event(() => warmup.reset()),
    modelsChanged.event(() => provider.refresh()),
    // Another window kept or forgot a key: read them again, and the agents' definitions change with them.
    context.secrets.onDidChange((e) => {
      if (e.key === SECRET_KEY) {
        void keychain.load().then(() => provider.refresh());
      }
    }),
    vscode.lm.registerLanguageModelChatProvider('symposium', provider),
    vscode.lm.registerTool(AGENT_ACTION_TOOL, new AgentActionTool()),
    vscode.workspace.registerTextDocumentContentProvider(BEFORE_SCHEME, beforeProvider(edits)),
    ...registerCommands({ backend: current, privateBackend, provider, edits, log }),
    ...registerAgentCommands({ extensionPath: context.extensionPath, storage, backend: current, warmup, log, signIn, keychain }),
  );

  // Activated by a command rather than by a model lookup, VS Code would not list our models yet.
  provider.refresh();

  // In Copilot Chat's agent host our models are listed only when the user allows it, and never in a
  // remote window: said once.
  void agentHostNotice({
    version: vscode.version,
    knowsSetting: () => vscode.workspace.getConfiguration().inspect<boolean>(BYOK_SETTING)?.defaultValue !== undefined,
    byokModels: () => vscode.workspace.getConfiguration().get<boolean>(BYOK_SETTING),
    remote: vscode.env.remoteName ?? (vscode.env.uiKind === vscode.UIKind.Web ? 'web' : undefined),
    enable: () => vscode.workspace.getConfiguration().update(BYOK_SETTING, true, vscode.ConfigurationTarget.Global),
    shown: () => context.globalState.get<boolean>(NOTICE_SHOWN, false),
    markShown: () => context.globalState.update(NOTICE_SHOWN, true),
    ask: (message, ...buttons) => vscode.window.showInformationMessage(message, ...buttons),
    log,
  });

  // Machine settings written where this window cannot apply them: said once (docs/settings.md).
  void noticeIgnoredSettings(context, log).catch((error) => log.warn(`checking where the settings are: ${error}`));

  // The one-time setup starts now, not with the first request; then the model last used warms up.
  void Promise.all([privateBackend.ensure(), keysRead]).then(
    () => warmUpLastModel(warmup, context.globalState),
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

const LAST_MODEL = 'symposium.lastModel';

/** The model last used, kept across windows in the extension's global state. */
function lastModelStore(state: vscode.Memento): WarmupStore {
  return {
    lastModel: () => state.get<string>(LAST_MODEL),
    setLastModel: (modelId) => void state.update(LAST_MODEL, modelId),
  };
}

/** Warms up the model last used, if it is a configured agent's (Eliza needs none). */
function warmUpLastModel(warmup: Warmup, state: vscode.Memento): void {
  const last = state.get<string>(LAST_MODEL);
  const agent = last && last !== ELIZA_ID ? agentForModel(last, readAgents(settings().get('agents')).agents) : undefined;
  const params = last ? prepareParams(last, agent, workspaceCwd()) : undefined;
  if (params) {
    void warmup.prepare(params);
  }
}
