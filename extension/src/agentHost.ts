// Copilot Chat's agent host (VS Code 1.141 and later): chat may run in a separate host that lists
// the models of extensions like this one only when `chat.agentHost.byokModels.enabled` is on, which
// it is not by default. There, Symposium's models would simply be missing from the picker, with no
// reason given; so the user is told once, with a button that turns the setting on. No `vscode`
// import: what it reads and does is passed in, so the unit tests drive it in plain node.

import { Log } from './backend';

export const AGENT_HOST_SINCE: [number, number] = [1, 141];
export const BYOK_SETTING = 'chat.agentHost.byokModels.enabled';
export const TURN_ON = 'Turn On';
export const NOT_NOW = 'Not Now';
/** Kept in the global state once the notice was shown. */
export const NOTICE_SHOWN = 'symposium.agentHostNoticeShown';

/** Whether this VS Code (its `vscode.version`, "1.141.0" or "1.141.0-insider") has the agent host. */
export function hasAgentHost(version: string): boolean {
  const [major, minor] = version.split(/[.-]/).map(Number);
  return major > AGENT_HOST_SINCE[0] || (major === AGENT_HOST_SINCE[0] && minor >= AGENT_HOST_SINCE[1]);
}

export interface AgentHostContext {
  version: string; // vscode.version
  /** The setting's value (undefined where VS Code does not know it). */
  byokModels(): boolean | undefined;
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

/**
 * Tells the user, once, when this VS Code has the agent host and the setting is off; turns the
 * setting on if they ask. What happened: 'not needed', 'shown before', 'turned on' or 'left off'.
 */
export async function agentHostNotice(context: AgentHostContext): Promise<'not needed' | 'shown before' | 'turned on' | 'left off'> {
  if (!hasAgentHost(context.version) || context.byokModels() === true) {
    return 'not needed';
  }
  if (context.shown()) {
    return 'shown before';
  }
  await context.markShown();
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
