// Agents' API keys in VS Code's secret storage (the OS keychain), never in settings.json
// (docs/usage.md, "Keys"). One secret holds every agent's keys, by agent id and variable name; the
// extension keeps a copy in memory, so an agent's definition is built with its keys without waiting.
// The keys reach the agent in its environment only: the backend gets them in the agent definition over
// its stdin, and redacts them from its traces, logs and error data as it does every env value.
// No `vscode` import: unit-tested in node with any store that has SecretStorage's get/store/delete.

/** What the keychain needs of VS Code's SecretStorage. */
export interface SecretStore {
  get(key: string): PromiseLike<string | undefined>;
  store(key: string, value: string): PromiseLike<void>;
  delete(key: string): PromiseLike<void>;
}

/** The one secret the keys live in, and the longest key kept (a real one is under 200 characters). */
export const SECRET_KEY = 'symposium.agentKeys';
export const MAX_KEY = 4096;

type Keys = Record<string, Record<string, string>>; // agent id → variable name → key

export class Keychain {
  private keys: Keys = {};
  private loading: Promise<void> | undefined;

  constructor(private readonly store: SecretStore) {}

  /** Reads the keys (again: another window may have changed them); `ready` resolves once read. */
  load(): Promise<void> {
    this.loading = Promise.resolve(this.store.get(SECRET_KEY)).then(
      (text) => {
        this.keys = parseKeys(text);
      },
      () => undefined, // no keychain here (a Linux without a secret service): no keys
    );
    return this.loading;
  }

  get ready(): Promise<void> {
    return this.loading ?? this.load();
  }

  /** The keys kept for an agent, by variable name (a copy). */
  of(agentId: string): Record<string, string> {
    return { ...(this.keys[agentId] ?? {}) };
  }

  /** The variables an agent has a key kept for: names only, to show. */
  names(agentId: string): string[] {
    return Object.keys(this.keys[agentId] ?? {}).sort();
  }

  /** Keeps (or replaces) an agent's keys. */
  async set(agentId: string, values: Record<string, string>): Promise<void> {
    await this.ready;
    const next = { ...this.keys, [agentId]: { ...(this.keys[agentId] ?? {}), ...values } };
    await this.store.store(SECRET_KEY, JSON.stringify(next));
    this.keys = next;
  }

  /** Forgets one of an agent's keys, or all of them. */
  async forget(agentId: string, name?: string): Promise<void> {
    await this.ready;
    const rest = { ...(this.keys[agentId] ?? {}) };
    if (name === undefined) {
      Object.keys(rest).forEach((n) => delete rest[n]);
    } else {
      delete rest[name];
    }
    const next = { ...this.keys };
    if (Object.keys(rest).length) {
      next[agentId] = rest;
    } else {
      delete next[agentId];
    }
    if (Object.keys(next).length) {
      await this.store.store(SECRET_KEY, JSON.stringify(next));
    } else {
      await this.store.delete(SECRET_KEY);
    }
    this.keys = next;
  }
}

function parseKeys(text: string | undefined): Keys {
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : {};
  } catch {
    return {};
  }
  const keys: Keys = {};
  for (const [id, values] of Object.entries(isObject(parsed) ? parsed : {})) {
    if (isObject(values)) {
      const kept = Object.entries(values).filter(([name, value]) => isEnvName(name) && typeof value === 'string' && checkKey(value) === undefined);
      if (kept.length) {
        keys[id] = Object.fromEntries(kept) as Record<string, string>;
      }
    }
  }
  return keys;
}

/** What is wrong with a key the user typed; undefined when it can be kept. */
export function checkKey(value: string): string | undefined {
  if (!value.trim()) {
    return 'Enter the key';
  }
  if (/[\0\r\n]/.test(value)) {
    return 'A key is one line';
  }
  return value.length > MAX_KEY ? `A key is at most ${MAX_KEY} characters` : undefined;
}

export function isEnvName(name: string): boolean {
  return /^[A-Za-z_][A-Za-z0-9_]{0,127}$/.test(name);
}

// Names that say they hold a secret, and values shaped like a vendor's key (as protocol/shared/redact.py's).
const SECRET_NAME = /(api_?key|access_?key|secret|token|passw(or)?d|credential|auth)/i;
const KEY_SHAPE = /^(?:sk-|rk-|pk-|gh[pousr]_|github_pat_|glpat-|xox[abprs]-|AKIA|ASIA|AIza|hf_|npm_|eyJ)[A-Za-z0-9_.-]{8,}/;

/**
 * The entries of an agent's `env` setting that look like secrets (by name or by shape, or named
 * by one of its sign-in methods), to offer moving into the keychain. Short values (`1`, `true`) are
 * settings, not keys.
 */
export function secretsIn(env: Record<string, string>, keyNames: string[] = []): string[] {
  return Object.entries(env)
    .filter(([name, value]) => value.length >= 8 && (keyNames.includes(name) || SECRET_NAME.test(name) || KEY_SHAPE.test(value)))
    .map(([name]) => name)
    .sort();
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
