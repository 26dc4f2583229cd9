// Copilot Chat's agent host: chat may run in a separate host that lists the models of extensions
// like this one only when `chat.agentHost.byokModels.enabled` is on, which it is not by default.
// There, Symposium's models would simply be missing from the picker, with no reason given; so the
// user is told once. Where the host is is read from the setting itself, not from a version: VS
// Code 1.139 (code-server's) has the host and the setting already. In a remote window (code-server,
// SSH, WSL, a container) extension models cannot reach the host at all: the setting is synced only
// to a desktop host, and the bridge to extension models exists only in desktop VS Code; there the
// notice says where Symposium's models work instead, with nothing to turn on. No `vscode` import:
// what it reads and does is passed in, so the unit tests drive it in plain node.

import { Log } from './backend';

export const BYOK_SETTING = 'chat.agentHost.byokModels.enabled';
export const TURN_ON = 'Turn On';
export const NOT_NOW = 'Not Now';
/** Kept in the global state once the notice was shown. */
export const NOTICE_SHOWN = 'symposium.agentHostNoticeShown';

export interface AgentHostContext {
  version: string; // vscode.version, for the log
  /** Whether this VS Code knows the setting (it has the agent host): the setting has a default. */
  knowsSetting(): boolean;
  /** The setting's value (undefined where it is not set). */
  byokModels(): boolean | undefined;
  /** `vscode.env.remoteName` ('ssh-remote', 'wsl', 'dev-container', ...), or 'web' for a browser window
   * served by code-server (`vscode.env.uiKind` Web); undefined in a local desktop window. */
  remote: string | undefined;
  /** Sets it on, in the user's settings. */
  enable(): Thenable<void>;
  shown(): boolean;
  markShown(): Thenable<void> | void;
  /** An information message with buttons; resolves with the one chosen. */
  ask(message: string, ...buttons: string[]): Thenable<string | undefined>;
  log: Log;
}

export const NOTICE =
  `This VS Code can run Copilot Chat in an agent host, which lists models of extensions like Symposium only when the setting ${BYOK_SETTING} is on (it is off). `
  + `${TURN_ON} sets it in your user settings, so Symposium's agents appear in the model picker there too.`;

export const REMOTE_NOTICE =
  'This VS Code can run Copilot Chat in an agent host, but in a remote window (code-server, SSH, WSL, a container) the agent host cannot reach '
  + `models of extensions like Symposium, whatever ${BYOK_SETTING} says: it reaches them only in desktop VS Code. `
  + 'Symposium\'s models work in the chat\'s Local harness here.';

export type AgentHostOutcome = 'not needed' | 'shown before' | 'turned on' | 'left off' | 'told remote';

/**
 * Tells the user, once, where this VS Code has the agent host: in a local window when the setting
 * is off (turning it on if they ask), in a remote window that the Local harness is where our
 * models work.
 */
export async function agentHostNotice(context: AgentHostContext): Promise<AgentHostOutcome> {
  if (!context.knowsSetting() || (context.remote === undefined && context.byokModels() === true)) {
    return 'not needed';
  }
  if (context.shown()) {
    return 'shown before';
  }
  await context.markShown();
  if (context.remote !== undefined) {
    context.log.info(`VS Code ${context.version} has Copilot Chat's agent host, which a remote window (${context.remote}) cannot give extension models: telling the user`);
    await context.ask(REMOTE_NOTICE);
    return 'told remote';
  }
  context.log.info(`VS Code ${context.version} has Copilot Chat's agent host and ${BYOK_SETTING} is off: telling the user`);
  const choice = await context.ask(NOTICE, TURN_ON, NOT_NOW);
  if (choice !== TURN_ON) {
    return 'left off';
  }
  try {
    await context.enable();
  } catch (error) {
    context.log.warn(`could not turn on ${BYOK_SETTING}: ${error instanceof Error ? error.message : String(error)}`);
    return 'left off';
  }
  context.log.info(`${BYOK_SETTING} turned on`);
  return 'turned on';
}
