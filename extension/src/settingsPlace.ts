// Where Symposium's machine settings must be for a window to apply them (README, "Where the
// settings go"). `symposium.agents`, `symposium.backend.command`, `symposium.python`,
// `symposium.catalogue.url` are machine-scoped and `symposium.traceDir` machine-overridable: in a
// remote window (Remote-SSH, WSL, dev containers, Codespaces, code-server) VS Code reads them from the
// Remote settings and ignores them in the User settings; no window reads a machine-scoped one from a
// workspace. Writing is not the problem: `ConfigurationTarget.Global` is the User settings in a local
// window and, for a machine-scoped setting, the Remote settings in a remote one (VS Code's
// `toEditableConfigurationTarget`). Values a user put by hand where this window cannot apply them
// are: this module notices them, once, and says where they go. `ignoredSettings` is the pure decision.

import * as fs from 'node:fs';
import * as path from 'node:path';

export const MACHINE_SETTINGS: { key: string; scope: 'machine' | 'machine-overridable' }[] = [
  { key: 'agents', scope: 'machine' },
  { key: 'backend.command', scope: 'machine' },
  { key: 'python', scope: 'machine' },
  { key: 'catalogue.url', scope: 'machine' },
  { key: 'traceDir', scope: 'machine-overridable' },
];

export interface SettingPlace {
  key: string; // without the `symposium.` prefix
  scope: 'machine' | 'machine-overridable';
  /** What `inspect()` reports as applied: the user (in a remote window: Remote) value, the workspace value. */
  globalValue: unknown;
  workspaceValue: unknown;
  /** Whether the key is written in the User settings file this window ignores for it (remote windows). */
  inUserFile: boolean;
  /** Whether the key is written in a workspace settings file. */
  inWorkspaceFile: boolean;
}

export interface Ignored {
  keys: string[];
  message: string;
  /** The settings file to open for the fix. */
  open: 'remote' | 'user';
}

/**
 * The settings present where this window cannot apply them, and what to tell the user; undefined
 * when there are none. `remote` names the remote (vscode.env.remoteName), undefined in a local window.
 */
export function ignoredSettings(places: SettingPlace[], remote: string | undefined): Ignored | undefined {
  const name = (key: string) => `symposium.${key}`;
  if (remote) {
    const keys = places.filter((p) => p.inUserFile && p.globalValue === undefined).map((p) => name(p.key));
    if (keys.length) {
      return {
        keys,
        open: 'remote',
        message: `${keys.join(', ')} ${keys.length > 1 ? 'are' : 'is'} in your User settings, which VS Code does not apply to machine settings in a remote window (${remote}). Put ${keys.length > 1 ? 'them' : 'it'} in the Remote settings (Preferences: Open Remote Settings); Add Agent and Manage Agents write there.`,
      };
    }
  }
  const keys = places.filter((p) => p.scope === 'machine' && p.inWorkspaceFile && p.workspaceValue === undefined).map((p) => name(p.key));
  if (keys.length) {
    return {
      keys,
      open: remote ? 'remote' : 'user',
      message: `${keys.join(', ')} ${keys.length > 1 ? 'are' : 'is'} in this workspace's settings, where VS Code ignores ${keys.length > 1 ? 'them' : 'it'}: a workspace cannot name programs to run. Put ${keys.length > 1 ? 'them' : 'it'} in your ${remote ? 'Remote' : 'User'} settings.`,
    };
  }
  return undefined;
}

/** Whether a settings file (JSON with comments) names `symposium.<key>` as a key; false when it cannot be read. */
export function fileNames(file: string, key: string): boolean {
  try {
    const text = fs.readFileSync(file, 'utf8');
    return new RegExp(`"symposium\\.${key.replace(/\./g, '\\.')}"\\s*:`).test(text);
  } catch {
    return false;
  }
}

/**
 * The User settings file a remote window ignores machine settings in, when it is on this machine:
 * beside the extension's global storage (`<data>/User/globalStorage/<id>` → `<data>/User/settings.json`),
 * as code-server keeps it. A Remote-SSH or WSL window's User settings are on the client, out of reach:
 * then nothing is found, and nothing is said.
 */
export function userSettingsFile(globalStorage: string): string {
  return path.join(path.dirname(path.dirname(globalStorage)), 'settings.json');
}

/** Whether the data folder holding `globalStorage` has Remote (machine) settings: a server's. */
export function serverDataFolder(globalStorage: string): boolean {
  return fs.existsSync(path.join(path.dirname(path.dirname(path.dirname(globalStorage))), 'Machine'));
}
