// Signing in to an agent from VS Code (docs/DESIGN.md, "Sign-in"): after a chat failed with
// `auth_required`, a notification with one button per sign-in method; a terminal method runs in a
// VS Code terminal (then the backend starts the agent afresh), an agent-handled one is started with
// `lm/authenticate`, its progress shown. Manage Agents uses the same actions, and Log Out.

import * as vscode from 'vscode';
import { Backend } from './backend';
import { buttons, SignInNeeded, signInPrompt, terminalLaunch } from './signInMethods';
import { Agent, METHOD_AUTHENTICATE, METHOD_LOGOUT, SignInMethod, SignInState } from './wire';

export class SignIn {
  private offered = new Set<string>(); // agents whose notification is showing: one at a time each

  constructor(
    private readonly backend: Backend,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  /** A chat failed for want of a sign-in: offer the agent's methods (not awaited: the user takes their time). */
  offer(needed: SignInNeeded, agent: Agent, cwd?: string): void {
    const clickable = buttons(needed.methods);
    if (this.offered.has(needed.agent)) {
      return;
    }
    this.offered.add(needed.agent);
    void vscode.window.showWarningMessage(signInPrompt(needed), ...clickable.map((m) => m.name)).then(async (choice) => {
      this.offered.delete(needed.agent);
      const method = clickable.find((m) => m.name === choice);
      if (method) {
        await this.run(needed.agent, method, agent, cwd);
      }
    });
  }

  /** Signs in with one method; true when it worked. */
  async run(agentName: string, method: SignInMethod, agent: Agent, cwd?: string): Promise<boolean> {
    try {
      if (method.kind === 'terminal') {
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
