// The agent catalogue: the ACP registry's `registry.json` (its own format: id, name, version,
// description, distribution with npx / uvx / per-platform binary), fetched from the registry when it
// can be reached, else the last copy fetched, else the copy shipped in the extension. No `vscode`
// import, so the unit tests run it in plain node.

import * as fs from 'node:fs';
import * as path from 'node:path';

export const REGISTRY_URL = 'https://cdn.agentclientprotocol.com/registry/v1/latest/registry.json';
const FETCH_TIMEOUT_MS = 5000;
const MAX_BYTES = 8 * 1024 * 1024;

export interface PackageDistribution {
  package: string; // an npm / PyPI package with its version (`@scope/name@1.2.3`, `name==1.2.3`), or a tarball / wheel URL
  args?: string[];
  env?: Record<string, string>;
}

export interface BinaryTarget {
  archive: string; // URL of an archive (zip, tar.gz, tar.bz2, tar.xz) or of the executable itself
  cmd: string; // the executable, relative to the unpacked archive
  args?: string[];
  env?: Record<string, string>;
  sha256?: string; // checked when given
}

export interface CatalogueAgent {
  id: string;
  name: string;
  version: string;
  description: string;
  repository?: string;
  website?: string;
  authors?: string[];
  license?: string;
  icon?: string;
  distribution: { npx?: PackageDistribution; uvx?: PackageDistribution; binary?: Record<string, BinaryTarget> };
}

export interface Catalogue {
  agents: CatalogueAgent[];
  /** Where the list came from: the registry now, the copy saved when it last answered, or the shipped copy. */
  source: 'registry' | 'saved' | 'shipped';
  /** Why the registry was not used, when it was not. */
  note?: string;
}

/** The registry's platform name for this machine (`linux-x86_64`, `darwin-aarch64`, ...). */
export function platformKey(platform: string = process.platform, arch: string = process.arch): string {
  const os = platform === 'win32' ? 'windows' : platform;
  const cpu = arch === 'x64' ? 'x86_64' : arch === 'arm64' ? 'aarch64' : arch;
  return `${os}-${cpu}`;
}

const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === 'string');
const isEnv = (v: unknown): v is Record<string, string> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((s) => typeof s === 'string');

function packageDistribution(value: unknown): PackageDistribution | undefined {
  const v = value as Partial<PackageDistribution> | undefined;
  if (!v || typeof v.package !== 'string' || !v.package || (v.args !== undefined && !isStrings(v.args)) || (v.env !== undefined && !isEnv(v.env))) {
    return undefined;
  }
  return { package: v.package, args: v.args ?? [], env: v.env ?? {} };
}

function binaryTarget(value: unknown): BinaryTarget | undefined {
  const v = value as Partial<BinaryTarget> | undefined;
  if (!v || typeof v.archive !== 'string' || typeof v.cmd !== 'string' || !v.cmd || (v.args !== undefined && !isStrings(v.args)) || (v.env !== undefined && !isEnv(v.env))) {
    return undefined;
  }
  return { archive: v.archive, cmd: v.cmd, args: v.args ?? [], env: v.env ?? {}, ...(typeof v.sha256 === 'string' ? { sha256: v.sha256 } : {}) };
}

// What `shown` takes out of a name before VS Code shows it, by the backend's rules for what agents
// name (protocol/agent_text.py): controls and line breaks become spaces; bidi controls and
// invisible characters go (a bidi override can make `‮txt.exe` read as `exe.txt`).
const BREAKS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;
const INVISIBLE = /[\u061c\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb]|\udb40[\udc00-\udc7f]/g;
const MAX_SHOWN = 200;

/** A catalogue's text as the quick picks and the model picker show it: cleaned, at most 200 characters. */
export function shown(value: unknown): string {
  if (typeof value !== 'string') {
    return '';
  }
  const text = value.replace(BREAKS, ' ').replace(INVISIBLE, '').replace(/\s+/g, ' ').trim();
  const characters = Array.from(text); // by code point, as the backend counts: a cut never splits a pair
  return characters.length <= MAX_SHOWN ? text : `${characters.slice(0, MAX_SHOWN - 1).join('').trimEnd()}…`;
}

/**
 * The usable agents of a `registry.json`, and a complaint for each entry left out. Unknown fields
 * are ignored (the format grows); an id must be safe as a folder name; names and descriptions are
 * shown cleaned (`shown`): the catalogue is somebody else's file.
 */
export function parseRegistry(json: unknown): { agents: CatalogueAgent[]; problems: string[] } {
  const agents: CatalogueAgent[] = [];
  const problems: string[] = [];
  const list = (json as { agents?: unknown })?.agents;
  if (!Array.isArray(list)) {
    return { agents, problems: ['not an ACP registry: no "agents" list'] };
  }
  for (const [index, raw] of list.entries()) {
    const entry = raw as Partial<CatalogueAgent> & { distribution?: Record<string, unknown> };
    const where = typeof entry?.id === 'string' ? entry.id : `agents[${index}]`;
    if (!entry || typeof entry.id !== 'string' || !/^[a-z0-9][a-z0-9._-]*$/.test(entry.id) || entry.id.includes('..')) {
      problems.push(`${where}: no usable id`);
      continue;
    }
    if (!shown(entry.name) || typeof entry.version !== 'string' || !/^[0-9A-Za-z][0-9A-Za-z.+-]*$/.test(entry.version)) {
      problems.push(`${where}: needs a name and a version`);
      continue;
    }
    const dist = entry.distribution ?? {};
    const distribution: CatalogueAgent['distribution'] = {};
    const npx = packageDistribution(dist.npx);
    const uvx = packageDistribution(dist.uvx);
    if (npx) {
      distribution.npx = npx;
    }
    if (uvx) {
      distribution.uvx = uvx;
    }
    if (dist.binary && typeof dist.binary === 'object') {
      const targets: Record<string, BinaryTarget> = {};
      for (const [platform, target] of Object.entries(dist.binary as Record<string, unknown>)) {
        const parsed = binaryTarget(target);
        if (parsed) {
          targets[platform] = parsed;
        }
      }
      if (Object.keys(targets).length) {
        distribution.binary = targets;
      }
    }
    if (!distribution.npx && !distribution.uvx && !distribution.binary) {
      problems.push(`${where}: no distribution we can install`);
      continue;
    }
    agents.push({
      id: entry.id,
      name: shown(entry.name),
      version: entry.version,
      description: shown(entry.description),
      ...(typeof entry.repository === 'string' ? { repository: entry.repository } : {}),
      ...(typeof entry.website === 'string' ? { website: entry.website } : {}),
      ...(isStrings(entry.authors) ? { authors: entry.authors } : {}),
      ...(typeof entry.license === 'string' ? { license: entry.license } : {}),
      distribution,
    });
  }
  return { agents, problems };
}

export interface LoadOptions {
  url: string; // empty: do not ask the registry
  shipped: string; // the catalogue file in the extension
  saved: string; // where the last registry answer is kept
  timeoutMs?: number;
  log?: { info(m: string): void; warn(m: string): void };
}

/** Fetches `url` as JSON, bounded in time and in size: the size counted as it arrives, so an
 * endless or huge answer costs at most `MAX_BYTES` of memory, never all of it. */
async function fetchJson(url: string, timeoutMs: number): Promise<unknown> {
  const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), headers: { accept: 'application/json' } });
  if (!response.ok) {
    await response.body?.cancel();
    throw new Error(`${response.status} ${response.statusText}`.trim());
  }
  const tooLarge = () => new Error(`the answer is larger than ${MAX_BYTES / 1024 / 1024} MiB`);
  if (Number(response.headers.get('content-length') ?? 0) > MAX_BYTES) {
    await response.body?.cancel();
    throw tooLarge();
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = response.body!.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) {
      break;
    }
    size += value.length;
    if (size > MAX_BYTES) {
      await reader.cancel();
      throw tooLarge();
    }
    chunks.push(value);
  }
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

/** The catalogue to offer: the registry's when it answers (and is saved), else the saved copy, else the shipped one. */
export async function loadCatalogue(options: LoadOptions): Promise<Catalogue> {
  let note: string | undefined;
  if (options.url) {
    try {
      const json = await fetchJson(options.url, options.timeoutMs ?? FETCH_TIMEOUT_MS);
      const { agents, problems } = parseRegistry(json);
      problems.forEach((p) => options.log?.info(`catalogue: ${p}`));
      if (!agents.length) {
        throw new Error('it lists no agent we can install');
      }
      fs.mkdirSync(path.dirname(options.saved), { recursive: true, mode: 0o700 });
      fs.writeFileSync(`${options.saved}.tmp`, JSON.stringify(json), { mode: 0o600 });
      fs.renameSync(`${options.saved}.tmp`, options.saved);
      return { agents, source: 'registry' };
    } catch (error) {
      const reason = error instanceof Error ? (error.name === 'TimeoutError' ? `no answer in ${(options.timeoutMs ?? FETCH_TIMEOUT_MS) / 1000} s` : error.cause instanceof Error ? error.cause.message : error.message) : String(error);
      note = `the registry (${options.url}) could not be read: ${reason}`;
      options.log?.warn(`catalogue: ${note}`);
    }
  } else {
    note = 'symposium.catalogue.url is empty';
  }
  for (const [file, source] of [[options.saved, 'saved'], [options.shipped, 'shipped']] as const) {
    try {
      const { agents } = parseRegistry(JSON.parse(fs.readFileSync(file, 'utf8')));
      if (agents.length) {
        return { agents, source, note };
      }
    } catch {
      // not there, or not readable: the next one
    }
  }
  throw new Error(`No agent catalogue: ${note ?? ''}; and the one shipped with the extension (${options.shipped}) cannot be read`);
}

export type Method = 'npx' | 'uvx' | 'binary';

/** How we would install `agent` here: a binary for this platform first, then npm, then PyPI. */
export function installMethod(agent: CatalogueAgent, platform = platformKey()): Method | undefined {
  if (agent.distribution.binary?.[platform]) {
    return 'binary';
  }
  if (agent.distribution.npx) {
    return 'npx';
  }
  if (agent.distribution.uvx) {
    return 'uvx';
  }
  return undefined;
}
