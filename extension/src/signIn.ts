// Signing in to an agent from VS Code (docs/DESIGN.md, "Sign-in"): after a chat failed with
// `auth_required`, a notification with one button per sign-in method; a terminal method runs in a
// VS Code terminal (then the backend starts the agent afresh), an agent-handled one is started with
// `lm/authenticate`, its progress shown. A method that takes a key asks for it in a password box
// (the key box), keeps it in VS Code's secret storage (`keys.ts`) and hands it to the agent in its
// environment, then authenticates with it. Manage Agents uses the same actions, and Log Out.

import * as vscode from 'vscode';
import { Backend } from './backend';
import { checkKey, Keychain } from './keys';
import { buttons, refusedNote, SignInNeeded, signInPrompt, takesKey, terminalLaunch, withEnv } from './signInMethods';
import { Agent, METHOD_AUTHENTICATE, METHOD_LOGOUT, SignInMethod, SignInState } from './wire';

export class SignIn {
  private offered = new Set<string>(); // agents whose notification is showing: one at a time each

  constructor(
    private readonly backend: Backend,
    private readonly log: vscode.LogOutputChannel,
    private readonly keychain?: Keychain,
  ) {}

  /** A chat failed for want of a sign-in: offer the agent's methods (not awaited: the user takes their time). */
  offer(needed: SignInNeeded, agent: Agent, cwd?: string, agentId?: string): void {
    const clickable = buttons(needed.methods);
    if (this.offered.has(needed.agent)) {
      return;
    }
    this.offered.add(needed.agent);
    void vscode.window.showWarningMessage(signInPrompt(needed), ...clickable.map((m) => m.name)).then(async (choice) => {
      this.offered.delete(needed.agent);
      const method = clickable.find((m) => m.name === choice);
      if (method) {
        await this.run(needed.agent, method, agent, cwd, agentId);
      }
    });
  }

  /** Signs in with one method; true when it worked. `agentId`: the entry whose keys a key box keeps. */
  async run(agentName: string, method: SignInMethod, agent: Agent, cwd?: string, agentId?: string): Promise<boolean> {
    try {
      if (takesKey(method)) {
        const values = await this.askForKey(agentName, method, agentId);
        if (!values) {
          return false;
        }
        agent = withEnv(agent, values); // what the keychain now holds, as the next definition will carry it
      } else if (method.kind === 'terminal') {
        const code = await this.inTerminal(agentName, method, agent, cwd);
        if (code !== 0) {
          void vscode.window.showWarningMessage(`The sign-in to ${agentName} in the terminal did not finish${code === undefined ? '' : ` (exit code ${code})`}.`);
          return false;
        }
      }
      await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: method.kind === 'terminal' ? `Symposium: starting ${agentName} again` : `Symposium: ${agentName}: ${method.name}…`, cancellable: true },
        (_progress, token) => this.backend.request<SignInState>(METHOD_AUTHENTICATE, { agent, methodId: method.id, ...(cwd ? { cwd } : {}) }, abortOn(token)),
      );
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.log.error(`sign-in to ${agentName} with ${method.id} failed: ${message}`);
      void vscode.window.showErrorMessage(`The sign-in to ${agentName} failed: ${message}`);
      return false;
    }
    this.log.info(`signed in to ${agentName} with ${method.id}`);
    void vscode.window.showInformationMessage(`Signed in to ${agentName}: send your message again.`);
    return true;
  }

  /**
   * The key box: a password input per variable the method asks for, each kept in the keychain under
   * the agent's entry. Undefined when the user gives up (nothing is kept then) or there is nowhere to
   * keep it. A view test drives it as a user does: it waits for the quick input whose title is
   * `<agent>: <method>` and types into `.quick-input-widget input`, then presses Enter.
   */
  async askForKey(agentName: string, method: SignInMethod, agentId?: string): Promise<Record<string, string> | undefined> {
    if (!this.keychain || !agentId) {
      void vscode.window.showWarningMessage(`${agentName} takes a key, but is not one of your agents: add it with Symposium: Manage Agents first.`);
      return undefined;
    }
    const values: Record<string, string> = {};
    for (const name of method.askFor ?? []) {
      const kept = this.keychain.names(agentId).includes(name);
      const value = await vscode.window.showInputBox({
        title: `${agentName}: ${method.name}`,
        prompt: `${name} for ${agentName}${kept ? ' (replaces the one kept)' : ''}: kept in VS Code's secret storage, never in settings`,
        placeHolder: name,
        password: true,
        ignoreFocusOut: true,
        validateInput: (v) => checkKey(v),
      });
      if (value === undefined) {
        return undefined;
      }
      values[name] = value.trim();
    }
    await this.keychain.set(agentId, values);
    this.log.info(`kept ${Object.keys(values).join(', ')} for ${agentName} in the secret storage`);
    return values;
  }

  async logOut(agentName: string, agent: Agent): Promise<void> {
    try {
      await this.backend.request(METHOD_LOGOUT, { agent });
      void vscode.window.showInformationMessage(`Logged out of ${agentName}.`);
    } catch (error) {
      void vscode.window.showErrorMessage(`Could not log out of ${agentName}: ${error instanceof Error ? error.message : error}`);
    }
  }

  /** Runs the method's command in a terminal of its own; its exit code once the user closes it (or it ends). */
  private inTerminal(agentName: string, method: SignInMethod, agent: Agent, cwd?: string): Promise<number | undefined> {
    const launch = terminalLaunch(agentName, method, agent);
    if (!launch) {
      return Promise.resolve(undefined);
    }
    const refused = refusedNote([method]);
    if (refused) {
      this.log.warn(`sign-in to ${agentName}: ${refused}`);
      void vscode.window.showWarningMessage(`${agentName}: ${refused}`);
    }
    // The env goes to the process only: a terminal's options are never shown.
    const terminal = vscode.window.createTerminal({ ...launch, ...(cwd ? { cwd } : {}), isTransient: true });
    this.log.info(`sign-in to ${agentName}: running ${launch.shellPath} ${launch.shellArgs.join(' ')} in a terminal`);
    terminal.show();
    return new Promise((resolve) => {
      const closed = vscode.window.onDidCloseTerminal((t) => {
        if (t === terminal) {
          closed.dispose();
          resolve(t.exitStatus?.code);
        }
      });
    });
  }
}

function abortOn(token: vscode.CancellationToken): AbortSignal {
  const controller = new AbortController();
  token.onCancellationRequested(() => controller.abort());
  return controller.signal;
}
