// Settings → what the backend needs. Plain functions, no `vscode` import (unit-tested in node).

import * as fs from 'node:fs';
import * as path from 'node:path';
import { BackendCommand } from './backend';
import { Agent, AgentEntry, AgentOption, AgentOptions } from './wire';

export const ELIZA_ID = 'symposium-eliza';
const ELIZA: Agent = { eliza: { deterministic: false } };

/** One entry of the `symposium.agents` setting. */
export interface AgentSetting {
  id: string;
  name: string;
  command: string;
  args?: string[];
  env?: Record<string, string>;
  /** The agent's own options for every conversation ({mode, effort, ...}), by option id or category. */
  options?: AgentOptions;
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
    } else if (entry.options !== undefined && !(isObject(entry.options) && Object.values(entry.options).every((v) => typeof v === 'string' || typeof v === 'boolean'))) {
      problems.push(`${where}: "options" must map option names to strings or booleans; ignored`);
    } else {
      agents.push({
        id: entry.id,
        name: typeof entry.name === 'string' && entry.name ? entry.name : entry.id,
        command: entry.command,
        args: entry.args ?? [],
        env: entry.env ?? {},
        ...(entry.options && Object.keys(entry.options).length ? { options: entry.options } : {}),
      });
    }
  }
  return { agents, problems };
}

/**
 * Where an agent's keys come from (the keychain, `keys.ts`): set once at activation. They go in the
 * agent's environment, over its `env` setting, and only in what is sent to the backend: never in a
 * setting (docs/usage.md, "Keys").
 */
let keysOf: (agentId: string) => Record<string, string> = () => ({});
export function useKeys(source: (agentId: string) => Record<string, string>): void {
  keysOf = source;
}

export function wireAgent(agent: AgentSetting): Agent {
  const env = { ...(agent.env ?? {}), ...keysOf(agent.id) };
  return {
    mcp_server: {
      name: agent.name,
      command: agent.command,
      args: agent.args ?? [],
      env: Object.entries(env).map(([name, value]) => ({ name, value })),
    },
  };
}

export function wireAgentEntries(agents: AgentSetting[]): AgentEntry[] {
  return agents.map((agent) => ({
    id: agent.id,
    name: agent.name,
    agent: wireAgent(agent),
    // The defaults the model's own controls show (docs/usage.md, "The agent's own choices").
    ...(agent.options && Object.keys(agent.options).length ? { options: agent.options } : {}),
  }));
}

/** The agent definition a chat request for `modelId` carries. */
export function agentForModel(modelId: string, agents: AgentSetting[]): Agent | undefined {
  return modelRequest(modelId, agents)?.agent;
}

/**
 * What a chat request for `modelId` carries: the agent definition, and the agent's options: those in
 * its settings, and the model a model entry (`<agent id>/<model value>`) names.
 */
export function modelRequest(modelId: string, agents: AgentSetting[]): { id: string; agent: Agent; agentOptions: AgentOptions } | undefined {
  if (modelId === ELIZA_ID) {
    return { id: ELIZA_ID, agent: ELIZA, agentOptions: {} };
  }
  const exact = agents.find((a) => a.id === modelId);
  if (exact) {
    return { id: exact.id, agent: wireAgent(exact), agentOptions: { ...exact.options } };
  }
  // The longest agent id that, with a slash, begins the model id: ids may contain slashes too.
  const owner = agents
    .filter((a) => modelId.startsWith(`${a.id}/`) && modelId.length > a.id.length + 1)
    .sort((a, b) => b.id.length - a.id.length)[0];
  return owner && { id: owner.id, agent: wireAgent(owner), agentOptions: { ...owner.options, model: modelId.slice(owner.id.length + 1) } };
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
export function backendCommand(settings: BackendSettings, env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): BackendCommand {
  let argv = splitCommandLine(settings.command, platform);
  if (argv.length === 0) {
    const script = findOnPath('symposium', env.PATH ?? '', platform, env.PATHEXT ?? '');
    argv = script ? [script] : ['python3', '-I', '-m', 'symposium'];
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

/** What the extension can start on Windows without a shell, in PATHEXT's order: `.cmd` and `.bat`
 * files only run through cmd.exe, and Node refuses to spawn them without one since its 2024 security
 * fix (EINVAL), so a bare name never finds them (a `python.bat` shim is passed over). */
const SPAWNABLE = ['.com', '.exe'];

/** The file names `name` may have on `platform`: on Windows `name` with each extension of PATHEXT
 * that can be spawned (`python` is `python.exe`, never an extension-less file or a `.cmd` beside it),
 * or `name` itself when it has an extension (`npm.cmd`, looked for as such); elsewhere `name`. */
export function executableNames(name: string, platform: NodeJS.Platform = process.platform, pathext = process.env.PATHEXT ?? ''): string[] {
  if (platform !== 'win32') {
    return [name];
  }
  if (path.extname(name)) {
    return [name];
  }
  const exts = (pathext || '.COM;.EXE').split(';').map((e) => e.trim().toLowerCase()).filter((e) => SPAWNABLE.includes(e));
  return [...new Set(exts.length ? exts : ['.exe'])].map((e) => name + e);
}

/** The first file on `pathValue` that `name` names (see `executableNames`); PATH's separator is
 * the platform's (`;` on Windows), and on Windows no execute bit is asked for. */
export function findOnPath(name: string, pathValue: string, platform: NodeJS.Platform = process.platform, pathext = process.env.PATHEXT ?? ''): string | undefined {
  const windows = platform === 'win32';
  for (const dir of pathValue.split(windows ? ';' : ':')) {
    if (!dir) {
      continue;
    }
    for (const file of executableNames(name, platform, pathext)) {
      const candidate = path.join(windows ? dir.replace(/^"(.*)"$/, '$1') : dir, file);
      try {
        if (!windows) {
          fs.accessSync(candidate, fs.constants.X_OK);
        }
        if (fs.statSync(candidate).isFile()) {
          return candidate;
        }
      } catch {
        // not there
      }
    }
  }
  return undefined;
}

/**
 * Splits a command line on spaces; single or double quotes keep spaces, a backslash escapes a
 * character. On Windows a backslash is a path's separator and kept as it is (`C:\tools\agent.exe`).
 */
export function splitCommandLine(line: string, platform: NodeJS.Platform = process.platform): string[] {
  const escapes = platform !== 'win32';
  const words: string[] = [];
  let word: string | undefined;
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === quote) {
        quote = undefined;
      } else if (escapes && c === '\\' && quote === '"' && i + 1 < line.length) {
        word += line[++i];
      } else {
        word += c;
      }
    } else if (c === '"' || c === "'") {
      quote = c;
      word ??= '';
    } else if (escapes && c === '\\' && i + 1 < line.length) {
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
export function joinCommandLine(words: string[], platform: NodeJS.Platform = process.platform): string {
  if (platform === 'win32') {
    return words.map((w) => (w && !/[\s"']/.test(w) ? w : w.includes('"') ? `'${w}'` : `"${w}"`)).join(' ');
  }
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

/** One row of the value picker of an option in Manage Agents; `value` undefined: the agent's own default. */
export interface OptionValueItem {
  label: string;
  description?: string;
  detail?: string;
  value: string | boolean | undefined;
}

/**
 * The values to offer for one of the agent's options: first the agent's own default (what a session
 * starts with when the setting is unset), then each value. A mode that bypasses permissions is never the
 * first, never marked as the default, and says what it does.
 */
export function optionValueItems(option: AgentOption, setting: string | boolean | undefined): OptionValueItem[] {
  const chosen = (value: string | boolean | undefined) => (value === setting ? ' (set)' : '');
  const agentDefault = option.values.find((v) => v.value === option.current);
  const items: OptionValueItem[] = [{
    label: `The agent's default${chosen(undefined)}`,
    description: agentDefault && !agentDefault.bypassesPermissions ? agentDefault.name : undefined,
    value: undefined,
  }];
  if (option.type === 'boolean') {
    items.push({ label: `On${chosen(true)}`, value: true }, { label: `Off${chosen(false)}`, value: false });
    return items;
  }
  for (const v of option.values) {
    items.push(v.bypassesPermissions
      ? { label: `$(warning) ${v.name}${chosen(v.value)}`, description: 'bypasses permissions: the agent acts without asking you', detail: v.description || undefined, value: v.value }
      : { label: `${v.name}${chosen(v.value)}`, description: v.value !== v.name ? v.value : undefined, detail: v.description || undefined, value: v.value });
  }
  return items;
}

/** The key an option is set by in `symposium.agents[].options`: `mode` and `effort` for the well-known
 * categories (one setting fits every agent), else the option's own id. */
export function settingKey(option: Pick<AgentOption, 'id' | 'category'>): string {
  return option.category === 'mode' ? 'mode' : option.category === 'thought_level' ? 'effort' : option.id;
}

/** The agent's options with `key` set to `value` (removed when undefined). */
export function withOption(options: AgentOptions | undefined, key: string, value: string | boolean | undefined): AgentOptions {
  const updated = { ...options };
  if (value === undefined) {
    delete updated[key];
  } else {
    updated[key] = value;
  }
  return updated;
}
