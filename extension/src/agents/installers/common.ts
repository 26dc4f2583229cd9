// What every installer shares: what it is given, what it returns, and the one rule its paths obey.
// No `vscode` import, so the unit tests run it in plain node.

import * as path from 'node:path';
import { Log } from '../../backend';
import { CatalogueAgent, Method } from '../registry';
import { Python } from '../../setup';
import { AuthMethod } from '../../wire';
import { NodeRuntime } from '../../runtimes';

export const RECORD = 'symposium-install.json';

/** What was installed, kept beside it. */
export interface InstallRecord {
  id: string;
  name: string;
  version: string;
  method: Method;
  source: string; // the npm / PyPI package spec, or the archive's URL
  sha256?: string; // of the archive (binary installs)
  /** What the archive's sha256 was checked against (binary installs): `unverified` when the catalogue had no hash. */
  verified?: 'registry' | 'recorded' | 'unverified';
  /** Whether npm ran the package's install scripts (npm installs). */
  installScripts?: boolean;
  command: string;
  args: string[];
  env: Record<string, string>;
  folder: string;
  installedAt: string;
  /** What the agent said when it was first started after install. */
  auth?: { ready: boolean; methods: AuthMethod[]; error?: string };
}

/** How big an install may be. The ratio bound catches a small archive that unpacks to a huge one
 * (a real binary compresses 2-5 times); the absolute ones, a huge download. */
export interface InstallLimits {
  downloadBytes: number;
  unpackedBytes: number;
  /** Unpacked bytes allowed per downloaded byte, above `unpackedBytes`' first `RATIO_FLOOR`. */
  ratio: number;
  entries: number; // files and folders in one archive
}

export const LIMITS: InstallLimits = { downloadBytes: 512 * 1024 * 1024, unpackedBytes: 2 * 1024 * 1024 * 1024, ratio: 20, entries: 100_000 };
/** Any archive may unpack to this much whatever its size (a small script with its data, say). */
const RATIO_FLOOR = 64 * 1024 * 1024;

/** The most an archive of `downloaded` bytes may unpack to. */
export function unpackedLimit(downloaded: number, limits: InstallLimits = LIMITS): number {
  return Math.min(limits.unpackedBytes, RATIO_FLOOR + limits.ratio * downloaded);
}

export interface InstallOptions {
  root: string; // <global storage>/agents
  /** The Python to build venvs and unpack archives with (found on demand). */
  python: () => Promise<Python>;
  /** What a PyPI package says it needs (`requires-python`), if it can be read; absent: not asked. */
  requiresPython?: (name: string, version: string) => Promise<string | undefined>;
  env?: NodeJS.ProcessEnv;
  log: Log;
  platform?: string;
  limits?: InstallLimits;
  /** VS Code's own Node and the npm the vsix carries, for npm agents where PATH has no Node new enough (absent: PATH only). */
  node?: NodeRuntime;
  /** The uv the vsix carries, for venvs and their installs. */
  uv?: string;
  /** A Python for a PyPI agent whose package needs a newer one than this machine has (uv's, `runtimes.ts`). */
  provision?: (request: string) => Promise<Python>;
}

/** What an installer returns: the record's part that depends on the distribution kind. */
export type Installed = Pick<InstallRecord, 'source' | 'sha256' | 'verified' | 'installScripts' | 'command' | 'args' | 'env'>;

/** One distribution kind: installs `agent` (its files into `building`, to be renamed to `folder`, unless
 * `inPlace`: a venv is built where it stays, `folder`). */
export interface Installer {
  install(agent: CatalogueAgent, building: string, folder: string, options: InstallOptions): Promise<Installed>;
  inPlace: boolean;
}

/** Whether `file` (resolved) lies strictly inside `folder` (resolved). */
export function inside(file: string, folder: string): boolean {
  const relative = path.relative(folder, file);
  return relative !== '' && relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative);
}
