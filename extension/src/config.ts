// Settings → what the backend needs. Plain functions, no `vscode` import (unit-tested in node).

import * as fs from 'node:fs';
import * as path from 'node:path';
import { BackendCommand } from './backend';
import { Agent, AgentEntry } from './wire';

export const ELIZA_ID = 'symposium-eliza';
const ELIZA: Agent = { eliza: { deterministic: false } };

/** One entry of the `symposium.agents` setting. */
export interface AgentSetting {
  id: string;
  name: string;
  command: string;
  args?: string[];
  env?: Record<string, string>;
}

/** The valid entries of `symposium.agents` (first of each id wins), and a complaint for each other one. */
export function readAgents(value: unknown): { agents: AgentSetting[]; problems: string[] } {
  const agents: AgentSetting[] = [];
  const problems: string[] = [];
  for (const [index, raw] of (Array.isArray(value) ? value : []).entries()) {
    const entry = raw as Partial<AgentSetting> | null;
    const where = `symposium.agents[${index}]`;
    if (!entry || typeof entry.id !== 'string' || !entry.id || typeof entry.command !== 'string' || !entry.command) {
      problems.push(`${where} needs a non-empty "id" and "command"; ignored`);
    } else if (entry.id.includes('\\')) {
      // Copilot keeps a response's marker as `<model id>\<marker>` and splits it at the backslash.
      problems.push(`${where}: the id "${entry.id}" contains a backslash, which Copilot Chat cannot handle in a model id; ignored`);
    } else if (entry.id === ELIZA_ID || agents.some((a) => a.id === entry.id)) {
      problems.push(`${where}: the id "${entry.id}" is already taken; ignored`);
    } else if (entry.args !== undefined && !(Array.isArray(entry.args) && entry.args.every((a) => typeof a === 'string'))) {
      problems.push(`${where}: "args" must be a list of strings; ignored`);
    } else if (entry.env !== undefined && !(isObject(entry.env) && Object.values(entry.env).every((v) => typeof v === 'string'))) {
      problems.push(`${where}: "env" must map names to strings; ignored`);
    } else {
      agents.push({
        id: entry.id,
        name: typeof entry.name === 'string' && entry.name ? entry.name : entry.id,
        command: entry.command,
        args: entry.args ?? [],
        env: entry.env ?? {},
      });
    }
  }
  return { agents, problems };
}

export function wireAgent(agent: AgentSetting): Agent {
  return {
    mcp_server: {
      name: agent.name,
      command: agent.command,
      args: agent.args ?? [],
      env: Object.entries(agent.env ?? {}).map(([name, value]) => ({ name, value })),
    },
  };
}

export function wireAgentEntries(agents: AgentSetting[]): AgentEntry[] {
  return agents.map((agent) => ({ id: agent.id, name: agent.name, agent: wireAgent(agent) }));
}

/** The agent definition a chat request for `modelId` carries. */
export function agentForModel(modelId: string, agents: AgentSetting[]): Agent | undefined {
  if (modelId === ELIZA_ID) {
    return ELIZA;
  }
  const agent = agents.find((a) => a.id === modelId);
  return agent && wireAgent(agent);
}

export interface BackendSettings {
  command: string; // symposium.backend.command
  traceDir: string;
  logLevel: string;
}

/**
 * The backend's command line: the setting (split like a shell would, quotes kept together), else the
 * `symposium` script on PATH, else `python3 -m symposium`; global flags before `vscodelm`.
 */
export function backendCommand(settings: BackendSettings, env: NodeJS.ProcessEnv = process.env): BackendCommand {
  let argv = splitCommandLine(settings.command);
  if (argv.length === 0) {
    const script = findOnPath('symposium', env.PATH ?? '');
    argv = script ? [script] : ['python3', '-m', 'symposium'];
  }
  const args = [...argv.slice(1)];
  if (settings.logLevel) {
    args.push('--log-level', settings.logLevel);
  }
  args.push('vscodelm');
  if (settings.traceDir) {
    args.push('--trace-dir', settings.traceDir);
  }
  return { command: argv[0], args };
}

export function findOnPath(name: string, pathValue: string): string | undefined {
  for (const dir of pathValue.split(path.delimiter)) {
    if (!dir) {
      continue;
    }
    const candidate = path.join(dir, name);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      if (fs.statSync(candidate).isFile()) {
        return candidate;
      }
    } catch {
      // not there
    }
  }
  return undefined;
}

/** Splits a command line on spaces; single or double quotes keep spaces, a backslash escapes a character. */
export function splitCommandLine(line: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === quote) {
        quote = undefined;
      } else if (c === '\\' && quote === '"' && i + 1 < line.length) {
        word += line[++i];
      } else {
        word += c;
      }
    } else if (c === '"' || c === "'") {
      quote = c;
      word ??= '';
    } else if (c === '\\' && i + 1 < line.length) {
      word = (word ?? '') + line[++i];
    } else if (/\s/.test(c)) {
      if (word !== undefined) {
        words.push(word);
        word = undefined;
      }
    } else {
      word = (word ?? '') + c;
    }
  }
  if (word !== undefined) {
    words.push(word);
  }
  return words;
}

/** The inverse of `splitCommandLine`: quotes only the words that need it. */
export function joinCommandLine(words: string[]): string {
  return words.map((w) => (w && !/[\s"'\\]/.test(w) ? w : `'${w.replace(/'/g, `'"'"'`)}'`)).join(' ');
}

/** `NAME=VALUE` words (as split by `splitCommandLine`) → an environment; returns an error for a bad word. */
export function parseEnv(line: string): Record<string, string> | string {
  const env: Record<string, string> = {};
  for (const word of splitCommandLine(line)) {
    const eq = word.indexOf('=');
    if (eq <= 0) {
      return `"${word}" is not NAME=VALUE`;
    }
    env[word.slice(0, eq)] = word.slice(eq + 1);
  }
  return env;
}

export function formatEnv(env: Record<string, string>): string {
  return joinCommandLine(Object.entries(env).map(([name, value]) => `${name}=${value}`));
}

/** A new agent id from its name: lowercase words joined by '-', made unique. */
export function agentId(name: string, taken: string[]): string {
  const base = name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '') || 'agent';
  let id = base;
  for (let n = 2; id === ELIZA_ID || taken.includes(id); n++) {
    id = `${base}-${n}`;
  }
  return id;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
