// The agent catalogue as Add Agent and Update Agent read it: the ACP registry's `registry.json`,
// fetched from the registry's published copy when the saved one is older than `REFRESH_MS` and the
// registry can be reached, else the last copy fetched (while younger than `MAX_AGE_MS`), else the
// copy shipped in the extension. Our own knowledge of agents (`catalogue/overrides.json`) is applied
// to whichever it is, and the sha256 the catalogue build recorded for binaries the registry gives
// none for (docs/usage.md, "The catalogue"). A refresh never goes back to an older version than the
// shipped or saved copy lists (`neverOlder`). The format itself is `registry.ts`'s. No `vscode`
// import, so the unit tests run it in plain node.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { applyOverrides, CatalogueAgent, Floor, neverOlder, Overrides, parseRegistry, withOurKnowledge } from './registry';

export const REGISTRY_URL = 'https://cdn.agentclientprotocol.com/registry/v1/latest/registry.json';
const FETCH_TIMEOUT_MS = 5000;
const MAX_BYTES = 8 * 1024 * 1024;
/** A saved copy younger than this is used without asking the registry. */
export const REFRESH_MS = 6 * 60 * 60 * 1000;
/** A saved copy older than this is not used: the shipped one is. */
export const MAX_AGE_MS = 30 * 24 * 60 * 60 * 1000;

export interface Catalogue {
  agents: CatalogueAgent[];
  /** Where the list came from: the registry now, the copy saved when it last answered, or the shipped copy. */
  source: 'registry' | 'saved' | 'shipped';
  /** Why the registry was not used, when it was not. */
  note?: string;
}

export interface LoadOptions {
  url: string; // empty: do not ask the registry
  shipped: string; // the catalogue file in the extension
  saved: string; // where the last registry answer is kept
  /** Our overrides (catalogue/overrides.json); absent: none. */
  overrides?: string;
  timeoutMs?: number;
  /** Ask the registry even when the saved copy is younger than `REFRESH_MS` (the update command). */
  refresh?: boolean;
  now?: number;
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

function readJson(file: string): unknown {
  return JSON.parse(fs.readFileSync(file, 'utf8'));
}

/** The catalogue to offer: the registry's (saved when fetched), else the saved copy, else the shipped one; our overrides applied. */
export async function loadCatalogue(options: LoadOptions): Promise<Catalogue> {
  let overrides: Overrides = {};
  if (options.overrides) {
    try {
      overrides = readJson(options.overrides) as Overrides;
    } catch (error) {
      options.log?.warn(`catalogue: ${options.overrides} could not be read (${error instanceof Error ? error.message : String(error)}); no overrides`);
    }
  }
  let shippedJson: unknown;
  try {
    shippedJson = readJson(options.shipped);
  } catch {
    // said below if nothing else serves
  }
  const shipped = parseRegistry(applyOverrides(shippedJson, overrides)).agents;
  const finish = (agents: CatalogueAgent[]) => withOurKnowledge(agents, overrides, shipped);
  const floor: Floor = { json: shippedJson, label: 'the catalogue shipped with Symposium' };
  const readSaved = (): unknown => {
    try {
      return readJson(options.saved);
    } catch {
      return undefined;
    }
  };
  /** `json` gone no further back than `floors`, with what was kept said in the log. */
  const forward = (json: unknown, floors: Floor[]) => {
    const { json: merged, kept } = neverOlder(json, floors);
    kept.forEach((k) => options.log?.info(`catalogue: ${k}`));
    return merged;
  };
  const now = options.now ?? Date.now();
  const age = (file: string) => {
    try {
      return now - fs.statSync(file).mtimeMs;
    } catch {
      return Infinity;
    }
  };
  const savedAge = age(options.saved);
  let note: string | undefined;
  const fresh = savedAge < REFRESH_MS && !options.refresh;
  if (options.url && !fresh) {
    try {
      const answer = await fetchJson(options.url, options.timeoutMs ?? FETCH_TIMEOUT_MS);
      // Saved as offered: a later refresh goes no further back than this one either.
      const json = forward(answer, [floor, { json: readSaved(), label: 'the copy saved when the registry last answered' }]);
      const { agents, problems } = parseRegistry(applyOverrides(json, overrides));
      problems.forEach((p) => options.log?.info(`catalogue: ${p}`));
      if (!agents.length) {
        throw new Error('it lists no agent we can install');
      }
      fs.mkdirSync(path.dirname(options.saved), { recursive: true, mode: 0o700 });
      fs.writeFileSync(`${options.saved}.tmp`, JSON.stringify(json), { mode: 0o600 });
      fs.renameSync(`${options.saved}.tmp`, options.saved);
      return { agents: finish(agents), source: 'registry' };
    } catch (error) {
      const reason = error instanceof Error ? (error.name === 'TimeoutError' ? `no answer in ${(options.timeoutMs ?? FETCH_TIMEOUT_MS) / 1000} s` : error.cause instanceof Error ? error.cause.message : error.message) : String(error);
      note = `the registry (${options.url}) could not be read: ${reason}`;
      options.log?.warn(`catalogue: ${note}`);
    }
  } else if (!options.url) {
    note = 'symposium.catalogue.url is empty';
  }
  if (savedAge < MAX_AGE_MS) {
    try {
      const { agents } = parseRegistry(applyOverrides(forward(readJson(options.saved), [floor]), overrides));
      if (agents.length) {
        return { agents: finish(agents), source: 'saved', note: note ?? `saved ${Math.round(savedAge / 60_000)} minutes ago` };
      }
    } catch {
      // not readable: the shipped copy
    }
  } else if (savedAge !== Infinity) {
    note = `${note ?? ''}${note ? '; ' : ''}the copy saved from the registry is older than ${MAX_AGE_MS / 86_400_000} days`;
  }
  if (shipped.length) {
    return { agents: finish(shipped), source: 'shipped', note };
  }
  throw new Error(`No agent catalogue: ${note ?? ''}; and the one shipped with the extension (${options.shipped}) cannot be read`);
}
