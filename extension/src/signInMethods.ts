// An agent's sign-in as the backend describes it (docs/DESIGN.md, "Sign-in"): read from an
// `auth_required` error's data or `lm/prepareModel`'s `signIn`, and turned into what VS Code shows
// (one button per method) and runs (a terminal's options). No `vscode` import: unit-tested in node.

import { Agent, SignInMethod } from './wire';

/** What an `auth_required` failure says: the agent's name and how it can be signed in to. */
export interface SignInNeeded {
  agent: string;
  message: string;
  methods: SignInMethod[];
}

/** The sign-in an error asks for; undefined when it is another failure. */
export function signInNeeded(error: unknown): SignInNeeded | undefined {
  const data = (error as { data?: unknown })?.data as { kind?: unknown; agent?: unknown; methods?: unknown } | undefined;
  if (!data || data.kind !== 'auth_required' || !Array.isArray(data.methods)) {
    return undefined;
  }
  const methods = data.methods.filter(isMethod);
  const message = error instanceof Error ? error.message : String(error);
  return { agent: typeof data.agent === 'string' ? data.agent : 'The agent', message, methods };
}

function isMethod(value: unknown): value is SignInMethod {
  const m = value as SignInMethod;
  return !!m && typeof m.id === 'string' && typeof m.name === 'string' && (m.kind === 'terminal' || m.kind === 'agent' || m.kind === 'env_var');
}

/** Whether signing in with a method takes a key the user types (the key box): the backend names what it asks for. */
export function takesKey(method: SignInMethod): boolean {
  return !!method.askFor?.length;
}

/**
 * The methods a user can click: a terminal log-in, one the agent handles, or a key typed in the key
 * box (an env_var method, or an agent method the agent facts say reads a key). One per name.
 */
export function buttons(methods: SignInMethod[]): SignInMethod[] {
  const seen = new Set<string>();
  return methods.filter((m) => {
    if ((m.kind === 'env_var' && !takesKey(m)) || (m.kind === 'terminal' && !m.terminal) || seen.has(m.name)) {
      return false;
    }
    seen.add(m.name);
    return true;
  });
}

/** What the chat's notification says: the agent needs a sign-in, with one button per method. */
export function signInPrompt(needed: SignInNeeded): string {
  const clickable = buttons(needed.methods);
  const refused = refusedNote(needed.methods);
  return `${needed.agent} needs you to sign in${clickable.length ? ': pick how (an API key is kept in VS Code\'s secret storage)' : ''}.${refused ? ` ${refused}` : ''}`;
}

/**
 * What the user is told of the variables the backend refused to let these methods set (it decides:
 * protocol/acp/auth.py, `may_set`); empty when none was.
 */
export function refusedNote(methods: SignInMethod[]): string {
  const names = [...new Set(methods.flatMap((m) => (Array.isArray(m.refused) ? m.refused.filter((n) => typeof n === 'string') : [])))].sort();
  return names.length ? `Its sign-in asked to set ${names.join(', ')}, which Symposium does not set: only API keys, tokens, base URLs and what the agent documents.` : '';
}

/** The agent definition with values added to its environment (a key just typed, before it is read back). */
export function withEnv(agent: Agent, values: Record<string, string>): Agent {
  if (!('mcp_server' in agent)) {
    return agent;
  }
  const env = [...agent.mcp_server.env.filter((v) => !(v.name in values)), ...Object.entries(values).map(([name, value]) => ({ name, value }))];
  return { mcp_server: { ...agent.mcp_server, env } };
}

export interface TerminalLaunch {
  name: string;
  shellPath: string;
  shellArgs: string[];
  env: Record<string, string>;
}

/**
 * A terminal method as VS Code's terminal runs it: the command the backend named (the agent's own,
 * with the method's arguments), in the agent's environment (its configured `env`, which the error
 * never carries) plus the method's variables. Undefined for a method that is not run in a terminal.
 */
export function terminalLaunch(agentName: string, method: SignInMethod, agent: Agent): TerminalLaunch | undefined {
  if (method.kind !== 'terminal' || !method.terminal) {
    return undefined;
  }
  const configured = 'mcp_server' in agent ? Object.fromEntries(agent.mcp_server.env.map((v) => [v.name, v.value])) : {};
  return {
    name: `${agentName}: ${method.name}`,
    shellPath: method.terminal.command,
    shellArgs: [...method.terminal.args],
    env: { ...configured, ...method.terminal.env },
  };
}
